"""Stores that keep a metadata hash beside the list and get its expiry wrong: two whose TTLs look
right on every key, which only the expiry scenarios (waiting for real expiry) catch, and one whose
metadata stops sliding, which the TTL refresh scenario catches."""

import time

from tests.stores.correct import ListStore

ACTIVE = "test_active_session_outlives_its_ttl"
IDLE = "test_idle_session_disappears_completely"


class _WithMetadata(ListStore):
    """A hash of the session's metadata beside its list, deleted with it."""

    def meta_key(self, key):
        return key + ":meta"

    def clear(self, session_id):
        self.redis.delete(self.key(session_id), self.meta_key(self.key(session_id)))


class ExpiresAtFixedDeadline(_WithMetadata):
    """Notes when the session started (HSETNX) and expires the list and the metadata at that time
    plus the TTL (PEXPIREAT), on every append: right after an append every TTL looks fresh while the
    session is young, and a conversation longer than the TTL loses everything mid-way, however
    active."""

    LISTED_CAUSE = r"the TTL does not slide .*a deadline counted from the session's start"

    def expire(self, pipe, key):
        meta = self.meta_key(key)
        self.redis.hsetnx(meta, "started", int(time.time() * 1000))
        deadline = int(self.redis.hget(meta, "started")) + self.ttl * 1000
        pipe.pexpireat(key, deadline)
        pipe.pexpireat(meta, deadline)


class MetadataTTLSetOnce(_WithMetadata):
    """Notes the session's start in the metadata hash and gives the hash its TTL only when creating
    it (EXPIRE NX) while the list's TTL slides: a session active for longer than the TTL keeps its
    messages and loses its metadata, a half session."""

    CAUSE = r":meta has a TTL of [\d.]+ s, what the suite had shortened it to: the append did not set it back"

    def expire(self, pipe, key):
        meta = self.meta_key(key)
        pipe.hsetnx(meta, "started", int(time.time() * 1000))
        pipe.expire(meta, self.ttl, nx=True)
        super().expire(pipe, key)


class LoadWritesMetadata(_WithMetadata):
    """Counts reading as activity: every load notes the time in the metadata hash and refreshes
    both TTLs. On a session that has expired, the HSET creates the hash again: a ghost session
    without messages, listed wherever sessions are, for another TTL."""

    CAUSE = r"loading the expired session created keys again"

    def get(self, session_id):
        key = self.key(session_id)
        with self.redis.pipeline(transaction=True) as pipe:
            pipe.lrange(key, 0, -1)
            pipe.hset(self.meta_key(key), "last-read", time.time())
            for touched in (key, self.meta_key(key)):
                pipe.expire(touched, self.ttl)
            return [self.decode(raw) for raw in pipe.execute()[0]]


CAUGHT_BY: dict[type, list[str]] = {
    ExpiresAtFixedDeadline: [ACTIVE],
    LoadWritesMetadata: [IDLE],
    MetadataTTLSetOnce: ["test_append_refreshes_ttl"],
}
