"""Memory pressure: the server runs out of memory while conversations are being written.

A Redis server that holds chat memory reaches its ``maxmemory`` sooner or later, and then does what
its ``maxmemory-policy`` says: under ``noeviction`` it refuses writes with an OOM error, under
``allkeys-lru`` it deletes keys it picks, whole, to make room. A store must let the OOM error
through (never answer as if the message were stored), and must keep each session in a form that
eviction can only delete whole, never leave half of.

The limit and the policy are server-wide, so each scenario runs on a redis-server of its own
(``own_server``), never on the run's server, which the other workers share. The limit is
set a little above what that server already uses (its baseline ``used_memory`` is over 1 MB, so a
literal ``maxmemory 1mb`` would refuse the very first write). fakeredis accepts ``maxmemory`` and
ignores it: these scenarios need a real server.
"""

import functools
import random
import time

import pytest

from memory_regression.contract.rules import Message
from memory_regression.reference.diagnosis import assert_history, diagnose
from memory_regression.reference.model import messages

REAL_SERVER = "maxmemory, out-of-memory errors and eviction"

# noeviction: the limit is this far above what the server uses once the store has connected; the
# session's messages are incompressible text, so the limit is reached within a quarter of the bound
NOEVICTION_HEADROOM = 128 * 1024
NOEVICTION_CONTENT = 2048
NOEVICTION_MOST = 4 * NOEVICTION_HEADROOM // NOEVICTION_CONTENT

# allkeys-lru: sessions written in turn with no limit; then the limit is set this far above what they
# use, and a newcomer session writes until keys are evicted, a further two sessions' worth after, and
# until half the keys of the earlier sessions, and at least EARLIER_EVICTED, are gone (Redis' LRU clock
# ticks once a second, so within a second it evicts keys about at random, the newcomer's among them,
# and over several the oldest first: the early messages of every session)
SESSIONS = 8
PER_SESSION = 24
LRU_CONTENT = 1024
LRU_HEADROOM = 16 * 1024
NEWCOMER_MOST = 2 * SESSIONS * PER_SESSION
EARLIER_EVICTED = 2
LRU_TICK_S = 1.1   # Redis' LRU clock ticks once a second: keys read after this are younger than those only written


