"""Deliberately broken stores, one bug class each, and the scenarios that must catch them.

Every class overrides one step of a correct store in :mod:`tests.stores.correct`. ``CAUGHT_BY``
maps each to the exact set of fixed scenarios that fail on it; where that is more than one, the
class docstring says why the others fail too. The stateful scenario (random sequences checked
against the reference model) is a net under all of them: it must catch the bug meant for it, and
may catch any other (``MAY_ALSO_CATCH``). Each class declares the cause its failures must name,
``CAUSE`` or ``LISTED_CAUSE`` (``tests.test_corpus.declared_cause`` says how), as every broken
store in ``tests/stores`` does.
"""

import time

from tests.stores.correct import ListStore, TokenStore
from tests.stores.identity import CLEARING, EVERY_ID, SHARED_DATABASE
from tests.stores.stateful_bugs import (CacheCheckedByLength, FullWindowMarkSurvivesClear, OneTooFew,
                                        SequenceSeededFromSize)


class OffByOneTrim(ListStore):
    """Keeps N+1 messages: ``ltrim(key, -N-1, -1)``."""

    CAUSE = r"kept (\d+) messages, expected \d+: message 1 of \1 should have been trimmed"

    def trim(self, pipe, key):
        pipe.ltrim(key, -self.max_messages - 1, -1)


class KeepsOldest(ListStore):
    """Trims from the wrong end: ``ltrim(key, 0, N-1)`` keeps the first N messages ever sent."""

    CAUSE = r"kept the oldest \d+ messages of \d+ instead of the newest: the trim cuts the wrong end"

    def trim(self, pipe, key):
        pipe.ltrim(key, 0, self.max_messages - 1)


class ReversedOrder(ListStore):
    """LPUSH without reversing on read: histories come back newest first (langchain#2167).
    Every scenario that compares a history of two or more messages fails."""

    CAUSE = r"history is in reverse order"

    def push(self, pipe, key, raw):
        pipe.lpush(key, raw)

    def trim(self, pipe, key):
        pipe.ltrim(key, 0, self.max_messages - 1)


class UnicodeMangled(ListStore):
    """Stores text through latin-1 mojibake."""

    CAUSE = r"its UTF-8 bytes were read as latin-1 \(mojibake\)"

    def encode(self, role, content):
        return super().encode(role, content.encode("utf-8").decode("latin-1"))


class SystemRoleLost(ListStore):
    """Knows only user and assistant: a system message comes back as a user message."""

    CAUSE = r"lost its role: expected 'system', got 'user'"

    def encode(self, role, content):
        return super().encode(role if role in ("user", "assistant") else "user", content)


class SessionKeyCollision(ListStore):
    """Strips whitespace and braces from the session id in the key (to "keep keys tidy"), so
    ``a b`` and ``ab`` share a list, and so do ``{alice}`` and ``alice``."""

    CAUSE = (r"share a history: each loads the other's messages; the id is changed before the store tells ids apart "
             r"\(in a key, or a search index's query\), and the evidence fits several causes: its surrounding "
             r"whitespace is stripped; or its whitespace is removed")

    def key(self, session_id):
        return f"{self.namespace}messages:" + "".join(c for c in session_id if not c.isspace() and c not in "{}")


class MissingTTL(ListStore):
    """Never sets a TTL: keys live forever (langgraph-redis#137)."""

    CAUSE = r"no TTL|no key has a TTL"

    def expire(self, pipe, key):
        pass


class CompanionKeyWithoutTTL(ListStore):
    """Records when the session was last active with a plain SET (no EX) beside the list: the
    messages expire, that key lives forever."""

    CAUSE = r":last-active has no TTL"

    def expire(self, pipe, key):
        pipe.set(key + ":last-active", time.time())
        super().expire(pipe, key)

    def clear(self, session_id):
        self.redis.delete(self.key(session_id), self.key(session_id) + ":last-active")


class TTLNotRefreshed(ListStore):
    """Sets the TTL only when the key has none (EXPIRE NX), so an active session still expires."""

    CAUSE = {
        "test_append_refreshes_ttl": r"what the suite had shortened it to: the append did not set it back",
        "test_active_session_outlives_its_ttl": r"the TTL does not slide over all of the session",
    }

    def expire(self, pipe, key):
        pipe.expire(key, self.ttl, nx=True)


