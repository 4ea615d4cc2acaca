"""Broken stores over two backends, built on the example (examples/stores/two_backends.py): Redis
and a SQLite mirror. Each is right for one writer at a time, or wrong only in its mirror, which no
other group looks at: only the consistency scenarios, which poll consistent_state after concurrent
writes, catch them."""

import asyncio
import json
import os
import sqlite3
import time

from examples.stores.two_backends import TwoBackendStore

AGREE = "test_backends_agree_after_concurrent_writes"
SHARED = "test_backends_agree_when_writers_share_a_session"


class MirrorsInArrivalOrder(TwoBackendStore):
    """Mirrors each write as it is made, right after Redis took it, at the next position of the
    session's mirror (its arrival), instead of copying the session as Redis holds it. One writer's
    appends arrive in Redis' order; two writers of one session race between their Redis write and
    their mirror write, so the mirror's order differs from Redis' for good, and consistent_state
    (which compares them) stays False."""

    LISTED_CAUSE = r"lags behind Redis and never caught up \(.*applied out of order"

    def _mark(self, session_id, delay):
        pass   # no copies: each write is mirrored by itself

    def append(self, session_id, role, content):
        super().append(session_id, role, content)
        self._insert(session_id, json.dumps({"role": role, "content": content}, ensure_ascii=False))

    def clear(self, session_id):
        super().clear(session_id)
        with self._db_lock:
            self._db.execute("DELETE FROM mirror WHERE session = ?", (session_id,))

    def _insert(self, session_id, item):
        """``item`` after the session's last in the mirror, the window kept, the TTL slid."""
        expires = time.time() + self.ttl if self.ttl else None
        with self._db_lock:
            self._db.execute("BEGIN IMMEDIATE")
            last = self._db.execute("SELECT COALESCE(MAX(position), -1) FROM mirror WHERE session = ?",
                                    (session_id,)).fetchone()[0]
            self._db.execute("INSERT INTO mirror VALUES (?, ?, ?, ?)", (session_id, last + 1, item, expires))
            self._db.execute("DELETE FROM mirror WHERE session = ? AND position <= ?",
                             (session_id, last + 1 - self.max_messages))
            self._db.execute("UPDATE mirror SET expires = ? WHERE session = ?", (expires, session_id))
            self._db.execute("COMMIT")


class CoalescesMirrorWrites(MirrorsInArrivalOrder):
    """Defers the mirror write as the example does, but keeps one pending write per session, the
    latest: appends that come within the lag overwrite each other, and only the last reaches the
    mirror. The others are lost from the mirror for good (Redis has them, so every load is right),
    and consistent_state stays False."""

    LISTED_CAUSE = (r"lags behind Redis and never caught up \(a mirror write dropped or overwritten under concurrent "
        r"writes")

    def __init__(self, redis, data_dir=None, max_messages=1000, ttl=None, namespace="chat:"):
        super().__init__(redis, data_dir, max_messages, ttl, namespace)
        self._pending = {}

    def append(self, session_id, role, content):
        self._pending[session_id] = json.dumps({"role": role, "content": content}, ensure_ascii=False)
        TwoBackendStore.append(self, session_id, role, content)   # Redis, then the deferred mirror write

    _mark = TwoBackendStore._mark

    def _copy(self, session_id):
        item = self._pending.pop(session_id, None)
        if item is not None:
            self._insert(session_id, item)


class ServesTheMirrorOfTheLastSession(MirrorsInArrivalOrder):
    """Loads from the mirror (as many of the session's newest mirrored messages as Redis holds, so
    that a session Redis lost, expired or evicted loads as empty), written as each append returns,
    under the session the store object was told last (an attribute set at the start of append, as a
    request-scoped field put on a shared object would be): writers of several sessions sharing the
    object race, and messages are mirrored, and served, under another session. Its
    consistent_state only says that no mirror write is pending, which is always: True while the
    backends differ."""

    LISTED_CAUSE = (r"consistent_state said the backends agree, so it compares too little .* state shared between its "
        r"calls")

    def append(self, session_id, role, content):
        self._session = session_id
        TwoBackendStore.append(self, session_id, role, content)   # the Redis round trip lets other threads run
        self._insert(self._session, json.dumps({"role": role, "content": content}, ensure_ascii=False))

    def get(self, session_id):
        held = self.redis.llen(self._key(session_id))   # raises when Redis is away, as a load from Redis would
        with self._db_lock:
            rows = self._db.execute("SELECT item FROM mirror WHERE session = ? AND (expires IS NULL OR expires > ?) "
                                    "ORDER BY position", (session_id, time.time())).fetchall()
        return [json.loads(item) for (item,) in rows[max(len(rows) - held, 0):]] if held else []

    def consistent_state(self, session_id):
        return True


