"""Compaction: a store's ``compact(session_id)`` replaces the oldest messages of a session with one
message holding their summary, and keeps the rest after it.

Production stores compact long conversations so that the model sees a summary instead of turns
that no longer fit; done wrong, the summary sits beside the originals it replaced (the model reads
everything twice), or a message appended while the summary was being written disappears with the
originals. The suite hands the store its own summariser (``summarize``): deterministic, no model,
and its text lists the messages it was given ("summary of 3 messages: [[role, content], ...]"), so
the suite can tell exactly which messages a summary covers, the earlier summary included when a
session is compacted twice. After a compaction a load must give one message whose content is
exactly that text (any role: the finding names the store's), then the messages it does not cover:
every message of the session exactly once, in order.
"""

import functools
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures import wait
from typing import Sequence

import pytest

from memory_regression.harness.command_evidence import rewrite_cause
from memory_regression.contract.rules import Message
from memory_regression.reference.conversations import numbered_messages, sized_text, window_turns
from memory_regression.reference.diagnosis import HistoryMismatch, diagnose
from memory_regression.reference.window_problems import compaction_problem, window_problem
from memory_regression.reference.model import (Window, compacted_window, count_window, expected_after_compaction,
    messages, summarised, summarize, token_budget)

SESSION = "compacted"
BEFORE = 8          # messages in the session before its first compaction
MORE = 4            # appended between two compactions
AFTER = 2           # appended after a compaction, to see the store go on
ASIDE = 3           # appended by another store instance while compact is summarising
ASIDE_WAIT_S = 5    # how long the summariser waits for those appends before it returns anyway

pytestmark = pytest.mark.requires("compaction")


class SummarizerFailed(Exception):
    """The failure the suite injects into a compaction: its summariser raises."""


def check_compaction(originals: list[Message], history: list[Message], when: str,
                     known: Sequence[tuple[Sequence[Message], str]] = ()) -> None:
    """``history`` keeps the compaction contract for a session of ``originals`` (``known``: groups of
    them whose loss would say how, see compaction_problem): raise a :class:`HistoryMismatch` in store
    terms if not."""
    problem = compaction_problem(originals, history, known)
    if problem:
        raise HistoryMismatch(f"{when}: {problem}", expected_after_compaction(originals, history), history)


def check_called(calls: list) -> None:
    """The store's compact called the summariser it was built with (``calls`` holds its calls)."""
    if not calls:
        raise AssertionError("compact did not call summarize: the suite cannot tell what it summarised (call the "
                             "summarize the store was built with, on the messages it compacts)")


def summary_of(history: list[Message]) -> Message | None:
    """The summary message that starts ``history``, if it does."""
    return history[0] if history and summarised(history[0].content) is not None else None


def check_goes_on(store, originals: list[Message], history: list[Message], when: str) -> list[Message]:
    """Append a few more messages after a compaction: they come after the summary and the messages it
    left, and nothing else changes. Returns the messages appended."""
    more = [store.add(SESSION, message)
            for message in numbered_messages(AFTER, "after", start=len(originals))]
    expected, actual = history + more, store.load(SESSION)
    problem = diagnose(expected, actual, originals + more)
    if problem:
        raise HistoryMismatch(f"{when}, then {AFTER} appends: {problem}", expected, actual)
    return more