class TTLInMilliseconds(ListStore):
    """Treats the TTL in seconds as milliseconds and multiplies: keys live 1000 times too long.
    The expiry and refresh scenarios fail too: the TTL never comes near the configured one."""

    CAUSE = r"milliseconds taken for seconds"

    def expire(self, pipe, key):
        pipe.expire(key, self.ttl * 1000)


class _InstanceCache(ListStore):
    """Serves loads from a cache kept in the instance: the part the two caching bugs below share."""

    def __init__(self, redis, namespace, max_messages, ttl):
        super().__init__(redis, namespace, max_messages, ttl)
        self.cache = {}

    def get(self, session_id):
        if session_id not in self.cache:
            self.cache[session_id] = super().get(session_id)
        return list(self.cache[session_id])

    def clear(self, session_id):
        self.cache.pop(session_id, None)
        super().clear(session_id)


class ProcessLocalCache(_InstanceCache):
    """Writes each append into its own cache too, and keeps the cache as long as the keys' TTL:
    another worker's appends are invisible to it."""

    CAUSE = r"from state kept (in the instance|outside (this server|Redis) \(in (its process|the instance))"

    def __init__(self, redis, namespace, max_messages, ttl):
        super().__init__(redis, namespace, max_messages, ttl)
        self.cached_until = {}

    def append(self, session_id, role, content):
        super().append(session_id, role, content)
        cached = self.cache.setdefault(session_id, [])
        cached.append({"role": role, "content": content})
        del cached[:-self.max_messages]
        self.cached_until[session_id] = time.monotonic() + self.ttl

    def get(self, session_id):
        if time.monotonic() >= self.cached_until.get(session_id, 0):
            self.cache.pop(session_id, None)
        return super().get(session_id)


class CacheGuardedAgainstLoss(ProcessLocalCache):
    """ProcessLocalCache with a guard against Redis losing data (a restart without persistence, an
    eviction): when the session's list holds fewer messages than the cache, it reads Redis again.
    More messages than the cache, another worker's appends, it does not look for."""

    CAUSE = r"it answers from state kept in the instance"

    def get(self, session_id):
        if self.redis.llen(self.key(session_id)) < len(self.cache.get(session_id, [])):
            self.cache.pop(session_id, None)
        return super().get(session_id)


class PerInstanceReadCache(_InstanceCache):
    """Forgets a cached history only on its own appends and clears: writes made through another
    instance (another worker) stay invisible to it. Only a sequence that loads through one
    instance, writes through the other and loads again shows it."""

    CAUSE = {"test_random_operations_match_the_model":
                 r"Redis holds them: instance \d answers from state kept in the instance",
             "test_eviction_leaves_sessions_whole_or_gone":
                 r"was evicted whole \(Redis evicted '[^']+', all its keys\), yet its load returned \d+ messages, all "
                 r"it held before: the store answers from state kept outside Redis \(in the instance"}

    def append(self, session_id, role, content):
        self.cache.pop(session_id, None)
        super().append(session_id, role, content)


class ClearDeletesOtherSessions(ListStore):
    """Clears by glob pattern ``<key>*``: clearing ``alice`` also clears ``alice2`` and ``alice:2``."""

    CAUSE = {CLEARING:
             r"clear\(session 'alice'\) deleted session '[^']+' and \d+ more \(.*\): '[^']+' starts with 'alice': "
             r"the keys are found by a pattern of the id and a trailing \*",
             SHARED_DATABASE: r"SCAN [\d,]+ times in its clear: SCAN walks the whole keyspace"}

    def clear(self, session_id):
        for key in self.redis.scan_iter(self.key(session_id) + "*"):
            self.redis.delete(key)


class KeysOutsideNamespace(ListStore):
    """Keeps a global index of sessions under the fixed key ``sessions``, outside the namespace."""

    CAUSE = r"keys outside the namespace"

    def expire(self, pipe, key):
        pipe.sadd("sessions", key)
        pipe.expire("sessions", self.ttl)
        super().expire(pipe, key)


