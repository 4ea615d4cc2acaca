"""Stores that are correct but slow: tests/test_hostile.py holds the run to its verdicts on them."""

import time

from tests.stores.correct import ListStore


class RewritesTheWholeHistory(ListStore):
    """Every append reads the whole history back and writes all of it again, trimmed to the
    window: correct, and quadratic (the 1,000th append moves 1,000 messages)."""

    def append(self, session_id, role, content):
        key = self.key(session_id)
        history = [*map(self.decode, self.read(key)), {"role": role, "content": content}]
        with self.redis.pipeline(transaction=True) as pipe:
            pipe.delete(key)
            pipe.rpush(key, *(self.encode(m["role"], m["content"]) for m in history[-self.max_messages:]))
            self.expire(pipe, key)
            pipe.execute()


class SleepsInEveryAppend(ListStore):
    """Every append takes 0.2 s: correct, each call far within the call timeout, and a scenario
    of many appends long."""

    def append(self, session_id, role, content):
        time.sleep(0.2)
        super().append(session_id, role, content)

