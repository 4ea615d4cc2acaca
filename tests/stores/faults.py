"""Broken stores that are right while the connection holds: only the connection-fault scenarios, on a
real server, catch them."""

import threading

import redis

from tests.stores.correct import ListStore

RECONNECTS = "test_store_reconnects_after_its_connections_are_killed"
RAISES_WHEN_DOWN = "test_store_raises_when_the_server_is_down"


class PinnedConnection(ListStore):
    """Takes one connection from the client's pool when built and sends its appends on it for its
    whole life (to skip the pool's checkout), swallowing a connection error as a "best-effort" write.
    When the server has closed that connection, the next append fails on it unseen and its message
    is lost (the connection reconnects on the append after). Its calls take turns on the connection,
    so concurrent appends are safe."""

    def __init__(self, redis, namespace, max_messages, ttl):
        super().__init__(redis, namespace, max_messages, ttl)
        self.connection = redis.connection_pool.get_connection()
        self.lock = threading.Lock()

    def append(self, session_id, role, content):
        with self.lock:
            try:
                self.connection.send_command("RPUSH", self.key(session_id), self.encode(role, content))
                self.connection.read_response()
            except redis.ConnectionError:
                return
        with self.redis.pipeline(transaction=True) as pipe:
            self.trim(pipe, self.key(session_id))
            self.expire(pipe, self.key(session_id))
            pipe.execute()


class ForgetsOnADroppedConnection(ListStore):
    """Sends everything on one connection taken from the pool when built: an append that meets it
    closed sends again (the connection reconnects), but a load that meets it closed returns an empty
    history. A restart is met by the append that follows it, which reconnects before the load; a
    connection the server closes between an append and a load makes that load forget everything."""

    def __init__(self, redis, namespace, max_messages, ttl):
        super().__init__(redis, namespace, max_messages, ttl)
        self.connection = redis.connection_pool.get_connection()
        self.lock = threading.Lock()

    def command(self, *args):
        self.connection.send_command(*args)
        return self.connection.read_response()

    def append(self, session_id, role, content):
        key, raw = self.key(session_id), self.encode(role, content)
        with self.lock:
            try:
                self.command("RPUSH", key, raw)
            except redis.ConnectionError:   # closed before the push was sent: send it again
                self.command("RPUSH", key, raw)
            self.command("LTRIM", key, -self.max_messages, -1)
            self.command("EXPIRE", key, self.ttl)

    def read(self, key):
        with self.lock:
            try:
                return self.command("LRANGE", key, 0, -1)
            except redis.ConnectionError:
                return []


class ForgetsWhenDown(ListStore):
    """Loads an empty history when the server cannot be reached, so the conversation goes on (silent
    amnesia)."""

    def read(self, key):
        try:
            return super().read(key)
        except redis.ConnectionError:
            return []


class BestEffortAppend(ListStore):
    """Swallows a connection error in append, so the chat goes on as if the message were stored."""

    def append(self, session_id, role, content):
        try:
            super().append(session_id, role, content)
        except redis.ConnectionError:
            pass


CAUGHT_BY: dict[type, list[str]] = {
    # a restart closes its connection too, and the append that meets it dead is lost the same way
    PinnedConnection: [RECONNECTS, "test_a_restart_between_turns_loses_nothing"],
    ForgetsOnADroppedConnection: [RECONNECTS],
    ForgetsWhenDown: [RAISES_WHEN_DOWN],
    BestEffortAppend: [RAISES_WHEN_DOWN],
}
