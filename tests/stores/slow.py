"""Stores that are correct but slow, or would be slow if the suite handed them an expensive
counter: the run judges them on correctness and reports their speed as a finding; it never cuts
them off as hung (tests/end_to_end/test_hostile.py holds it to that)."""

import time
from pathlib import Path

import redis

from memory_regression.contract.profiles import resolve_counter
from tests.stores.correct import ListStore, TokenStore

UNBOUNDED = 10**11      # a budget above this is the one of a scenario that is not about tokens


class RewritesTheWholeHistory(ListStore):
    """Every append reads the whole history back and writes all of it again, trimmed to the
    window, under WATCH (a concurrent append makes it retry): correct, and quadratic (the 1,000th
    append moves 1,000 messages)."""

    def append(self, session_id, role, content):
        key = self.key(session_id)
        with self.redis.pipeline() as pipe:
            while True:
                pipe.watch(key)
                history = [*map(self.decode, pipe.lrange(key, 0, -1)), {"role": role, "content": content}]
                pipe.multi()
                pipe.delete(key)
                pipe.rpush(key, *(self.encode(m["role"], m["content"]) for m in history[-self.max_messages:]))
                self.expire(pipe, key)
                try:
                    pipe.execute()
                    return
                except redis.WatchError as conflict:
                    # redis-py raises WatchError too when the connection died during EXEC, which may have
                    # run: only a conflict is retried (redis.transaction() retries both, storing the
                    # message twice when EXEC's reply was lost)
                    if isinstance(conflict.__context__, (redis.ConnectionError, redis.TimeoutError)):
                        raise


class SleepsInEveryAppend(ListStore):
    """Every append takes 0.2 s: correct, each call far within the call timeout, and a scenario
    of many appends long."""

    def append(self, session_id, role, content):
        time.sleep(0.2)
        super().append(session_id, role, content)


class ChecksItsCounter(TokenStore):
    """Stands for the token stores that count their whole history at every append, which an
    expensive counter over an unbounded budget makes slow for nothing. It raises when built unless
    it was handed ``approx`` under an unbounded budget (a scenario not about tokens), and the
    profile's own counter under the profile's budget (the token-window scenario)."""

    def __init__(self, redis, namespace, max_tokens, count_tokens, ttl, profile):
        super().__init__(redis, namespace, max_tokens, count_tokens, ttl)
        wanted = (f"approx + {profile.per_message_overhead}/message" if max_tokens > UNBOUNDED
                  else resolve_counter(profile, None, Path.cwd()).description)
        if count_tokens.description != wanted:
            raise AssertionError(f"handed {count_tokens.description} under a budget of {max_tokens:,}, "
                                 f"not {wanted}")