def test_compaction_covers_every_message_once(stores, findings):
    """Eight messages are appended and compacted; four more, and the session is compacted again; two
    more are appended. After each compaction the history is one summary message whose content is
    exactly the text ``summarize`` returned for the messages it was given, then the messages it does
    not cover: each message of the session is either covered by the summary or still after it,
    exactly once, in order. A second compaction summarises the first summary too (it is among the
    oldest messages): one summary message stays, first. Messages appended later come after it.

    If a message is both summarised and still there: the store wrote the summary without removing
    the originals it replaced (or removed fewer). If one is lost: it removed more than the summary
    covers (an LTRIM index one off), or dropped the earlier summary when compacting again. If the
    summary is not the first message, or its text differs from what ``summarize`` returned, the
    store put it elsewhere or changed it: the suite reads the covered messages from that text."""
    store = stores.new()
    originals = [store.add(SESSION, message) for message in numbered_messages(BEFORE, "compact")]
    store.compact(SESSION)
    history = store.load(SESSION)
    check_compaction(originals, history, f"after compact of a session of {BEFORE} messages")
    first = summary_of(history)
    findings.note(f"the store gives the summary the role {first.role!r}; the first compact summarised "
                  f"{len(summarised(first.content))} of {BEFORE} messages")
    originals += [store.add(SESSION, message) for message in numbered_messages(MORE, "compact", start=BEFORE)]
    store.compact(SESSION)
    history = store.load(SESSION)
    when = f"after a second compact, {MORE} appends after the first"
    check_compaction(originals, history, when, known=[(
        summarised(first.content), "those the earlier summary covered: the store dropped the earlier summary when it "
                                   "compacted again, instead of summarising it with the rest")])
    second = summary_of(history)
    if second is None or second == first:
        raise HistoryMismatch(f"{when}: the second compact summarised nothing, the first summary is still "
                              "first and the messages appended since are all there",
                              expected_after_compaction(originals, history), history)
    findings.note(f"the second compact summarised {len(summarised(second.content))} of {len(originals)} messages")
    check_goes_on(store, originals, history, when)


def test_appends_during_compaction_are_not_lost(stores, races, findings, store_commands):
    """Eight messages are appended; while ``compact`` is summarising them (inside the suite's
    summariser, the first time it is called), another store instance with a client of its own
    appends three more to the session, as another replica of a service does, and the summariser
    returns once they are in. Afterwards every message, the eight and the three, is covered by the
    summary or after it, exactly once, in order. (A store that gives up compacting because the
    session changed, leaving it as it was, passes too, with a finding.)

    If the three are lost: compact read the history, summarised it, and then wrote the summary and
    the rest as it had read them (DEL and RPUSH, or SET of a whole document), overwriting what was
    appended meanwhile: a lost update (the failure names the steps the store's commands show).
    Remove exactly the messages summarised, from the head (LTRIM count -1 and LPUSH the summary, in
    one MULTI/EXEC or Lua script), or WATCH the session and compact again when it changed. A store
    that serialises appends behind a compaction passes, with a finding: the appends waited."""
    aside = numbered_messages(ASIDE, "during", start=BEFORE)
    appending = []

    def summarize_while_another_appends(history):
        if not appending:   # the first call only: a compaction that retries finds the appends done
            appending.append(races.aside(store, SESSION, aside))
            if wait(appending, timeout=ASIDE_WAIT_S).not_done:
                findings.note(f"the appends of another instance did not finish within {ASIDE_WAIT_S} s while compact "
                              "was summarising: the store makes appends wait for a compaction")
        return summarize(history)

    store = stores.new(summarize=summarize_while_another_appends)
    originals = [store.add(SESSION, message) for message in numbered_messages(BEFORE, "before")]
    store.compact(SESSION)
    check_called(appending)
    try:
        appending[0].result(timeout=ASIDE_WAIT_S)
    except FutureTimeout:
        raise AssertionError(f"the appends of another store instance, started while compact was summarising, did "
                             f"not finish within {ASIDE_WAIT_S} s after compact returned: a lock the compaction "
                             "left behind?") from None
    stored = store.stored_form(aside)
    history = store.load(SESSION)
    if history == originals + stored:
        findings.note("compact gave up, leaving the session as it was: it changed while compact summarised")
        return
    check_compaction(originals + stored, history,
                     f"after compact of {BEFORE} messages, while another instance appended {ASIDE}",
                     known=[(stored, "those appended while compact summarised: "
                                     + rewrite_cause(store_commands, store.binding.members["compact"]))])


