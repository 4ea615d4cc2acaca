"""A store over two backends: Redis, which every load reads, and a SQLite file standing in for a
vector store, into which a background thread mirrors each session a little later.

Shape: ``TwoBackendStore(redis, data_dir, max_messages, ttl, namespace)`` with ``append``/``get``/
``clear`` and ``consistent_state(session_id) -> bool``, which gives it the consistency capability.
``data_dir`` is where the SQLite file goes (the suite gives each scenario a directory of its own;
without one, the store makes a temporary directory and removes it when closed).

How the mirror converges: an append or a clear marks its session dirty, whether Redis answered or
not (a reply may be lost after the write ran); ``LAG_S`` later the mirror thread copies the session,
as Redis holds it then, into SQLite. It reads Redis inside a SQLite write transaction (BEGIN
IMMEDIATE), which serialises the copies of every process sharing the file, so the last copy made
is of the newest state, whoever wrote it. The copy keeps the list's TTL, so a session that expires
in Redis is gone from the mirror too. The thread ends after ``IDLE_S`` with nothing to copy (the
next write starts another), and close() copies what is still due and stops it.
"""

import json
import os
import shutil
import sqlite3
import tempfile
import threading
import time

LAG_S = 0.02      # how long after a write its session is copied into the mirror
RETRY_S = 0.1     # a copy that failed (Redis away) is tried again this much later
IDLE_S = 0.5      # the mirror thread ends after this long with nothing to copy
CLOSE_S = 5       # close() waits at most this long for the mirror thread


class TwoBackendStore:
    def __init__(self, redis, data_dir=None, max_messages=1000, ttl=None, namespace="chat:"):
        if max_messages < 1:
            raise ValueError("max_messages must be at least 1")
        self.redis = redis
        self.max_messages = max_messages
        self.ttl = ttl
        self.namespace = namespace
        self._own_dir = None if data_dir else tempfile.mkdtemp(prefix="two-backends-")
        self._db = sqlite3.connect(os.path.join(data_dir or self._own_dir, "mirror.sqlite3"), timeout=10,
                                   isolation_level=None, check_same_thread=False)
        self._db_lock = threading.Lock()   # one connection, used by the callers' threads and the mirror's
        with self._db_lock:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")   # a commit waits for no fsync (WAL checkpoints do)
            self._db.execute("CREATE TABLE IF NOT EXISTS mirror (session TEXT, position INTEGER, item TEXT, "
                             "expires REAL, PRIMARY KEY (session, position))")
        self._wake = threading.Condition()
        self._dirty = {}          # session id -> when its copy is due (time.monotonic())
        self._thread = None
        self._closed = False

    def _key(self, session_id):
        return f"{self.namespace}messages:{session_id}"

    # -- Redis, the backend every load reads -------------------------------------------------------
    def append(self, session_id, role, content):
        key = self._key(session_id)
        try:
            with self.redis.pipeline(transaction=True) as pipe:   # MULTI/EXEC: push, trim, expire together
                pipe.rpush(key, json.dumps({"role": role, "content": content}, ensure_ascii=False))
                pipe.ltrim(key, -self.max_messages, -1)
                if self.ttl:
                    pipe.expire(key, self.ttl)
                pipe.execute()
        finally:
            self._mark(session_id, LAG_S)

    def get(self, session_id):
        return [json.loads(raw) for raw in self.redis.lrange(self._key(session_id), 0, -1)]

    def clear(self, session_id):
        try:
            self.redis.delete(self._key(session_id))
        finally:
            self._mark(session_id, LAG_S)

    def consistent_state(self, session_id):
        """Whether the mirror holds the session exactly as Redis does (read in one SQLite transaction,
        so that no copy lands between the two reads)."""
        with self._db_lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                in_redis = self.redis.lrange(self._key(session_id), 0, -1)
                mirrored = [row[0] for row in self._db.execute(
                    "SELECT item FROM mirror WHERE session = ? AND (expires IS NULL OR expires > ?) "
                    "ORDER BY position", (session_id, time.time()))]
            finally:
                self._db.execute("COMMIT")
        return mirrored == in_redis

    # -- the mirror ----------------------------------------------------------------------------------
    def _mark(self, session_id, delay):
        with self._wake:
            if self._closed:
                return
            self._dirty.setdefault(session_id, time.monotonic() + delay)
            if self._thread is None:
                self._thread = threading.Thread(target=self._mirror, name="two-backends mirror", daemon=True)
                self._thread.start()
            self._wake.notify()

    def _mirror(self):
        while True:
            with self._wake:
                idle_since = time.monotonic()
                while True:
                    now = time.monotonic()
                    due = [session for session, at in self._dirty.items() if at <= now]
                    if self._closed or due:
                        break
                    if not self._dirty and now - idle_since >= IDLE_S:
                        self._thread = None
                        return
                    self._wake.wait(min(self._dirty.values()) - now if self._dirty else IDLE_S)
                if self._closed:
                    return
                for session in due:
                    del self._dirty[session]
            for session in due:
                try:
                    self._copy(session)
                except Exception:   # Redis away, or the file busy past its timeout: try again later
                    self._mark(session, RETRY_S)

    def _copy(self, session_id):
        key = self._key(session_id)
        with self._db_lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                with self.redis.pipeline(transaction=True) as pipe:
                    pipe.lrange(key, 0, -1)
                    pipe.pttl(key)
                    items, pttl = pipe.execute()
                expires = time.time() + pttl / 1000 if pttl > 0 else None
                self._db.execute("DELETE FROM mirror WHERE session = ?", (session_id,))
                self._db.executemany("INSERT INTO mirror VALUES (?, ?, ?, ?)",
                                     [(session_id, i, item, expires) for i, item in enumerate(items)])
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def close(self):
        """Stop the mirror thread, copy what is still due (once each), close the file."""
        with self._wake:
            self._closed = True
            thread, due = self._thread, list(self._dirty)
            self._dirty.clear()
            self._wake.notify_all()
        if thread is not None:
            thread.join(CLOSE_S)
        for session in due:
            try:
                self._copy(session)
            except Exception:
                pass
        with self._db_lock:
            self._db.close()
        if self._own_dir:
            shutil.rmtree(self._own_dir, ignore_errors=True)
