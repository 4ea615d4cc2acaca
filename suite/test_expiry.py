"""Expiry for real: with a TTL of one second on a real server, an active conversation slides past
its TTL without losing a message, and an idle one disappears completely.

The store is given its TTL in whole seconds (the contract's ``ttl``), so one second is the shortest
there is: the scenarios wait about two seconds and one, and start first so that the waits overlap
the other worker's scenarios. fakeredis expires keys by Python's clock, lazily, when they are next
touched; these scenarios need the server's own expiry.
"""

import time

import pytest

from memory_regression.reference.conversations import numbered_messages
from memory_regression.reference.diagnosis import HistoryMismatch, assert_history, unit_hint

TTL_S = 1
PACE_S = 0.4        # between appends of the active conversation: well inside the TTL
ACTIVE_TTLS = 2     # the active conversation lasts this many TTLs
SLACK_S = 0.1       # waited past the TTL before an idle session must be gone


@pytest.mark.starts_first
@pytest.mark.real_server("real expiry")
@pytest.mark.requires("ttl")
def test_active_session_outlives_its_ttl(stores):
    """A conversation that gets an append every 0.4 s keeps all its messages for twice its TTL of
    1 s: each append pushes the expiry back (the TTL slides).

    After every append the session must load complete. If this fails: the TTL is set only when the
    session is created (EXPIRE NX, or only on the first push), or the expiry is a deadline counted
    from the session's start (EXPIREAT created_at + ttl) instead of from its last append, or the
    session lives in several keys and an append refreshes only the one it writes. (A machine
    that stalls longer than the TTL between two appends leaves nothing to judge: the scenario is then
    skipped, saying so, rather than blaming the store.)"""
    store = stores.new(ttl=TTL_S)
    appended, expected = [], []
    started = previous = time.monotonic()
    for index, message in enumerate(numbered_messages(int(ACTIVE_TTLS * TTL_S / PACE_S) + 1, "active")):
        time.sleep(max(0.0, started + index * PACE_S - time.monotonic()))
        before = time.monotonic()
        expected.append(store.add("active", message))
        appended.append(message)
        history = store.load("active")
        stalled = time.monotonic() - previous
        if stalled >= TTL_S and history != expected:   # the session may rightly have expired in between
            pytest.skip(f"nothing judged: {stalled:.1f} s passed between two appends and a load, longer than "
                        f"the TTL of {TTL_S} s (a stalled machine), so even a correct store may have expired")
        previous = before
        assert_history(expected, history, appended,
                       f"{time.monotonic() - started:.1f} s into a conversation with ttl={TTL_S} and an append "
                       f"every {PACE_S} s: ", hint=lambda history: _expired_while_active(expected, history))


def _remaining(pttl_ms):
    """A key's TTL as the idle scenario reports it: none, or what is left, with a unit slip it shows."""
    if pttl_ms == -1:
        return "no TTL"
    return f"TTL {pttl_ms / 1000:g} s" + unit_hint(pttl_ms / (TTL_S * 1000), "milliseconds", "seconds")


def _expired_while_active(expected, history):
    """A history that kept the newest messages and lost the oldest: part of the session expired
    mid-way, which the history alone cannot tell apart from all of it expiring."""
    if not history or len(history) >= len(expected) or history != expected[len(expected) - len(history):]:
        return None
    return ("the oldest messages expired while the session was active and the newer stayed: the TTL does not slide "
            "over all of the session. Either the whole session expired and the appends after it started a new "
            "one (a TTL set only when the session is created, as EXPIRE NX or a TTL on the first push do, or a "
            "deadline counted from the session's start, as EXPIREAT does, instead of from its last append), or "
            "the session is kept in several keys (one per message or per turn) each of which gets its TTL when "
            "written, and later appends do not refresh the older ones")


@pytest.mark.starts_first
@pytest.mark.real_server("real expiry")
@pytest.mark.requires("ttl")
def test_idle_session_disappears_completely(stores, keyspace):
    """A session left alone for just over its TTL of 1 s is gone: no key of it remains, it loads as
    empty, and loading it creates no key again.

    If this fails with keys remaining: a key has no TTL or too long a one (milliseconds taken for
    seconds), or a companion key (an index, metadata, a counter) is refreshed apart from the
    messages. With messages loaded: the TTL is not applied, or a process-local copy outlives the
    keys. With keys created by the load: reading writes to the session (a last-read time, a touch),
    which brings back an expired session as a ghost without messages."""
    store = stores.new(ttl=TTL_S)
    store.append_all("idle", numbered_messages(3, "idle"))
    store.load("idle")
    time.sleep(TTL_S + SLACK_S)
    idle = f"after {TTL_S + SLACK_S:g} s idle with ttl={TTL_S}"
    left = keyspace.keys()
    assert not left, f"{idle}, keys remain: " + ", ".join(f"{key} ({_remaining(keyspace.pttl_ms(key))})"
                                                          for key in left)
    history = store.load("idle")
    if history:
        raise HistoryMismatch(f"{idle}, the session still holds messages", [], history)
    recreated = keyspace.keys()
    assert not recreated, (f"{idle}, loading the expired session created keys again (a ghost session without "
                           f"messages): {', '.join(recreated)}")
