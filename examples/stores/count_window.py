"""A count-window store: keeps the last N messages of each session, trimmed atomically.

Shape: ``CountWindowStore(redis_client, max_history)`` with ``add_message``/``get_context``;
the optional ``ttl`` and ``namespace`` give it the TTL and namespace capabilities too.
"""

import json


class CountWindowStore:
    def __init__(self, redis_client, max_history, ttl=None, namespace="chat:"):
        if max_history < 1:
            raise ValueError("max_history must be at least 1")
        self.redis = redis_client
        self.max_history = max_history
        self.ttl = ttl
        self.namespace = namespace

    def _key(self, session_id):
        return f"{self.namespace}history:{session_id}"

    def add_message(self, session_id, role, content):
        key = self._key(session_id)
        with self.redis.pipeline(transaction=True) as pipe:  # MULTI/EXEC: push, trim, expire together
            pipe.rpush(key, json.dumps({"role": role, "content": content}, ensure_ascii=False))
            pipe.ltrim(key, -self.max_history, -1)
            if self.ttl:
                pipe.expire(key, self.ttl)
            pipe.execute()

    def get_context(self, session_id):
        return [json.loads(raw) for raw in self.redis.lrange(self._key(session_id), 0, -1)]

    def clear(self, session_id):
        self.redis.delete(self._key(session_id))