class EqualScoresSortedSet(ListStore):
    """A sorted set scored by ``int(time.time())``: messages appended within one second tie, and
    Redis orders ties by member, so the assistant's turns come before the user's. Every scenario
    that compares a history with both roles fails."""

    CAUSE = {   # where enough messages share a second for their order to show it
        "test_no_silent_cap": r"reordered within runs of consecutive appends, each run sorted by its messages' text",
        "test_many_fast_appends_keep_order": r"reordered within runs of consecutive appends, each run sorted by",
        "test_loading_twice_changes_nothing": r"reordered within runs of consecutive appends, each run sorted by",
        "test_round_trip_keeps_role_content_and_order": r"a repeat: the same message comes twice",
    }

    def push(self, pipe, key, raw):
        pipe.zadd(key, {raw: int(time.time())})

    def trim(self, pipe, key):
        pipe.zremrangebyrank(key, 0, -self.max_messages - 1)

    def read(self, key):
        return self.redis.zrange(key, 0, -1)


class EmptyMessageDropped(ListStore):
    """Skips appends whose content is empty."""

    CAUSE = r"lost message \d+ of \d+ \(\w+: ''\)"

    def append(self, session_id, role, content):
        if content:
            super().append(session_id, role, content)


class LongMessageTruncated(ListStore):
    """Cuts content at 64 KiB characters."""

    CAUSE = r"it was cut at 65,536 characters"

    def encode(self, role, content):
        return super().encode(role, content[:65536])


class WhitespaceStripped(ListStore):
    """Strips surrounding whitespace from content."""

    CAUSE = r"its surrounding whitespace was stripped"

    def encode(self, role, content):
        return super().encode(role, content.strip())


class ClearLeavesKeys(ListStore):
    """Keeps a message counter beside the list, and clear forgets to delete it."""

    CAUSE = r"after clear\('gone'\) these keys remain"

    def expire(self, pipe, key):
        pipe.incr(key + ":count")
        pipe.expire(key + ":count", self.ttl)
        super().expire(pipe, key)


class DropsRepeatedMessage(ListStore):
    """Skips an append equal to the last message stored ("to avoid duplicates"): a user who says
    "continue" twice in a row loses the second."""

    CAUSE = r"a repeat: the same message comes twice, the history holds it once"

    def append(self, session_id, role, content):
        last = self.redis.lindex(self.key(session_id), -1)
        if last is None or self.decode(last) != {"role": role, "content": content}:
            super().append(session_id, role, content)


class SilentCap(ListStore):
    """Reads at most the last 1000 messages, whatever the window."""

    CAUSE = r"history has 1000 messages, expected 3000"

    def read(self, key):
        return self.redis.lrange(key, -1000, -1)


class LoadConsumes(ListStore):
    """Load reads and deletes the list in one transaction, as a queue would. The count-window and
    two-instance scenarios fail too, and so do the reconnect and lost-reply scenarios: they load more
    than once."""

    CAUSE = {
        "test_loading_twice_changes_nothing": r"the first load was right, so loading changed the session",
    }

    def read(self, key):
        with self.redis.pipeline(transaction=True) as pipe:
            pipe.lrange(key, 0, -1)
            pipe.delete(key)
            return pipe.execute()[0]


class GreetingWhenEmpty(ListStore):
    """Returns a default system prompt for a session with no messages. Every scenario that expects
    an empty history fails: after clear, before the first append, after expiry."""

    CAUSE = {
        "test_count_window_keeps_last_n":
            r"history holds 1 message never appended to this session, first system: 'You are a helpful assistant.'",
    }

    def get(self, session_id):
        return super().get(session_id) or [{"role": "system", "content": "You are a helpful assistant."}]


class TokenOverTrim(TokenStore):
    """Trims while the total is at or over the budget: a history that fits exactly loses its oldest."""

    CAUSE = r"history is over-trimmed"

    def over_budget(self, total):
        return total >= self.max_tokens


class OversizeKeepsRest(TokenStore):
    """When the newest message alone exceeds the budget, gives up trimming and keeps everything."""

    CAUSE = r"the newest message alone costs \d+ tokens, over the budget of \d+ tokens, yet \d+ messages older remain"

    def how_many_to_drop(self, costs):
        return 0 if costs[-1] > self.max_tokens else super().how_many_to_drop(costs)


