"""Several writers at once: what each appends (:func:`burst`), numbered so that a history tells
whose message went missing, came twice or moved; and what a history after the burst shows of them
(:func:`check_burst`): every message of every writer once, each writer's in its order."""

from __future__ import annotations

from .contract import Message
from .reference import messages


def burst(prefix: str, writers: int, each: int) -> list[list[Message]]:
    """What each of ``writers`` writers appends at once, in its order, numbered so that a history
    tells whose message went missing, came twice or moved: user and assistant alternate, as in a
    conversation."""
    return [[Message("user" if i % 2 == 0 else "assistant", f"{prefix} writer {w + 1} #{i + 1}")
             for i in range(each)] for w in range(writers)]


def whose(message: Message, writers: list[list[Message]]) -> tuple[int, int] | None:
    """(writer, index) of ``message`` among the writers' messages, or None if none appended it."""
    for w, sent in enumerate(writers):
        if message in sent:
            return w, sent.index(message)
    return None


def foreign_or_repeated(history: list[Message], writers: list[list[Message]]) -> str | None:
    """A message in ``history`` that no writer appended, or one that is there twice, in store terms."""
    for position, message in enumerate(history):
        if whose(message, writers) is None:
            return f"the history holds {message.describe()} at position {position + 1}, which no writer appended"
        if history.index(message) != position:
            return (f"{message.describe()} is in the history twice (positions {history.index(message) + 1} and "
                    f"{position + 1}): one append stored it twice (a retried write, or a writer that re-saved "
                    "what it read)")
    return None


def out_of_run(history: list[Message], writers: list[list[Message]]) -> str | None:
    """Where ``history`` holds a writer's messages that are not consecutive and in its order: a
    suffix of the session holds, of each writer, a run of consecutive messages."""
    for w in range(len(writers)):
        indices = [whose(m, writers)[1] for m in history if whose(m, writers)[0] == w]
        for before, after in zip(indices, indices[1:]):
            if after != before + 1:
                return (f"writer {w + 1}'s message #{after + 1} follows its #{before + 1}"
                        + (f", and its #{before + 2} is missing" if after > before + 1 else ", out of order"))
    return None


def listed(history: list[Message]) -> str:
    """``history`` numbered, a message a line."""
    return "\n".join(f"{i + 1:>4}  {m.describe()}" for i, m in enumerate(history))


def check_burst(history: list[Message], writers: list[list[Message]], how: str, alone_intact: bool = False) -> None:
    """Every message the writers appended is in ``history`` exactly once, each writer's in its order.
    Losses of several writers are called a lost update outright only when ``alone_intact``: the
    scenario checked first that one writer alone appending as many lost nothing."""
    appended = [message for sent in writers for message in sent]
    problem = foreign_or_repeated(history, writers)
    lost = [message for message in appended if message not in history]
    if lost and len(writers) == 1:
        problem = (f"lost {messages(len(lost))} of {len(appended)} appended one after another ({how}), first "
                   f"{lost[0].describe()}: the store loses messages with no other writer (a cap, a window it was "
                   "not given, or an append that fails without a word)")
    elif lost:
        cause = ("though one writer appending as many loses none: appends that overlap overwrite each other (a lost "
                 "update)" if alone_intact else "appends that overlap overwrite each other (a lost update), or the "
                 "store loses messages even with one writer")
        problem = (f"lost {messages(len(lost))} of {len(appended)} appended by {len(writers)} writers at once "
                   f"({how}), first {lost[0].describe()}: {cause}")
    problem = problem or out_of_run(history, writers)
    if problem:
        raise AssertionError(f"{problem}\nthe history ({messages(len(history))}):\n{listed(history)}")
