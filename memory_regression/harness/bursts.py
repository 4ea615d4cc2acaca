"""Several writers at once: what each appends (:func:`burst`), numbered so that a history tells
whose message went missing, came twice or moved; and what a history after the burst shows of them
(:func:`check_burst`): every message of every writer once, each writer's in its order; and what
readers loaded during a burst on a windowed session, and the window after it (:func:`check_window`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..contract.capabilities import Guarantee
from .command_evidence import lost_update_cause, over_window_cause
from ..contract.rules import Message
from .findings import Findings
from ..reference.model import SUFFIX, WindowPolicy, messages

if TYPE_CHECKING:
    from .store_commands import CommandLog


def burst(prefix: str, writers: int, each: int) -> list[list[Message]]:
    """What each of ``writers`` writers appends at once, in its order, numbered so that a history
    tells whose message went missing, came twice or moved: user and assistant alternate, as in a
    conversation."""
    return [[Message("user" if i % 2 == 0 else "assistant", f"{prefix} writer {w + 1} #{i + 1}")
             for i in range(each)] for w in range(writers)]


def whose(writers: list[list[Message]]) -> dict[Message, tuple[int, int]]:
    """Each message the writers appended, with its (writer, index): whose it is, and where in its order."""
    found: dict[Message, tuple[int, int]] = {}
    for w, sent in enumerate(writers):
        for i, message in enumerate(sent):
            found.setdefault(message, (w, i))
    return found


def foreign_or_repeated(history: list[Message], appended: dict[Message, tuple[int, int]]) -> str | None:
    """A message in ``history`` that no writer appended (``appended``: :func:`whose`), or one that is
    there twice, in store terms."""
    first_at: dict[Message, int] = {}
    for position, message in enumerate(history):
        if message not in appended:
            return f"the history holds {message.describe()} at position {position + 1}, which no writer appended"
        first = first_at.setdefault(message, position)
        if first != position:
            return (f"{message.describe()} is in the history twice (positions {first + 1} and "
                    f"{position + 1}): one append stored it twice (a retried write, or a writer that re-saved "
                    "what it read)")
    return None


def out_of_run(history: list[Message], appended: dict[Message, tuple[int, int]]) -> str | None:
    """Where ``history`` (of messages in ``appended``: :func:`whose`) holds a writer's messages that
    are not consecutive and in its order: a suffix of the session holds, of each writer, a run of
    consecutive messages."""
    runs: dict[int, list[int]] = {}   # writer -> the indices of its messages, in the history's order
    for message in history:
        w, i = appended[message]
        runs.setdefault(w, []).append(i)
    for w, indices in sorted(runs.items()):
        for before, after in zip(indices, indices[1:]):
            if after == before + 1:
                continue
            follows = f"writer {w + 1}'s message #{after + 1} follows its #{before + 1}"
            if before + 1 in indices:   # present, further on: moved, not lost
                return f"{follows}, and its #{before + 2} comes later in the history: reordered"
            return follows + (f", and its #{before + 2} is missing" if after > before + 1 else ", out of order")
    return None


def listed(history: list[Message]) -> str:
    """``history`` numbered, a message a line."""
    return "\n".join(f"{i + 1:>4}  {m.describe()}" for i, m in enumerate(history))


def check_burst(history: list[Message], writers: list[list[Message]], how: str, alone_intact: bool = False,
                commands: "CommandLog | None" = None) -> None:
    """Every message the writers appended is in ``history`` exactly once, each writer's in its order.
    Losses of several writers are said with the cause the store's ``commands`` show
    (:func:`.command_evidence.lost_update_cause`), ``alone_intact`` when the scenario checked first
    that one writer alone appending as many lost nothing."""
    appended = [message for sent in writers for message in sent]
    index = whose(writers)
    problem = foreign_or_repeated(history, index)
    lost = [message for message in appended if message not in history]
    if lost and len(writers) == 1:
        problem = (f"lost {messages(len(lost))} of {len(appended)} appended one after another ({how}), first "
                   f"{lost[0].describe()}: the store loses messages with no other writer (a cap, a window it was "
                   "not given, or an append that fails without a word)")
    elif lost:
        problem = (f"lost {messages(len(lost))} of {len(appended)} appended by {len(writers)} writers at once "
                   f"({how}), first {lost[0].describe()}: "
                   f"{lost_update_cause(commands, alone_intact, frozenset(m.content for m in appended))}")
    problem = problem or out_of_run(history, index)
    if problem:
        raise AssertionError(f"{problem}\nthe history ({messages(len(history))}):\n{listed(history)}")


def check_window(findings: Findings, policy: WindowPolicy, store: Any, session_id: str, window: int,
                 writers: list[list[Message]], seen: list[list[list[Message]]], how: str, label: str = "",
                 commands: "CommandLog | None" = None) -> None:
    """What each reader loaded during the burst (``seen``: its loads, in order) holds no message twice,
    none that was not appended, and no gap, and, under suffix, a session that held the window never
    holds less again; loads over the window during the burst are a warning (atomic-window: transient,
    the session after it is what is kept); the session after the burst keeps the window of
    ``window`` messages (``label`` names it: N=5 by default), under ``policy``, and at most that many
    under another. Loads over the window are said with the cause the store's ``commands`` show
    (:func:`.command_evidence.over_window_cause`)."""
    label, index = label or f"N={window}", whose(writers)
    for loads in seen:
        for before, history in zip([None, *loads], loads):
            problem = foreign_or_repeated(history, index) or out_of_run(history, index)
            if (not problem and before is not None and policy == SUFFIX
                    and len(before) >= window > len(history)):
                problem = (f"a reader loaded {messages(len(before))}, then {messages(len(history))}: the session lost "
                           "messages it held (a trim cut more than the oldest: its range came from a length or a "
                           "read that another writer had changed)")
            if problem:
                raise AssertionError(f"{label}, while {len(writers)} writers appended ({how}): {problem}\n"
                                     f"that load:\n{listed(history)}")
    seen = [history for loads in seen for history in loads]
    over = [len(history) for history in seen if len(history) > window]
    if over:
        findings.warn(Guarantee.ATOMIC_WINDOW,
                      f"{label}, while {len(writers)} writers appended ({how}): {len(over)} of {len(seen)} loads held "
                      f"more than the window, up to {messages(max(over))}: {over_window_cause(commands)}")
    history = store.load(session_id)
    wanted = window if policy == SUFFIX else None
    problem = foreign_or_repeated(history, index) or out_of_run(history, index)
    last_missing = [f"writer {w + 1}'s last message" for w, sent in enumerate(writers)
                    if any(m in history for m in sent) and sent[-1] not in history]
    if len(history) > window or (wanted is not None and len(history) != wanted):
        problem = f"the session holds {messages(len(history))}, expected {window}"
    elif last_missing:
        problem = f"the session holds older messages of a writer but not {last_missing[0]}"
    if problem:
        raise AssertionError(f"{label}, after {len(writers)} writers appended "
                             f"{sum(map(len, writers))} messages at once ({how}): {problem}\n"
                             f"the history ({messages(len(history))}):\n{listed(history)}")
    findings.note(f"{label}, {how}: readers loaded the session {len(seen)} times during the burst")