def filler(label: str, count: int, size: int) -> list[Message]:
    """``count`` messages of about ``size`` characters, user and assistant alternating, numbered, of
    seeded random text that no compression shrinks much (a store that compresses fills memory too)."""
    rng = random.Random(label)
    return [Message("user" if i % 2 == 0 else "assistant", f"{label} {i + 1:04d} " + rng.randbytes(size // 2).hex())
            for i in range(count)]


def limit_memory(server, headroom: int) -> int:
    """Set the server's ``maxmemory`` ``headroom`` bytes above what it uses now; return the limit."""
    limit = int(server.memory_info()["used_memory"]) + headroom
    server.admin.config_set("maxmemory", limit)
    return limit


def oom_refusals(client) -> int | None:
    """How many commands the server refused for want of memory since it started: OOM replies, and the
    transactions it aborted (EXECABORT) for a command refused as it was queued, as Redis 8 counts a refusal
    inside MULTI (INFO errorstats, Redis 6.2 and later, which count every error reply in
    total_error_replies); None where it does not count them."""
    if "total_error_replies" not in client.info("stats"):
        return None
    errors = client.info("errorstats")
    return sum(int(errors.get(f"errorstat_{code}", {}).get("count", 0)) for code in ("OOM", "EXECABORT"))


def kb(size: int) -> str:
    return f"{size / 1024:,.0f} KB"


@pytest.mark.real_server(REAL_SERVER)
def test_append_raises_when_memory_is_full(stores, own_server, findings):
    """Under ``maxmemory-policy noeviction``, with the limit 128 KB above what the server uses, a
    session gets 2 KB messages until an append raises (at most 256): every append that returned is
    in the history, so once memory is full an append raises rather than return as if stored.

    If this fails where the server refused writes with OOM (its error statistics say how many): the
    store swallows Redis' OOM error ("OOM command not allowed when used memory > 'maxmemory'",
    redis-py's ``OutOfMemoryError``, a ``ResponseError``), often in a broad ``except`` around the
    write meant for something else; the application believes the message is kept, and
    the conversation loses it without a word. Let the error through (or raise one of your own), so
    the caller can tell the user or retry later."""
    server = own_server({"maxmemory-policy": "noeviction"})
    store = stores.new_on(server.url)
    session, sent = "pressure", filler("pressure", NOEVICTION_MOST + 1, NOEVICTION_CONTENT)
    expected = [store.add(session, sent[0])]   # connected before the baseline is measured
    server.used_by_the_store("its first append")   # else no append could fill this server's memory
    limit = limit_memory(server, NOEVICTION_HEADROOM)
    raised = None
    for message in sent[1:]:
        try:
            stored = store.add(session, message)
        except Exception as exc:
            raised = exc
            break
        expected.append(stored)
    used = int(server.memory_info()["used_memory"])
    refusals = oom_refusals(server.admin)
    server.admin.config_set("maxmemory", 0)   # the load is not judged under pressure
    history = store.load(session)
    lost = [(i, m) for i, m in enumerate(expected) if m not in history]
    if lost:
        index, message = lost[0]
        swallows = ("the store swallows Redis' OOM error ('OOM command not allowed when used memory > 'maxmemory''), "
                    "so the conversation loses messages without a word; let the error through")
        cause = (f"the server answered {refusals} OOM and EXECABORT errors (its error statistics), and {swallows}"
                 if refusals else
                 "yet the server answered no OOM or EXECABORT error (its error statistics): the store lost it "
                 "otherwise (possible causes: a cap or window of its own, a write it never sent)" if refusals == 0 else
                 f"possible causes: {swallows}, or a cap or window of its own (this server counts no OOM refusals)")
        raise AssertionError(
            f"append({session!r}, {message.role!r}, '{message.content[:24]}...') (message {index + 1}) returned as if "
            f"stored while the server's memory was full (maxmemory-policy noeviction, its maxmemory of {kb(limit)} "
            "reached), but the message is not in the history"
            + (f", nor are {len(lost) - 1} more appended after it" if len(lost) > 1 else "") + f": {cause}")
    refused = store.stored_form([sent[len(expected)]]) if raised is not None else []
    if history not in (expected, expected + refused):   # the append that raised may have been kept
        raise AssertionError(f"after appends until memory was full (noeviction): {diagnose(expected, history, sent)}")
    if raised is None:
        pytest.skip(f"{len(expected)} appends of {kb(NOEVICTION_CONTENT)} did not fill the {kb(NOEVICTION_HEADROOM)} "
                    f"left under maxmemory (used_memory {kb(used)} of {kb(limit)}): the store keeps its messages "
                    "somewhere this scenario does not fill, nothing to judge")
    findings.note(f"noeviction: append {len(expected) + 1} raised once memory was full (maxmemory {kb(limit)}, "
                  f"{kb(limit - NOEVICTION_HEADROOM)} used before the session filled it): {type(raised).__name__}: "
                  f"{str(raised)[:160]}")


@pytest.mark.real_server(REAL_SERVER)
def test_eviction_leaves_sessions_whole_or_gone(stores, own_server, findings):
    """Under ``maxmemory-policy allkeys-lru``, 8 sessions of 24 messages (1 KB each) are written in
    turn, one message to each in every round (so that every session's keys are as old as every
    other's, however often Redis' LRU clock ticked meanwhile: written one session after another on a
    slow machine, the first sessions would be evicted whole and a store that keeps a session in
    several keys would pass), the limit is set 16 KB above what the server then uses, and a
    newcomer session keeps writing until Redis has evicted keys, two sessions' worth after, and half
    the keys of the 8 sessions or more. Before the limit, a second after the last write, each session
    is loaded, as a conversation is read: the keys a load reads are then younger than those only
    written, which the LRU evicts first, so a store that keeps a session in several keys (a sorted
    set beside a sequence counter, a list beside an index) loses one of a session's keys and keeps
    another on every run, whatever the engine. With the limit lifted, each of the 8 loads either
    intact or empty (evicted whole), and after one more message either intact with it or with it
    alone; the newcomer holds the newest of its messages, in order. The sessions evicted are
    reported: silently, under this policy, the conversations are gone.

    If this fails with a history that has holes or is out of order, or a load that raises: the store
    keeps a session in several keys (a key per message and an index of them, a hash of messages
    beside a list of ids, a sequence counter beside a sorted set), and eviction, which deletes keys
    one at a time, took some and left the others; the failure names the session's keys Redis
    evicted and those it left, with what each held. Keep a session's messages in one key (one list),
    or treat a missing part as the loss of the whole session (and delete the rest). Whatever the
    store does, a conversation under ``allkeys-lru`` can vanish: ``noeviction`` makes writes fail
    instead, ``volatile-lru`` evicts only keys with a TTL."""
    server = own_server({"maxmemory-policy": "allkeys-lru"})
    store = stores.new_on(server.url)
    sessions = {f"lru {n + 1}": filler(f"lru {n + 1}", PER_SESSION, LRU_CONTENT) for n in range(SESSIONS)}
    expected: dict[str, list[Message]] = {session: [] for session in sessions}
    for turn in range(PER_SESSION):
        for session, sent in sessions.items():
            expected[session].append(store.add(session, sent[turn]))
        if turn == 0:
            server.used_by_the_store(f"its first appends to {SESSIONS} sessions")
    described = {key: held(server.admin, key) for key in server.admin.keys()}   # reading a key makes it younger
    time.sleep(LRU_TICK_S)   # then each session is read, as a conversation is, and what its load reads is younger
    for session, want in expected.items():
        assert_history(want, store.load(session), sessions[session], context=f"session {session!r}, before eviction: ")
    earlier = {key: described.get(key, "made by a load") for key in sorted(server.admin.keys())}   # KEYS touches none
    if not earlier:
        pytest.skip("the sessions left no key on the server once they were loaded: the store's load deletes what it "
                    "reads (test_loading_twice_changes_nothing judges that), so there is nothing for eviction to take")
    limit = limit_memory(server, LRU_HEADROOM)
    newcomer, sent = "newcomer", filler("newcomer", NEWCOMER_MOST, LRU_CONTENT)
    kept, more, enough = [], 2 * PER_SESSION, max(EARLIER_EVICTED, len(earlier) // 2)
    for message in sent:
        kept.append(store.add(newcomer, message))
        if int(server.admin.info("stats")["evicted_keys"]):
            more -= 1
            if more <= 0 and earlier and server.missing(list(earlier)) >= enough:
                break
    evicted_keys = int(server.admin.info("stats")["evicted_keys"])
    server.admin.config_set("maxmemory", 0)   # nothing more is evicted while the sessions are loaded
    if not evicted_keys:
        pytest.skip(f"{len(kept)} appends of {kb(LRU_CONTENT)} over a maxmemory of {kb(limit)} evicted nothing: "
                    "the store keeps its messages somewhere this scenario does not fill, nothing to judge")
    gone_keys = [key for key in earlier if not server.admin.exists(key)]
    gone = []
    for session, want in expected.items():
        after, again = Message("user", f"{session} after the eviction"), False
        own = [key for key in earlier if session in key]   # "lru 1" is in no other session's name: 8 sessions
        keys = parts(session, earlier, gone_keys)
        history = working(functools.partial(store.load, session), session, "loaded", evicted_keys, keys)
        if own and set(own) <= set(gone_keys) and history:   # evicted whole, yet not empty
            raise AssertionError(
                f"session {session!r} was evicted whole (Redis evicted {', '.join(repr(key) for key in own)}, all its "
                f"keys), yet its load returned {messages(len(history))}"
                + (", all it held before" if history == want else f": {diagnose([], history, sessions[session])}")
                + ": the store answers from state kept outside Redis (in the instance, its process, or a backend of "
                "its own), or makes a history up where Redis holds none")
        if history in (want, []):   # intact or evicted whole: then one more message goes after it
            added = working(functools.partial(store.add, session, after), session, "appended to", evicted_keys, keys)
            again, want = True, [*(want if history else []), added]
            history = working(functools.partial(store.load, session), session, "loaded again", evicted_keys, keys)
        if history != want:
            raise AssertionError(
                f"session {session!r} came back mangled after Redis evicted {evicted_keys} keys under allkeys-lru"
                f"{' and one more append' if again else ''}: {diagnose(want, history, [*sessions[session], after])}; "
                "eviction deletes whole keys, so a session kept in one key is intact or gone: this store keeps it in "
                f"several{keys}")
        if len(want) == 1:
            gone.append(session)
    history = store.load(newcomer)
    if history != kept[len(kept) - len(history):]:
        own = sorted(key for key in server.admin.keys() if newcomer in key)
        several = ("eviction deletes whole keys, so a session kept in one key is intact or gone: this store keeps it "
                   "in several; " if len(own) > 1 else "")
        raise AssertionError(f"the newcomer session, written while Redis evicted keys, is not the newest of its "
                             f"messages in order: {diagnose(kept, history, sent)}; {several}its keys after {len(kept)} "
                             f"appends (Redis evicts while they run): {keys_now(server.admin, own)}")
    findings.note(
        f"allkeys-lru evicted {evicted_keys} keys (maxmemory {kb(limit)}), {len(gone_keys)} of the {len(earlier)} keys "
        "of the earlier sessions among them: "
        + (f"{len(gone)} of {SESSIONS} sessions ({', '.join(repr(s) for s in gone)}) lost what they held, evicted "
           "silently: the store raised nothing, and those conversations are gone" if gone
           else f"none of the {SESSIONS} earlier sessions was evicted whole")
        + (f"; the newcomer holds its last {len(history)} of {len(kept)} messages" if len(history) < len(kept) else ""))


def working(call, session: str, done: str, evicted_keys: int, keys: str):
    """``call()``, whose exception says the store cannot use a session some of whose keys were evicted."""
    try:
        return call()
    except Exception as exc:
        raise AssertionError(
            f"session {session!r} raised when {done} after Redis evicted {evicted_keys} keys under allkeys-lru: "
            f"{type(exc).__name__}: {exc}: the store keeps the session in several keys and cannot use it with some of "
            f"them gone{keys}; keep it in one key, or treat a session missing a part as gone") from exc


def held(client, key: str) -> str:
    """What a key holds, in words: its type and size, or a short value ("a string, '24'"); reading it makes the key
    younger to the LRU."""
    kind = client.type(key)
    sizes = {"list": client.llen, "zset": client.zcard, "hash": client.hlen, "set": client.scard, "stream": client.xlen}
    if kind == "string":
        value = client.get(key) or ""
        return f"a string, {value[:24]!r}" + ("..." if len(value) > 24 else "")
    if kind in sizes:
        return f"a {SIZED.get(kind, kind)} of {sizes[kind](key)}"
    return f"a {kind}"


SIZED = {"zset": "sorted set", "hash": "hash of fields", "set": "set of members"}


def keys_now(client, own: list[str]) -> str:
    """The keys ``own``, with what each holds now (at most five)."""
    shown = ", ".join(f"{key!r} ({held(client, key)})" for key in own[:5]) or "none is named after it"
    return shown + (f", and {len(own) - 5} more" if len(own) > 5 else "")


def parts(session: str, earlier: dict[str, str], gone_keys: list[str]) -> str:
    """The keys of ``session`` (those whose name holds it) that Redis evicted and those it left, with what each
    held before; the earlier keys it evicted where none is named after the session."""
    own = [key for key in earlier if session in key]
    if not own:
        shown = ", ".join(f"{key!r} ({earlier[key]})" for key in gone_keys[:5])
        return f" (no key is named after the session; Redis evicted {shown}{', ...' if len(gone_keys) > 5 else ''})"
    lost = [f"{key!r} ({earlier[key]})" for key in own if key in gone_keys]
    left = [f"{key!r} ({earlier[key]})" for key in own if key not in gone_keys]
    if not lost:
        return ""
    return f": of its keys Redis evicted {', '.join(lost)}" + (f" and left {', '.join(left)}" if left else "")
