"""Stores with identity bugs (session ids, tenants, a database shared with others), each caught by
the one scenario of suite/test_identity.py meant for it, and a correct store with tenants."""

import json
import re
import urllib.parse

from tests.stores.correct import ListStore

EVERY_ID = "test_every_session_id_keeps_its_own_history"
CLEARING = "test_clearing_one_session_leaves_every_other_whole"
TENANTS = "test_tenants_keep_their_own_conversations"
SHARED_DATABASE = "test_a_shared_database_is_left_as_it_was"


class TenantStore(ListStore):
    """Correct: one list per (user, session), its key the two as a JSON array, which no two pairs share;
    built without a user, its sessions are those of no user."""

    def __init__(self, redis, namespace, max_messages, ttl, user_id=None):
        super().__init__(redis, namespace, max_messages, ttl)
        self.user_id = user_id

    def key(self, session_id):
        return f"{self.namespace}messages:{json.dumps([self.user_id, session_id], ensure_ascii=False)}"


class StripsIdWhereWritten(ListStore):
    """Strips the session id's surrounding whitespace when it appends, not when it loads (as
    google-adk-redis' create_session does and its get_session does not): ``' alice '`` loads
    nothing, and ``'alice'`` loads its messages too."""

    CAUSE = (r"what is appended under session ' alice ' is loaded under session 'alice', and session ' alice ' loads 0 "
             r"of its 2: the id is changed where it is written, and not where it is read: its surrounding whitespace "
             r"is stripped$")

    def append(self, session_id, role, content):
        super().append(session_id.strip(), role, content)


class CaseFoldedKeys(ListStore):
    """Builds the key from the id folded to lower case ("emails are case-insensitive"): ``Alice`` and
    ``alice`` are one session."""

    CAUSE = (r"share a history: each loads the other's messages; the id is changed before the store tells ids apart "
             r"\(in a key, or a search index's query\): it is folded to one letter case$")

    def key(self, session_id):
        return super().key(session_id.casefold())


class ClearFoldsCase(ListStore):
    """Clears the session's key and, "to be safe", the key of its id in lower case: clearing ``Alice``
    deletes ``alice``."""

    CAUSE = (r"clear\(session '3F2B8C1E-9A4D-4E6F-B1C2-7D8E9F0A1B2C'\) deleted session "
             r"'3f2b8c1e-9a4d-4e6f-b1c2-7d8e9f0a1b2c': the id is changed where clear builds its keys, and not where "
             r"append and load do: it is folded to one letter case$")

    def clear(self, session_id):
        self.redis.delete(self.key(session_id), self.key(session_id.casefold()))


class ClearMissesQuotedCompanion(ListStore):
    """Keeps a companion key of the session's last activity under the id URL-quoted, and clears it under
    the id as given: for a plain id the two are one key, for ``a b`` or ``al*`` the companion stays."""

    CAUSE = (r"clear left keys of its own for \d+ of the ids, where a plain id's clear leaves none: "
             r"'alice@example\.com' \(email\).*: clear builds those keys otherwise than append does for ids of that "
             r"shape")

    def companion(self, session_id, quoted=True):
        return f"{self.namespace}last-active:{urllib.parse.quote(session_id) if quoted else session_id}"

    def expire(self, pipe, key):
        super().expire(pipe, key)
        session_id = key.removeprefix(f"{self.namespace}messages:")
        pipe.set(self.companion(session_id), "now", ex=self.ttl)

    def clear(self, session_id):
        self.redis.delete(self.key(session_id), self.companion(session_id, quoted=False))


class UserJoinedWithColon(TenantStore):
    """Keys a conversation ``<user>:<session>``, and one of no user by its session id alone (as Redis'
    agent-memory-server does): user ``bob``'s ``s1`` and ``bob:s1`` of no user are one key."""

    CAUSE = (r"user 'bob''s session 's1' and session 'bob:s1' of no user share a history: each loads the other's "
             r"messages; the user id and the session id are joined with ':' into one key")

    def key(self, session_id):
        owner = session_id if self.user_id is None else f"{self.user_id}:{session_id}"
        return f"{self.namespace}messages:{owner}"


class RefusesUnusualIds(ListStore):
    """Takes ids of letters, digits and ``@ . - _`` only, and raises ValueError at the append of any
    other: a refusal, which is a warning (any-session-id), not a failure."""

    def append(self, session_id, role, content):
        if not all(c.isascii() and (c.isalnum() or c in "@.-_") for c in session_id):
            raise ValueError(f"unsupported session id {session_id!r}")
        super().append(session_id, role, content)


class FindsSessionByScan(ListStore):
    """Finds a session's list by scanning for its key, 1,000 keys a call ("wherever it lives"): right on
    any database, and a walk of the whole keyspace at every load."""

    CAUSE = r"SCAN [\d,]+ times in its appends and loads among the keys of others: SCAN walks the whole keyspace"

    def read(self, key):
        pattern = re.sub(r"([*?\[\]\\])", r"\\\1", key)
        return [raw for found in self.redis.scan_iter(match=pattern, count=1000) for raw in ListStore.read(self, found)]


class Unprintable(ValueError):
    def __str__(self):
        raise RuntimeError("this exception cannot say what it is")


class RefusesUnprintably(RefusesUnusualIds):
    """Refuses the same ids with an exception whose ``__str__`` raises: still a refusal, warned, and the
    warning says the message could not be read, without running the store's code again."""

    def append(self, session_id, role, content):
        try:
            super().append(session_id, role, content)
        except ValueError:
            raise Unprintable() from None


CAUGHT_BY = {
    StripsIdWhereWritten: [EVERY_ID],
    CaseFoldedKeys: [EVERY_ID],
    ClearFoldsCase: [CLEARING],
    ClearMissesQuotedCompanion: [CLEARING],
    UserJoinedWithColon: [TENANTS],
    FindsSessionByScan: [SHARED_DATABASE],
}
WARNED_BY = {RefusesUnusualIds: [EVERY_ID], RefusesUnprintably: [EVERY_ID]}