STATEFUL = "test_random_operations_match_the_model"
ROUND_TRIP = "test_round_trip_keeps_role_content_and_order"
COMPARES_HISTORIES = {  # scenarios that compare a history of several messages, both roles present
    ROUND_TRIP, "test_many_fast_appends_keep_order", EVERY_ID,
    "test_two_instances_share_history", "test_loading_twice_changes_nothing",
    "test_no_silent_cap", "test_count_window_keeps_last_n",
    "test_store_reconnects_after_its_connections_are_killed",
    "test_store_neither_duplicates_nor_loses_a_message_whose_reply_was_lost", "test_append_raises_when_memory_is_full",
    "test_eviction_leaves_sessions_whole_or_gone", "test_a_restart_between_turns_loses_nothing",
}

CAUGHT_BY: dict[type, list[str]] = {
    OffByOneTrim: ["test_count_window_keeps_last_n"],
    KeepsOldest: ["test_count_window_keeps_last_n"],
    OneTooFew: ["test_count_window_keeps_last_n"],
    ReversedOrder: sorted(COMPARES_HISTORIES),
    UnicodeMangled: [ROUND_TRIP],
    SystemRoleLost: [ROUND_TRIP],
    SessionKeyCollision: [EVERY_ID],
    MissingTTL: ["test_every_key_has_ttl_within_configured", "test_append_refreshes_ttl",
                 "test_idle_session_disappears_completely"],
    CompanionKeyWithoutTTL: ["test_every_key_has_ttl_within_configured"],
    TTLNotRefreshed: ["test_append_refreshes_ttl", "test_active_session_outlives_its_ttl"],
    TTLInMilliseconds: ["test_every_key_has_ttl_within_configured", "test_append_refreshes_ttl",
                        "test_idle_session_disappears_completely"],
    # after a restart without persistence it still shows what the server lost
    ProcessLocalCache: ["test_two_instances_share_history", "test_a_restart_between_turns_loses_nothing",
                        "test_eviction_leaves_sessions_whole_or_gone"],
    CacheGuardedAgainstLoss: ["test_two_instances_share_history"],
    PerInstanceReadCache: [STATEFUL, "test_eviction_leaves_sessions_whole_or_gone"],   # the load before: cached
    FullWindowMarkSurvivesClear: [STATEFUL],
    CacheCheckedByLength: [STATEFUL],
    SequenceSeededFromSize: [STATEFUL],
    ClearDeletesOtherSessions: [CLEARING, SHARED_DATABASE],
    KeysOutsideNamespace: ["test_keys_stay_in_namespace"],
    EqualScoresSortedSet: sorted(COMPARES_HISTORIES),
    EmptyMessageDropped: [ROUND_TRIP],
    LongMessageTruncated: [ROUND_TRIP],
    WhitespaceStripped: [ROUND_TRIP],
    ClearLeavesKeys: ["test_clear_leaves_no_keys"],
    SilentCap: ["test_no_silent_cap"],
    DropsRepeatedMessage: [ROUND_TRIP],
    LoadConsumes: ["test_loading_twice_changes_nothing", "test_two_instances_share_history",
                   "test_count_window_keeps_last_n", "test_store_reconnects_after_its_connections_are_killed",
                   "test_store_neither_duplicates_nor_loses_a_message_whose_reply_was_lost",
                   "test_a_restart_between_turns_loses_nothing"],
    GreetingWhenEmpty: ["test_fresh_session_is_empty", CLEARING,
                        "test_count_window_keeps_last_n", "test_idle_session_disappears_completely",
                        "test_eviction_leaves_sessions_whole_or_gone"],   # an evicted session greets
    TokenOverTrim: ["test_token_window_keeps_maximal_suffix"],
    OversizeKeepsRest: ["test_token_window_keeps_maximal_suffix"],
}

MAY_ALSO_CATCH = {STATEFUL}

# Scenarios with no store above that they alone catch, and why: the bugs they target show in
# other scenarios too, which repeat the same operations as part of their own work.
NO_SOLE_CATCH = {
    "test_fresh_session_is_empty": "a default for an empty session also shows after clear and expiry",
    "test_many_fast_appends_keep_order": "order bugs show in every multi-message comparison",
    "test_loading_twice_changes_nothing": "a load with side effects breaks every scenario that loads twice",
}
