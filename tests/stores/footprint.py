"""Broken stores only a footprint scenario catches: every load is right, and Redis holds more than
the loads show (every message ever appended, or a copy of the history per append)."""

import json

import redis

from tests.stores.correct import ListStore

FOOTPRINT = "test_storage_stays_within_the_window"
TOKEN_FOOTPRINT = "test_storage_stays_within_the_token_budget"
PER_MESSAGE = "test_storage_grows_with_the_messages_kept"


class TrimsOnlyWhenLoading(ListStore):
    """Pushes without trimming and trims when it loads: LTRIM to the window and LRANGE in one
    transaction, so that every load, and the session as a load leaves it, holds exactly the last N;
    between loads the session grows with every append (a chatbot that writes more than it reads
    grows without bound)."""

    def trim(self, pipe, key):
        """Nothing is trimmed when appending."""

    def read(self, key):
        with self.redis.pipeline(transaction=True) as pipe:
            pipe.ltrim(key, -self.max_messages, -1)
            pipe.lrange(key, 0, -1)
            return pipe.execute()[1]


class TokenBudgetOnlyWhenLoading:
    """A token budget applied to what a load returns (the newest messages whose cost fits), as
    llama-index's ``ChatMemoryBuffer`` does: Redis keeps every message ever appended."""

    def __init__(self, redis, namespace, max_tokens, count_tokens, ttl):
        self.redis, self.namespace, self.ttl = redis, namespace, ttl
        self.max_tokens, self.count_tokens = max_tokens, count_tokens

    def key(self, session_id):
        return f"{self.namespace}budget:{session_id}"

    def append(self, session_id, role, content):
        with self.redis.pipeline(transaction=True) as pipe:
            pipe.rpush(self.key(session_id), json.dumps({"role": role, "content": content}, ensure_ascii=False))
            pipe.expire(self.key(session_id), self.ttl)
            pipe.execute()

    def get(self, session_id):
        kept, total = [], 0
        for message in reversed([json.loads(raw) for raw in self.redis.lrange(self.key(session_id), 0, -1)]):
            total += self.count_tokens(message["content"])
            if total > self.max_tokens:
                break
            kept.append(message)
        return kept[::-1]

    def clear(self, session_id):
        self.redis.delete(self.key(session_id))


class KeepsEveryVersion:
    """A history with undo: each append stores the whole new history as one more version (a list of
    snapshots, the newest last, at most VERSIONS kept), and a load reads the newest. Every load is
    right; Redis holds up to VERSIONS copies of the history, each bigger than the last."""

    VERSIONS = 50
    ATTEMPTS = 1000   # of an append whose session another writer changed meanwhile

    def __init__(self, redis, namespace, ttl):
        self.redis, self.namespace, self.ttl = redis, namespace, ttl

    def key(self, session_id):
        return f"{self.namespace}versions:{session_id}"

    def append(self, session_id, role, content):
        key = self.key(session_id)
        with self.redis.pipeline(transaction=True) as pipe:
            for _attempt in range(self.ATTEMPTS):
                try:
                    pipe.watch(key)
                    history = [*json.loads(pipe.lindex(key, -1) or "[]"), {"role": role, "content": content}]
                    pipe.multi()
                    pipe.rpush(key, json.dumps(history, ensure_ascii=False))
                    pipe.ltrim(key, -self.VERSIONS, -1)
                    pipe.expire(key, self.ttl)
                    pipe.execute()
                    return
                except redis.WatchError as conflict:
                    # also raised when the connection died during EXEC, which may have run: not retried
                    if isinstance(conflict.__context__, (redis.ConnectionError, redis.TimeoutError)):
                        raise
        raise RuntimeError(f"the session changed under each of {self.ATTEMPTS} attempts to append")

    def get(self, session_id):
        return json.loads(self.redis.lindex(self.key(session_id), -1) or "[]")

    def clear(self, session_id):
        self.redis.delete(self.key(session_id))


# storage is a cost, not lost memory: these stores pass, warned by exactly these scenarios (failed under --strict)
WARNED_BY: dict[type, list[str]] = {TrimsOnlyWhenLoading: [FOOTPRINT], TokenBudgetOnlyWhenLoading: [TOKEN_FOOTPRINT],
                                    KeepsEveryVersion: [PER_MESSAGE]}
