"""Stores that are right on one Redis server and wrong on a Redis Cluster: no scenario catches them
on a single server; every scenario that appends catches them with ``--redis cluster``.

``SessionMetaStore`` (and ``AsyncSessionMetaStore``) is the bug of langgraph-redis#25: one
transaction over two keys of a session that hash to different slots (CROSSSLOT).
``TaggedSessionMetaStore`` is its fix, the session id as a hash tag. ``PlainClientStore`` builds a
single-server client from ``redis_url``, which a cluster node answers with MOVED for the keys it
does not hold; ``ClusterURLStore`` is its fix, a cluster client built from ``redis_url``.
"""

import json

import redis as redis_py
from redis.cluster import RedisCluster

from tests.stores.correct import ListStore


class SessionMetaStore(ListStore):
    """Keeps beside each session's list a key with its message count (``...:<session>`` and
    ``...:<session>:meta``), updated in the append's MULTI/EXEC: the two keys hash to different
    slots, which a cluster refuses in one transaction."""

    def meta_key(self, session_id):
        return f"{self.key(session_id)}:meta"

    def append(self, session_id, role, content):
        key, meta = self.key(session_id), self.meta_key(session_id)
        with self.redis.pipeline(transaction=True) as pipe:
            self.push(pipe, key, self.encode(role, content))
            self.trim(pipe, key)
            pipe.hincrby(meta, "appended", 1)
            self.expire(pipe, key)
            self.expire(pipe, meta)
            pipe.execute()

    def clear(self, session_id):
        self.redis.delete(self.key(session_id), self.meta_key(session_id))


class TaggedSessionMetaStore(SessionMetaStore):
    """The fix: the session id in braces, a hash tag, so that both keys of a session share a slot."""

    def key(self, session_id):
        return f"{self.namespace}messages:{{{session_id}}}"


class PlainClientStore(ListStore):
    """Takes no client but ``redis_url``, and builds a ``redis.Redis`` from it: fine on one server; on
    a cluster, the node it reaches answers MOVED for every key another node holds."""

    def __init__(self, redis_url, namespace, max_messages, ttl):
        super().__init__(redis_py.Redis.from_url(redis_url, decode_responses=True), namespace, max_messages, ttl)

    def close(self):
        self.redis.close()


class ClusterURLStore(PlainClientStore):
    """What the MOVED hint tells :class:`PlainClientStore` to do: a ``RedisCluster`` from ``redis_url``,
    which needs a cluster wherever it is built, the scenarios' own servers included."""

    def __init__(self, redis_url, namespace, max_messages, ttl):
        ListStore.__init__(self, RedisCluster.from_url(redis_url, decode_responses=True), namespace, max_messages, ttl)


class AsyncSessionMetaStore:
    """:class:`SessionMetaStore` on ``redis.asyncio``: the same transaction over two slots."""

    def __init__(self, redis, namespace):
        self.redis, self.namespace = redis, namespace

    def key(self, session_id):
        return f"{self.namespace}messages:{session_id}"

    async def append(self, session_id, role, content):
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.rpush(self.key(session_id), json.dumps({"role": role, "content": content}, ensure_ascii=False))
            pipe.hincrby(f"{self.key(session_id)}:meta", "appended", 1)
            await pipe.execute()

    async def get(self, session_id):
        return [json.loads(raw) for raw in await self.redis.lrange(self.key(session_id), 0, -1)]
