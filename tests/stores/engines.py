"""Stores whose verdict depends on the engine: correct on one, broken on another. With
``--redis server,fakeredis`` the reports flag every scenario that passes on one and fails on the
other (tests/end_to_end/test_engines.py)."""

from tests.stores.correct import ListStore


class ConfiguresTheServer(ListStore):
    """Sets the server's eviction policy when it is built (CONFIG SET maxmemory-policy), as if it
    owned the server. fakeredis accepts any CONFIG SET; a real server whose user may not run CONFIG
    (the suite's private server, as managed Redis services) refuses it: passes on fakeredis, fails
    on a real server."""

    def __init__(self, redis, namespace, max_messages, ttl):
        super().__init__(redis, namespace, max_messages, ttl)
        redis.config_set("maxmemory-policy", "volatile-lru")


class MeasuresItsMemory(ListStore):
    """Keeps the session's size in bytes after every append (MEMORY USAGE), which fakeredis does not
    know: passes on a real server, fails on fakeredis."""

    def append(self, session_id, role, content):
        super().append(session_id, role, content)
        self.bytes_used = self.redis.memory_usage(self.key(session_id))