def failed_compaction(findings, store, originals: list[Message], failure: str, calls: list) -> None:
    """Compact a session of ``originals`` while ``failure`` happens inside it (in the summariser,
    whose calls ``calls`` holds); the history must then be as it was or as a whole compaction leaves
    it, never a mix; then the store goes on: appends work, and a compaction, if the failed one left
    the session as it was."""
    try:
        store.compact(SESSION)
        raised = None
    except Exception as exc:   # the failure may go through to the caller
        raised = exc
    check_called(calls)
    history = store.load(SESSION)
    when = f"after compact of {BEFORE} messages failed ({failure})"
    if history != originals:   # not the old state: then the new one, whole
        check_compaction(originals, history, f"{when}, the session is neither as it was nor compacted whole")
    outcome = "compacted whole" if history != originals else "as it was"
    findings.note(f"compact {'raised ' + type(raised).__name__ if raised else 'returned'} when {failure}; "
                  f"the session was left {outcome}")
    more = check_goes_on(store, originals, history, when)
    if history == originals:
        store.compact(SESSION)
        check_compaction(originals + more, store.load(SESSION), f"{when}, then {AFTER} appends and compact again")


def test_a_failing_summarizer_leaves_the_session_as_it_was(stores, findings):
    """Eight messages are appended and compacted with a summariser that raises the first time it is
    called. Afterwards the session holds the eight messages as they were (or, if the store called
    the summariser again, the whole compaction): never the originals partly removed, nor a summary
    beside them. Then the store still works: two more appends come after them, and a second
    compaction (the summariser works now) compacts the ten.

    If messages are lost: the store removed the originals (or wrote a placeholder) before the
    summary was written, so the failure left the session without them. Summarise first, then
    replace the originals and write the summary in one step (MULTI/EXEC or a Lua script). If the
    second compaction fails: the failed one left something behind (a lock or a marker) that
    blocks the next."""
    calls = []

    def fails_first(history):
        calls.append(len(history))
        if len(calls) == 1:
            raise SummarizerFailed("the summariser failed (injected by the suite)")
        return summarize(history)

    store = stores.new(summarize=fails_first)
    originals = [store.add(SESSION, message) for message in numbered_messages(BEFORE, "kept")]
    failed_compaction(findings, store, originals, "its summariser raised", calls)


@pytest.mark.real_server("connections the server closes")
def test_a_connection_killed_during_compaction_leaves_no_mix(stores, connections, findings):
    """Eight messages are appended and compacted; while the suite's summariser runs (between the
    compaction's read and its writes), the server closes every connection of the store (CLIENT
    KILL). Afterwards the session holds the eight messages as they were, or their whole compaction:
    never a mix (a summary beside the originals it covers, or originals removed without the summary
    that replaces them). Then the store still works: two more appends come after them, and, if the
    session was left as it was, a second compaction compacts the ten.

    If this fails with a mix: the compaction's writes are separate commands, and one of them went
    on a connection the server had closed (one the store held from its read on) while another went
    through, or a failed step was not undone. Write the summary and remove the originals in one
    MULTI/EXEC or Lua script; a transaction on a dead connection then fails whole. If the appends
    after fail, the store does not reconnect."""
    killed = []

    def kills_connections(history):
        if not killed:
            killed.append(connections.kill(idle=False))
        return summarize(history)

    store = stores.new(summarize=kills_connections)
    originals = [store.add(SESSION, message) for message in numbered_messages(BEFORE, "killed")]
    failed_compaction(findings, store, originals, "the store's connections were killed while it summarised", killed)
    findings.note(f"killed {killed[0]} connection{'' if killed[0] == 1 else 's'} of the store while it summarised")


