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

from memory_regression.capabilities import Guarantee
from memory_regression.contract import Message
from memory_regression.reference import SUFFIX, burst, check_burst, foreign_or_repeated, listed, messages, out_of_run

WRITERS = 4
EACH = 25            # messages per writer: the unwindowed burst is 100 appends
READERS = 2
REAL_SERVER = "writers racing on one session over separate connections"


@pytest.mark.real_server(REAL_SERVER)
def test_concurrent_writers_lose_nothing(memory):
    """One writer appends 100 messages alone, the control: none is lost. Then four writers append 25
    messages each to one session at once, first as threads sharing one
    store object (tasks on one event loop for an async store), then as four processes, each with a
    store and a client of its own (as replicas of a service do; an async store on an event loop of
    its own): every message is there exactly once, and each writer's messages keep their order.

    If this fails with lost messages: append reads the history, changes it and writes it back (GET,
    parse, append, SET; or LRANGE then DEL and RPUSH), so a writer overwrites what another wrote in
    between: a lost update. Append with one atomic command (RPUSH), or in a Lua script, or WATCH the
    key and retry MULTI/EXEC when it changed. If only the processes lose messages, the store guards
    its read-modify-write with a lock of its own process (a threading.Lock or asyncio.Lock), which
    other processes do not see: make the write atomic in Redis instead. If a message is there twice,
    look for a retry of a write that had already executed. If a writer process raises before
    appending, the store cannot be built again in a fresh process from --store (it depends on state
    set up by the process that imported it)."""
    store = memory.store()
    alone = burst("alone", 1, WRITERS * EACH)   # the control: what the store loses with no race at all
    memory.concurrently(store, "alone", alone)
    check_burst(store.load("alone"), alone, "one writer")
    threads = burst("race", WRITERS, EACH)
    memory.concurrently(store, "race", threads)
    check_burst(store.load("race"), threads,
                "tasks on one event loop" if store.binding.is_async else "threads sharing one store", alone_intact=True)
    processes = burst("process race", WRITERS, EACH)
    memory.in_processes(store, "process race", processes)
    check_burst(store.load("process race"), processes, "processes, each with a store of its own", alone_intact=True)


@pytest.mark.real_server(REAL_SERVER)
@pytest.mark.requires("count-window")
@pytest.mark.guarantees("atomic-window")
def test_concurrent_writers_keep_the_window(memory, window):
    """Four writers append at least two windows' worth of messages to one session at once while two
    readers load it over and over, first as threads sharing one store object (tasks on one event
    loop for an async store), then as four processes with a store of their own while the readers
    load in the scenario's process: no reader ever sees a history that is not a suffix of the
    session (a writer's messages with a gap, one twice); after the burst the session holds exactly
    the last N (under the suffix policy; at most N under the others). A reader that sees more than N
    during the burst is a warning (atomic-window): transient, not lost memory.

    If this warns: the trim runs outside the append's transaction (RPUSH, then LTRIM in a second
    round trip, so a reader in between sees too many). If this fails: the trim's range is computed
    from a length read earlier (LTRIM from the length RPUSH returned: another writer's push moved the list, and the
    trim cuts a message it should keep). Push and trim in one MULTI/EXEC or Lua script, with LTRIM
    key -N -1. If only the processes break it, the store serialises push and trim with a lock of its
    own process, which the other processes do not see."""
    store = memory.store(max_messages=window)
    each = max(EACH, math.ceil(2 * window / WRITERS))
    threads = burst("window", WRITERS, each)
    check_window(store, "window", window, threads, memory.concurrently(store, "window", threads, readers=READERS),
                 "tasks on one event loop" if store.binding.is_async else "threads sharing one store", memory)
    processes = burst("process window", WRITERS, each)
    check_window(store, "process window", window, processes,
                 memory.in_processes(store, "process window", processes, readers=READERS),
                 "processes, each with a store of its own", memory)


def check_window(store, session_id: str, window: int, writers: list[list[Message]], seen: list[list[Message]],
                 how: str, memory) -> None:
    """What the readers ``seen`` during the burst hold no message twice, none that was not appended,
    and no gap; loads over the window during the burst are a warning (atomic-window: transient, the
    session after it is what is kept); the session after the burst keeps the window."""
    for history in seen:
        problem = foreign_or_repeated(history, writers) or out_of_run(history, writers)
        if problem:
            raise AssertionError(f"N={window}, while {WRITERS} writers appended ({how}): {problem}\n"
                                 f"that load:\n{listed(history)}")
    over = [len(history) for history in seen if len(history) > window]
    if over:
        memory.warn(Guarantee.ATOMIC_WINDOW,
                    f"N={window}, while {WRITERS} writers appended ({how}): {len(over)} of {len(seen)} loads held more "
                    f"than the window, up to {messages(max(over))}: the trim runs after the push, not with it (RPUSH, "
                    "then LTRIM in a second round trip), so a reader between the two sees too many; push and trim in "
                    "one MULTI/EXEC or Lua script")
    history = store.load(session_id)
    wanted = window if memory.window_policy == SUFFIX else None
    problem = foreign_or_repeated(history, writers) or out_of_run(history, writers)
    last_missing = [f"writer {w + 1}'s last message" for w, sent in enumerate(writers)
                    if any(m in history for m in sent) and sent[-1] not in history]
    if len(history) > window or (wanted is not None and len(history) != wanted):
        problem = f"the session holds {messages(len(history))}, expected {window}"
    elif last_missing:
        problem = f"the session holds older messages of a writer but not {last_missing[0]}"
    if problem:
        raise AssertionError(f"N={window}, after {WRITERS} writers appended "
                             f"{sum(map(len, writers))} messages at once ({how}): {problem}\n"
                             f"the history ({messages(len(history))}):\n{listed(history)}")
    memory.note(f"N={window}, {how}: readers loaded the session {len(seen)} times during the burst")
