"""Correct stores with every capability, written to be subclassed one bug at a time.

Each step of an append or load is a method of its own, so a broken variant in
:mod:`tests.stores.broken` overrides exactly the step that carries its bug.
"""

import json

import redis

TRIM_ATTEMPTS = 100   # a trim retried this often while other writers keep changing the session gives up


class ListStore:
    """One Redis list per session, trimmed to the last N messages, with a sliding TTL."""

    def __init__(self, redis, namespace, max_messages, ttl):
        self.redis = redis
        self.namespace = namespace
        self.max_messages = max_messages
        self.ttl = ttl

    def key(self, session_id):
        return f"{self.namespace}messages:{session_id}"

    def encode(self, role, content):
        return json.dumps({"role": role, "content": content}, ensure_ascii=False)

    def decode(self, raw):
        return json.loads(raw)

    def push(self, pipe, key, raw):
        pipe.rpush(key, raw)

    def trim(self, pipe, key):
        pipe.ltrim(key, -self.max_messages, -1)

    def expire(self, pipe, key):
        pipe.expire(key, self.ttl)

    def append(self, session_id, role, content):
        key = self.key(session_id)
        with self.redis.pipeline(transaction=True) as pipe:
            self.push(pipe, key, self.encode(role, content))
            self.trim(pipe, key)
            self.expire(pipe, key)
            pipe.execute()

    def read(self, key):
        return self.redis.lrange(key, 0, -1)

    def get(self, session_id):
        return [self.decode(raw) for raw in self.read(self.key(session_id))]

    def clear(self, session_id):
        self.redis.delete(self.key(session_id))


class TokenStore:
    """One list per session of messages with their cost, and the session's running total beside it;
    while the total is over the budget the oldest are dropped (all of them when the newest alone is
    over), read and trimmed under WATCH. The list is read back only when the total is over the
    budget, so an append under an unbounded budget costs the same at any length. Both keys carry
    the session id as a hash tag, so that their transactions also run on a Redis Cluster."""

    def __init__(self, redis, namespace, max_tokens, count_tokens, ttl):
        self.redis = redis
        self.namespace = namespace
        self.max_tokens = max_tokens
        self.count_tokens = count_tokens
        self.ttl = ttl

    def key(self, session_id):
        return f"{self.namespace}tokens:{{{session_id}}}"

    def total_key(self, session_id):
        return f"{self.namespace}tokens-total:{{{session_id}}}"

    def over_budget(self, total):
        return total > self.max_tokens

    def how_many_to_drop(self, costs):
        total, drop = sum(costs), 0
        while drop < len(costs) and self.over_budget(total):
            total -= costs[drop]
            drop += 1
        return drop

    def append(self, session_id, role, content):
        key, total_key = self.key(session_id), self.total_key(session_id)
        record = {"role": role, "content": content, "tokens": self.count_tokens(content)}
        with self.redis.pipeline() as pipe:
            pipe.rpush(key, json.dumps(record, ensure_ascii=False))
            pipe.incrby(total_key, record["tokens"])
            total = pipe.execute()[1]
        if self.over_budget(total):
            self.trim(key, total_key)
        with self.redis.pipeline() as pipe:
            pipe.expire(key, self.ttl)
            pipe.expire(total_key, self.ttl)
            pipe.execute()

    def trim(self, key, total_key):
        """Drop the oldest while the total is over the budget: the list is read under WATCH and the
        trim runs in MULTI/EXEC, again if another writer changed the list in between."""
        for _ in range(TRIM_ATTEMPTS):
            with self.redis.pipeline() as pipe:
                try:
                    pipe.watch(key)
                    costs = [json.loads(raw)["tokens"] for raw in pipe.lrange(key, 0, -1)]
                    drop = self.how_many_to_drop(costs)
                    pipe.multi()
                    pipe.ltrim(key, drop, -1)
                    pipe.decrby(total_key, sum(costs[:drop]))
                    pipe.execute()
                    return
                except redis.WatchError:
                    continue
        raise RuntimeError(f"the session changed under each of {TRIM_ATTEMPTS} attempts to trim it")

    def get(self, session_id):
        return [json.loads(raw) for raw in self.redis.lrange(self.key(session_id), 0, -1)]

    def clear(self, session_id):
        self.redis.delete(self.key(session_id), self.total_key(session_id))
