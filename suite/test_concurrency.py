"""Concurrency scenarios: several writers append to one session at once, as two requests of one
conversation race in production.

The writers share one store object (threads for a sync store, tasks on one event loop for an async
one), or are processes of their own, each with a store and a client of its own; a barrier releases
them together. Each writer appends its own numbered messages, so the
suite can tell whose message went missing, came twice or moved, without knowing the order in which
the server applied the appends. These scenarios need a real server: fakeredis serialises every
command in one process, which hides most races.
"""

import math

import pytest

from memory_regression.reference.conversations import equal_cost
from memory_regression.harness.counter_discovery import own_counter
from memory_regression.harness.bursts import burst, check_burst, check_window

WRITERS = 4
EACH = 25            # messages per writer: the unwindowed burst is 100 appends
READERS = 2
REAL_SERVER = "writers racing on one session over separate connections"


@pytest.mark.real_server(REAL_SERVER)
def test_concurrent_writers_lose_nothing(stores, races, store_commands):
    """One writer appends 100 messages alone, the control: none is lost. Then four writers append 25
    messages each to one session at once, first as threads sharing one
    store object (tasks on one event loop for an async store), then as four processes, each with a
    store and a client of its own (as replicas of a service do; an async store on an event loop of
    its own): every message is there exactly once, and each writer's messages keep their order.

    If this fails with lost messages, the failure names the cause the store's commands show: append
    reads the history, changes it and writes it back (GET, parse, append, SET; or LRANGE then DEL
    and RPUSH), so a writer overwrites what another wrote in between: a lost update; where they show
    no such step, it lists the possible causes. Append with one atomic command (RPUSH), or in a Lua script, or WATCH the
    key and retry MULTI/EXEC when it changed. If only the processes lose messages, the store guards
    its read-modify-write with a lock of its own process (a threading.Lock or asyncio.Lock), which
    other processes do not see: make the write atomic in Redis instead. If a message is there twice,
    look for a retry of a write that had already executed. If a writer process raises before
    appending, the store cannot be built again in a fresh process from --store (it depends on state
    set up by the process that imported it)."""
    store = stores.new()
    alone = burst("alone", 1, WRITERS * EACH)   # the control: what the store loses with no race at all
    races.concurrently(store, "alone", alone)
    check_burst(store.load("alone"), alone, "one writer")
    threads = burst("race", WRITERS, EACH)
    races.concurrently(store, "race", threads)
    check_burst(store.load("race"), threads, "tasks on one event loop" if store.binding.is_async
                else "threads sharing one store", alone_intact=True, commands=store_commands)
    processes = burst("process race", WRITERS, EACH)
    races.in_processes(store, "process race", processes)
    check_burst(store.load("process race"), processes, "processes, each with a store of its own", alone_intact=True,
                commands=store_commands)


@pytest.mark.real_server(REAL_SERVER)
@pytest.mark.requires("count-window")
@pytest.mark.guarantees("atomic-window")
def test_concurrent_writers_keep_the_window(stores, races, findings, window, store_commands):
    """Four writers append at least two windows' worth of messages to one session at once while two
    readers load it over and over, first as threads sharing one store object (tasks on one event
    loop for an async store), then as four processes with a store of their own while the readers
    load in the scenario's process: no reader ever sees a history that is not a suffix of the
    session (a writer's messages with a gap, one twice); after the burst the session holds exactly
    the last N (under the suffix policy; at most N under the others). A reader that sees more than N
    during the burst is a warning (atomic-window): transient, not lost memory.

    If this warns, the warning names the cause the store's commands show: the trim runs outside the
    append's transaction (RPUSH, then LTRIM in a second round trip, so a reader in between sees too
    many); where push and trim run as one step, the store's window is larger or counted otherwise.
    If this fails: the trim's range is computed from a length read earlier (LTRIM from the length
    RPUSH returned: another writer's push moved the list, and the trim cuts a message it should
    keep). Push and trim in one MULTI/EXEC or Lua script, with LTRIM key -N -1. If only the
    processes break it, the store serialises push and trim with a lock of its own process, which the
    other processes do not see."""
    store = stores.new(max_messages=window)
    each = max(EACH, math.ceil(2 * window / WRITERS))
    threads = burst("window", WRITERS, each)
    check_window(findings, stores.window_policy, store, "window", window, threads,
                 races.concurrently(store, "window", threads, readers=READERS),
                 "tasks on one event loop" if store.binding.is_async else "threads sharing one store",
                 commands=store_commands)
    processes = burst("process window", WRITERS, each)
    check_window(findings, stores.window_policy, store, "process window", window, processes,
                 races.in_processes(store, "process window", processes, readers=READERS),
                 "processes, each with a store of its own", commands=store_commands)


@pytest.mark.real_server(REAL_SERVER)
@pytest.mark.requires("token-window")
@pytest.mark.guarantees("atomic-window")
def test_concurrent_writers_keep_the_token_budget(stores, races, findings, store_commands):
    """As test_concurrent_writers_keep_the_window, under the token budget of the smallest profile:
    every message costs the same (an eighth of the budget, 400 tokens at most, as the store is told to
    count), so the window holds a known number K of them, and writers append at least two windows'
    worth, as threads (tasks) and then as processes, while readers load. No reader sees a message twice
    or a gap, and after the burst the session holds exactly the newest K (at most K under a policy
    other than suffix); a reader over the budget during the burst is a warning (atomic-window).

    If this fails: the store reads the session, computes how many of the oldest to drop, and trims by
    index in a second step (LRANGE, then LTRIM drop -1): another writer's push and trim in between
    moved the list, and the stale index cuts messages it should keep. Trim in the append's Lua script,
    or WATCH the list and retry the MULTI/EXEC that trims when it changed. Where the store counts
    tokens its own way (a session of small messages whose costs differ between counters shows which
    counter), the failure names that counter: the window holds another number of these messages."""
    profile = min(stores.profiles, key=lambda p: p.max_tokens)
    tokens = min(profile.max_tokens // 8, 400)
    window = profile.max_tokens // tokens
    each = max(EACH, math.ceil(2 * window / WRITERS))
    cost = stores.counter(profile)
    threads, processes = (equal_cost(burst(prefix, WRITERS, each), tokens, cost, f"{prefix} {profile.name}")
                          for prefix in ("tokens", "process tokens"))
    if threads is None or processes is None:
        pytest.skip(f"the token counter ({cost.description}) makes no texts of exactly {tokens} tokens, which the "
                    "scenario needs to know how many messages the budget holds")
    label = f"{profile.name}, budget {profile.max_tokens} tokens ({window} messages of {tokens})"
    store = stores.new(profile=profile)
    try:
        check_window(findings, stores.window_policy, store, "tokens", window, threads,
                     races.concurrently(store, "tokens", threads, readers=READERS),
                     "tasks on one event loop" if store.binding.is_async else "threads sharing one store", label,
                     commands=store_commands)
        check_window(findings, stores.window_policy, store, "process tokens", window, processes,
                     races.in_processes(store, "process tokens", processes, readers=READERS),
                     "processes, each with a store of its own", label, commands=store_commands)
    except AssertionError as failure:   # a store that counts its own way holds another number of them
        own = own_counter(store, profile.max_tokens, stores.window_policy, cost)
        if own is None:
            raise
        first, _, rest = str(failure).partition("\n")
        raise AssertionError(f"{first}; {own}\n{rest}") from None