def check_window_after_compaction(stores, findings, store, turns: list[Message], first: int, window: Window,
                                  where: str) -> None:
    """Append ``turns[:first]``, compact, then append the rest one at a time, loading after each: the
    compaction keeps the contract on what the window held, and every load gives what ``window``
    keeps of the session since (the summary, then what followed it and every append), with the
    summary in the window or first outside it, as the store says (``summary_in_window``)."""
    policy, in_window = stores.window_policy, stores.summary_in_window
    for message in turns[:first]:
        store.add(SESSION, message)
    held = store.load(SESSION)
    store.compact(SESSION)
    history = store.load(SESSION)
    check_compaction(held, history, f"{where}, after compact of the {messages(len(held))} the window held")
    summary = summary_of(history)
    if summary is None:
        findings.note(f"{where}: compact left the window's one message as it was: the window is checked without a "
                      "summary by its own group")
        return
    weight = "one message" if window.unit == "message" else "its tokens"
    how = (f"the summary counts toward the {window.name} as {weight}" if in_window
           else f"summary_in_window = False: the summary stays first, outside the {window.name}")
    session = history[1:]
    for count, message in enumerate(turns[first:], 1):
        session.append(store.add(SESSION, message))
        expected = compacted_window(summary, session, window, policy, in_window)
        actual = store.load(SESSION)
        problem = (window_problem([summary, *session], actual, window, policy) if in_window else
                   diagnose(expected, actual, [summary, *session]))
        if problem:
            hint = (f"; if the store keeps the summary outside the {window.name} on purpose, say so with the class "
                    "attribute summary_in_window = False" if in_window and len(actual) > len(expected) else "")
            raise HistoryMismatch(f"{where}, {count} appends after compact ({how}): {problem}{hint}",
                                  expected, actual)
    findings.note(f"{where}: {how}")


@pytest.mark.requires("count-window")
def test_compaction_keeps_the_window(stores, findings, window):
    """N+2 messages are appended to a store with a window of N, the session is compacted, then N+2
    more are appended, one load after each. The compaction keeps the contract on what the window
    held, and every load gives what the window keeps of the session as it is since: by default the
    summary is a message of the window like any other (it counts as one message toward N, and is
    trimmed once it is the oldest that does not fit); a store whose class says
    ``summary_in_window = False`` keeps it first, outside the window, which then keeps the last N
    messages after it. Under a window policy, the policy applies to that session, the summary
    included.

    If the history holds one message too many once the window is full: the summary is kept
    outside the window while the store says it counts toward it (keep it in the list the window
    trims, or set ``summary_in_window = False``). If it holds one too few, or the summary vanishes:
    the window counts the summary while the store says it does not."""
    turns = window_turns(2 * window + 4, stores.window_policy, "window")
    check_window_after_compaction(stores, findings, stores.new(max_messages=window), turns, window + 2,
                                  count_window(window), f"N={window}")


@pytest.mark.requires("token-window")
def test_compaction_keeps_the_token_budget(stores, findings, profile):
    """Six messages of about an eighth of the budget each are appended to a store with the profile's
    token budget, the session is compacted, then eight more are appended, one load after each. The
    compaction keeps the contract on what the store held, and every load gives what the budget
    keeps of the session as it is since: by default the summary is a message of the session like
    any other (its cost, ``count_tokens`` of its text, counts toward the budget, and it is trimmed
    once it is the oldest that does not fit); with ``summary_in_window = False`` it stays first,
    outside the budget, which then keeps the newest messages after it that fit. (The suite's
    summaries list the messages they cover, so a summary costs about what they did.)

    If the history costs more than the budget once it is full: the store does not count the
    summary's tokens (it records no cost for it, or a cost of zero), while it says the summary
    counts. If the summary vanishes too early, it counts the summary while it says it does not, or
    counts it with another counter than the one it was given."""
    cost = functools.lru_cache(maxsize=None)(stores.counter(profile))   # each text once
    turns = window_turns(14, stores.window_policy, "tokens", sized_text(profile.max_tokens // 8, cost, profile.name))
    check_window_after_compaction(stores, findings, stores.new(profile=profile), turns, 6,
                                  token_budget(profile.max_tokens, cost), profile.name)