class AsyncTwoBackendStore:
    """A correct async store over two backends, as the example but on redis.asyncio: the mirror's
    copies are tasks on the caller's event loop, each LAG_S after a write, so they progress only
    while the loop runs (between the suite's polls too, which await on that loop). A copy checks
    Redis again after writing the mirror and copies again if it moved on."""

    LAG_S = 0.02

    def __init__(self, redis, data_dir, max_messages=1000, ttl=None, namespace="chat:"):
        self.redis, self.max_messages, self.ttl, self.namespace = redis, max_messages, ttl, namespace
        self._db = sqlite3.connect(os.path.join(data_dir, "mirror.sqlite3"), timeout=10, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS mirror (session TEXT, position INTEGER, item TEXT, "
                         "expires REAL, PRIMARY KEY (session, position))")
        self._copies = {}        # session id -> its pending copy task

    def _key(self, session_id):
        return f"{self.namespace}messages:{session_id}"

    async def append(self, session_id, role, content):
        key = self._key(session_id)
        try:
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.rpush(key, json.dumps({"role": role, "content": content}, ensure_ascii=False))
                pipe.ltrim(key, -self.max_messages, -1)
                if self.ttl:
                    pipe.expire(key, self.ttl)
                await pipe.execute()
        finally:
            self._mark(session_id)

    async def get(self, session_id):
        return [json.loads(raw) for raw in await self.redis.lrange(self._key(session_id), 0, -1)]

    async def clear(self, session_id):
        try:
            await self.redis.delete(self._key(session_id))
        finally:
            self._mark(session_id)

    async def consistent_state(self, session_id):
        in_redis = await self.redis.lrange(self._key(session_id), 0, -1)
        mirrored = [row[0] for row in self._db.execute(
            "SELECT item FROM mirror WHERE session = ? AND (expires IS NULL OR expires > ?) ORDER BY position",
            (session_id, time.time()))]
        return mirrored == in_redis

    def _mark(self, session_id):
        if session_id not in self._copies:
            self._copies[session_id] = asyncio.get_running_loop().create_task(self._copy_later(session_id))

    async def _copy_later(self, session_id):
        await asyncio.sleep(self.LAG_S)
        del self._copies[session_id]   # a write from now on schedules another copy
        try:
            await self._copy(session_id)
        except Exception:
            self._mark(session_id)

    async def _copy(self, session_id):
        """Copy the session as Redis holds it, then look again: a copy of another instance or process
        may have landed first with a newer state, which this one overwrote, so copy again if Redis
        moved on (no SQLite lock is held across an await: it would block the loop)."""
        key = self._key(session_id)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.lrange(key, 0, -1)
            pipe.pttl(key)
            items, pttl = await pipe.execute()
        expires = time.time() + pttl / 1000 if pttl > 0 else None
        self._db.execute("BEGIN IMMEDIATE")
        self._db.execute("DELETE FROM mirror WHERE session = ?", (session_id,))
        self._db.executemany("INSERT INTO mirror VALUES (?, ?, ?, ?)",
                             [(session_id, i, item, expires) for i, item in enumerate(items)])
        self._db.execute("COMMIT")
        if await self.redis.lrange(key, 0, -1) != items:
            self._mark(session_id)

    async def aclose(self):
        """Cancel the pending copies and make them now (once each), close the file."""
        pending, self._copies = list(self._copies.items()), {}
        for session_id, task in pending:
            task.cancel()
            try:
                await self._copy(session_id)
            except Exception:
                pass
        self._db.close()


CAUGHT_BY: dict[type, list[str]] = {
    MirrorsInArrivalOrder: [SHARED],
    CoalescesMirrorWrites: [AGREE, SHARED],
    ServesTheMirrorOfTheLastSession: [AGREE],
}


class ConsistentStateRaises(TwoBackendStore):
    """A consistent_state that raises (its second backend unreachable): a failure naming the call."""

    def consistent_state(self, session_id):
        raise ConnectionError("the vector store did not answer")


class ConsistentStateSaysYes(TwoBackendStore):
    """A consistent_state that returns a string, not a bool."""

    def consistent_state(self, session_id):
        return "yes"


class ConsistentStateHangs(TwoBackendStore):
    """A consistent_state that never returns (a blocking call without a timeout): the runner cuts it
    off at --call-timeout, naming the call."""

    def consistent_state(self, session_id):
        time.sleep(3600)
