"""A store that is correct but slow: only the latency scenario catches it, and only when a budget
is given (``CORPUS_ARGS``); without one, its latency is a finding, never a failure."""

import time

from tests.stores.correct import ListStore

LATENCY = "test_append_and_load_latency_against_the_redis_floor"
SLEEP_S = 0.02          # per append and per load: a p95 of at least 20 ms, whatever the machine
BUDGET = "append=10,load=10"


class SleepsPerCall(ListStore):
    """Sleeps 20 ms in every append and every load (a retry back-off on the happy path, a lock held
    too long, a second backend waited for): right, and slow."""

    CAUSE = r"append p95 [\d.]+ ms is over the budget of 10 ms"

    # under a budget of half its sleep (the runs of tests/verdicts/test_corpus.py): the budget applies to
    # the latency group alone, and the other groups' thousands of calls would take minutes
    CORPUS_ARGS = ("--latency-budget-ms", BUDGET, "--groups", "latency")

    def append(self, session_id, role, content):
        time.sleep(SLEEP_S)
        super().append(session_id, role, content)

    def get(self, session_id):
        time.sleep(SLEEP_S)
        return super().get(session_id)


CAUGHT_BY: dict[type, list[str]] = {SleepsPerCall: [LATENCY]}
