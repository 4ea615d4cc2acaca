"""Stores that are correct but slow: tests/test_hostile.py holds the run to its verdicts on them."""

import time

from tests.stores.correct import ListStore


class SleepsInEveryAppend(ListStore):
    """Every append takes 0.2 s: correct, each call far within the call timeout, and a scenario
    of many appends long."""

    def append(self, session_id, role, content):
        time.sleep(0.2)
        super().append(session_id, role, content)

