"""Correct stores whose own client has a defect of its library: its failures must name the library,
with the fix, not blame the store (memory_regression/worker/clients.py)."""

import json

import redis.asyncio


class OwnAsyncClientFromUrl:
    """Builds its own ``redis.asyncio`` client from ``redis_url``, as the redis-py docs show, and uses
    only the client's own commands (its pool): under redis-py 8.1.0, maintenance notifications on,
    the first command after the server closed an idle connection fails."""

    def __init__(self, redis_url, namespace):
        self.redis = redis.asyncio.Redis.from_url(redis_url, decode_responses=True)
        self.namespace = namespace

    async def append(self, session_id, role, content):
        await self.redis.rpush(f"{self.namespace}{session_id}", json.dumps({"role": role, "content": content}))

    async def load(self, session_id):
        return [json.loads(raw) for raw in await self.redis.lrange(f"{self.namespace}{session_id}", 0, -1)]

    async def aclose(self):
        await self.redis.aclose()
