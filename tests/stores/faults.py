"""Broken stores that are right while the connection holds: only the connection-fault scenarios, on a
real server, catch them."""

import threading

import redis
from redis.connection import parse_url

from tests.stores.correct import ListStore

RECONNECTS = "test_store_reconnects_after_its_connections_are_killed"
RAISES_WHEN_DOWN = "test_store_raises_when_the_server_is_down"
LOST_REPLY = "test_store_neither_duplicates_nor_loses_a_message_whose_reply_was_lost"


class PinnedConnection(ListStore):
    """Takes one connection from the client's pool when built and sends its appends on it for its
    whole life (to skip the pool's checkout), swallowing a connection error as a "best-effort" write.
    When the server has closed that connection, the next append fails on it unseen and its message
    is lost (the connection reconnects on the append after). Its calls take turns on the connection,
    so concurrent appends are safe."""

    CAUSE = (r"the first appended after (a kill of the store's connections|a restart of the server), and its "
        r"append returned: the store swallows the error")

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
    """Sends everything on one connection taken from the pool when built: an append first checks it,
    as the pool checks a connection before handing it out, and reconnects when the server closed it
    (it never sends a push twice), but a load that meets it closed returns an empty history. A
    restart is met by the append that follows it, which reconnects before the load; a connection the
    server closes between an append and a load makes that load forget everything."""

    CAUSE = r"just after its connections were killed, returned without them and raised nothing"

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
                self.connection.can_read()   # raises on a connection the server closed
            except redis.ConnectionError:
                self.connection.disconnect()   # the next command connects again
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

    CAUSE = r"load returned an empty history while the server was down"

    def read(self, key):
        try:
            return super().read(key)
        except redis.ConnectionError:
            return []


class BestEffortAppend(ListStore):
    """Swallows a connection error in append, so the chat goes on as if the message were stored."""

    CAUSE = r"the store swallows the connection error"

    def append(self, session_id, role, content):
        try:
            super().append(session_id, role, content)
        except redis.ConnectionError:
            pass


class RetriesAppend(ListStore):
    """Sends an append again when it meets a connection error, up to 3 times, then raises: right when
    the connection died before the write, and when the server is down; but when the reply to a write
    that had executed was lost, the message is stored twice. Killed idle connections never reach its
    loop: the client's pool replaces them before sending."""

    LISTED_CAUSE = r"a blind retry of a non-idempotent write, by the store's own retry loop or by its client"

    ATTEMPTS = 3

    def append(self, session_id, role, content):
        for attempt in range(self.ATTEMPTS):
            try:
                return super().append(session_id, role, content)
            except redis.ConnectionError:
                if attempt == self.ATTEMPTS - 1:
                    raise


class ClientRetries(ListStore):
    """Builds its own client from ``redis_url`` with redis-py's constructor, as applications often do
    (``redis.Redis(host=..., port=...)``), whose default retry (10 times in redis-py 8.1, with
    backoff) sends a command again on a new connection when its reply was lost: that message is
    stored twice. The retries also replace a killed connection, and end in the error while the server
    is down, after seconds of backoff (7.5 s for the append and the load of that scenario, measured)."""

    LISTED_CAUSE = r"a blind retry of a non-idempotent write, by the store's own retry loop or by its client"

    def __init__(self, redis_url, namespace, max_messages, ttl):
        super().__init__(redis.Redis(**parse_url(redis_url), decode_responses=True), namespace, max_messages, ttl)

    def close(self):
        self.redis.close()


class RetriesItsTransaction(ListStore):
    """Appends under WATCH through redis-py's ``Redis.transaction()``, which runs the transaction again
    on every WatchError; redis-py raises one too when the connection dies during a watched EXEC, so a
    lost EXEC reply stores the message twice. Killed idle connections are replaced by the pool before
    WATCH, and while the server is down WATCH itself raises."""

    LISTED_CAUSE = r"a blind retry of a non-idempotent write, by the store's own retry loop or by its client"

    def append(self, session_id, role, content):
        key = self.key(session_id)

        def push(pipe):
            pipe.multi()
            self.push(pipe, key, self.encode(role, content))
            self.trim(pipe, key)
            self.expire(pipe, key)
        self.redis.transaction(push, key)


CAUGHT_BY: dict[type, list[str]] = {
    # a restart closes its connection too, and the append that meets it dead is lost the same way
    PinnedConnection: [RECONNECTS, "test_a_restart_between_turns_loses_nothing"],
    ForgetsOnADroppedConnection: [RECONNECTS],
    ForgetsWhenDown: [RAISES_WHEN_DOWN],
    BestEffortAppend: [RAISES_WHEN_DOWN],
    RetriesAppend: [LOST_REPLY],
    ClientRetries: [LOST_REPLY],
    RetriesItsTransaction: [LOST_REPLY],
}
