"""Multi-backend consistency: a store that writes each message to Redis and mirrors it into a second
backend (a vector store, SQL) says through ``consistent_state(session_id) -> bool`` whether its
backends agree on a session. After concurrent writes the suite polls it (with tenacity, no fixed
sleeps) until it holds, within ``--consistency-timeout``; once it holds, the history must be what
the reference model says. The time each session took to agree is reported as a finding.

A store without consistent_state skips this group. The writers share one store object: threads for
a sync store, tasks on the scenario's event loop for an async one (whose polls run on that loop too,
so tasks the store started go on between them).
"""

import statistics

import pytest

from memory_regression.contract.capabilities import Capability
from memory_regression.harness.bursts import burst, check_burst
from memory_regression.reference.diagnosis import HistoryMismatch, assert_history
from memory_regression.reference.window_problems import window_problem
from memory_regression.reference.model import count_window, expected_count_window, messages

SESSIONS = 3         # sessions written at once, one writer each, per window size
EACH = 20            # messages per writer (at least 2N, so that the window trims)
SHARED_WRITERS = 4   # writers of the one session of the second scenario
# what a wrong history after consistent_state said True shows, and what would make it
AGREED_YET_WRONG = ("consistent_state said the backends agree, so it compares too little to notice (counts, or "
                    "whether a queue is empty); a history gone wrong while writers of several sessions shared the "
                    "store object is what state shared between its calls does (a \"current session\" attribute)")


def agreed_finding(wait, what: str) -> str:
    """The time to consistency of ``wait``'s sessions, p50 and max, as a finding."""
    times = sorted(wait.agreed.values())
    return (f"{what}: consistent_state held after p50 {statistics.median(times) * 1000:.0f} ms, max "
            f"{times[-1] * 1000:.0f} ms over {len(times)} session{'s' if len(times) > 1 else ''} "
            f"({wait.polls} polls)")


def check_agreed(findings, wait, store, what: str) -> None:
    """Every session of ``wait`` agreed within the timeout; else fail with how long it lagged."""
    if wait.pending:
        held = (f"; the other {len(wait.agreed)} agreed after p50 {statistics.median(wait.agreed.values()) * 1000:.0f}"
                f" ms, max {max(wait.agreed.values()) * 1000:.0f} ms") if wait.agreed else ""
        loaded = ", ".join(f"{session!r} loads {messages(len(store.load(session)))}" for session in wait.pending)
        total = len(wait.pending) + len(wait.agreed)
        raise AssertionError(
            f"{what}: consistent_state still False after {wait.waited_s:.1f} s for {len(wait.pending)} of {total} "
            f"session{'s' if total > 1 else ''} ({loaded}), polled {wait.polls} times{held}: the store's second "
            "backend lags behind Redis and never caught up (a mirror write dropped or overwritten under "
            "concurrent writes, applied out of order, or never sent); if it is meant to lag longer than "
            f"{wait.timeout_s:g} s, raise --consistency-timeout")
    findings.note(agreed_finding(wait, what))


@pytest.mark.requires("consistency")
def test_backends_agree_after_concurrent_writes(stores, races, until_consistent, findings):
    """For each window size (once, unwindowed, for a store without a count window), 3 writers append
    20 messages each (at least 2N), each to a session of its own, all at once through one store
    object; then the suite polls consistent_state for every session until it says True, within
    --consistency-timeout, and each session's history must then be exactly what the reference model
    keeps of its writer's messages (the window policy's last N). The time each session took to agree
    is reported (p50 and max).

    If consistent_state stays False: the mirror loses a write under concurrency (a pending write per
    session overwritten by the next, a queue dropped, a write swallowed after an error), or never
    applies it: mirror every write, or copy the session as the primary holds it after each change.
    If consistent_state holds but the history is wrong (another session's messages, a gap): the
    store mixes sessions up when writes race (state shared between calls on the store object, such
    as a "current session" attribute) and its consistent_state compares too little (counts, or only
    whether a queue is empty) to notice: compare the backends' content, in order."""
    windows = stores.window_sizes if stores.has(Capability.COUNT_WINDOW) else (None,)
    for window in windows:
        store = stores.new(max_messages=window) if window else stores.new()
        label = f"N={window}" if window else "unwindowed"
        sessions = [f"consistency {label} session {k + 1}" for k in range(SESSIONS)]
        writers = burst(f"{label} consistency", SESSIONS, max(EACH, 2 * (window or 0)))
        races.concurrently(store, sessions[0], writers, sessions=sessions)
        wait = until_consistent(store, sessions)
        check_agreed(findings, wait, store, f"{label}, {SESSIONS} sessions written at once by a writer each")
        for session, sent in zip(sessions, writers):
            appended, history = store.stored_form(sent), store.load(session)
            context = f"{label}, session {session!r}, once consistent_state held: "
            if window is None:
                assert_history(appended, history, appended, context, hint=lambda _: AGREED_YET_WRONG)
                continue
            problem = window_problem(appended, history, count_window(window), stores.window_policy)
            if problem:
                raise HistoryMismatch(f"{context}{problem}; {AGREED_YET_WRONG}",
                                      expected_count_window(appended, window, stores.window_policy), history)


@pytest.mark.requires("consistency")
def test_backends_agree_when_writers_share_a_session(stores, races, until_consistent, findings):
    """Four writers append 25 messages each to one session at once, through one store object; then
    the suite polls consistent_state until it says True, within --consistency-timeout, and the
    history must hold every message exactly once, each writer's in its order (the order between
    writers is the store's). The time to agree is reported.

    If consistent_state stays False: the mirror applies the writes of one session in another order
    than Redis did (writes sent to it from several threads, or from a pool, without the position
    Redis gave them), or drops one: order the mirror by what the primary holds, not by arrival. If
    the history is wrong once it holds: the store reads from a mirror that lost or reordered
    messages while its consistent_state says the backends agree."""
    store = stores.new()
    writers = burst("shared consistency", SHARED_WRITERS, 25)
    races.concurrently(store, "shared", writers)
    wait = until_consistent(store, ["shared"])
    check_agreed(findings, wait, store, f"one session written at once by {SHARED_WRITERS} writers")
    check_burst(store.load("shared"), writers,
                "tasks on one event loop" if store.binding.is_async else "threads sharing one store")
