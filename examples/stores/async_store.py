"""An async store on redis.asyncio: keeps a window of messages per user, with a sliding TTL.

Shape: ``AsyncChatMemory(redis, window_size, ttl_seconds, key_prefix)`` with ``append_message`` and
``get_history(user_id, limit=None)``, all coroutines. The suite gives an async store a
``redis.asyncio`` client.
"""

import json


class AsyncChatMemory:
    def __init__(self, redis, window_size=50, ttl_seconds=86400, key_prefix="memory:"):
        self.redis = redis
        self.window_size = window_size
        self.ttl_seconds = ttl_seconds
        self.key_prefix = key_prefix

    def _key(self, user_id):
        return f"{self.key_prefix}chat:{user_id}"

    async def append_message(self, user_id, role, content):
        key = self._key(user_id)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.rpush(key, json.dumps({"role": role, "content": content}, ensure_ascii=False))
            pipe.ltrim(key, -self.window_size, -1)
            pipe.expire(key, self.ttl_seconds)
            await pipe.execute()

    async def get_history(self, user_id, limit=None):
        start = -limit if limit else 0
        return [json.loads(raw) for raw in await self.redis.lrange(self._key(user_id), start, -1)]

    async def clear_session(self, user_id):
        await self.redis.delete(self._key(user_id))
