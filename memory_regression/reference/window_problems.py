"""What a history that a window or a compaction left wrong says, against the reference model: which
message a window should have kept or dropped, a token budget overrun or undercut, a rule of the
window policy broken, and a compaction that lost, duplicated or mixed up messages."""

from __future__ import annotations

from typing import Sequence

from ..contract.rules import Message
from .model import POLICIES, Rule, SUFFIX, SUMMARY_MARK, Window, WindowPolicy, messages, summarised
from .diagnosis import diagnose, position


def window_problem(appended: Sequence[Message], history: Sequence[Message], window: Window,
                   policy: WindowPolicy = SUFFIX, before: Sequence[tuple[Sequence[Message], Sequence[Message]]] = (),
                   hint: bool = True) -> str | None:
    """How ``history`` breaks ``policy`` within ``window``, in store terms, or None when a correct
    store may hold it (:meth:`WindowPolicy.allows`).

    A broken rule is named first ("start-on-user: the history starts with a tool message (message
    7 of 12)", "keep-system: the leading system message was trimmed"); then, for a token budget,
    what the history costs against it (a counter unlike the store's shows there); then how it
    differs from the expected history. With ``hint``, when another policy allows this history and
    every one the store kept ``before`` (what was appended, the history), the message ends with a
    hint naming it: the store may follow that policy on purpose. A policy that explains one window
    and not the others is no hint.
    """
    appended, history = list(appended), list(history)
    if policy.allows(appended, history, window):
        return None
    problem = (_rule_problem(appended, history, window, policy)
               # a count window's history is exact, and diagnose names the message lost or kept
               or (_budget_problem(appended, history, window, policy) if window.unit == "token" else None)
               or _oldest_kept(appended, history, window, policy)
               or diagnose(policy.kept(appended, window), history, appended))
    observed = [*before, (appended, history)]
    other = next((p for p in POLICIES if p != policy and all(p.allows(a, h, window) for a, h in observed)), None)
    if hint and other is not None:
        problem += f"; this is what --window-policy {other} expects: if the store means to do that, pass it"
    return problem


def _kept_rest(appended: list[Message], history: list[Message], policy: WindowPolicy) -> list[Message] | None:
    """The part of ``history`` after the policy's head, when the history is that head followed by
    a suffix of the rest of what was appended; else None (it is no history the window makes)."""
    head, rest = policy.split(appended)
    after = history[len(head):]
    if history[:len(head)] != head or after != rest[len(rest) - len(after):]:
        return None
    return after


def _rule_problem(appended: list[Message], history: list[Message], window: Window,
                  policy: WindowPolicy) -> str | None:
    head = policy.split(appended)[0]
    if head and head[0] not in history:
        return f"{Rule.KEEP_SYSTEM}: the leading system message was trimmed"
    rest = _kept_rest(appended, history, policy)
    if rest is None:
        return None
    if rest and not policy.may_start(rest[0]):
        where = "after the system message, the history" if head else "the history"
        return (f"{Rule.START_ON_USER}: {where} starts with {_article(rest[0].role)} {rest[0].role} message "
                f"({position(rest[0], appended)})")
    if head and window.total(history) > window.limit >= window.total(rest):
        return (f"{Rule.KEEP_SYSTEM}: the leading system message counts toward the {window.name}, and with it "
                f"the history {window.verb} {window.amount(window.total(history))}, over the {window.name} of "
                f"{window.amount(window.limit)}")
    return None


def _oldest_kept(appended: list[Message], history: list[Message], window: Window,
                 policy: WindowPolicy) -> str | None:
    """A history of as many messages as the window keeps, but the oldest ones: the wrong end trimmed."""
    kept = policy.kept(appended, window)
    if history == kept or len(history) != len(kept) or history != appended[:len(history)]:
        return None
    return (f"kept the oldest {messages(len(history))} of {len(appended)} instead of the newest: the trim cuts the "
            "wrong end (on a list, LTRIM key 0 N-1 keeps the first N)")


def _article(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"


def _budget_problem(appended: list[Message], history: list[Message], window: Window,
                    policy: WindowPolicy) -> str | None:
    """What a history the window could make costs against the budget: over it, or over-trimmed."""
    rest = _kept_rest(appended, history, policy)
    if rest is None:
        return None
    total, newest = window.total(history), appended[-1]
    if rest and window.weight(newest) > window.limit:
        if len(rest) > 1:
            return (f"the newest message alone costs {window.amount(window.weight(newest))}, over the budget "
                    f"of {window.amount(window.limit)}, yet {messages(len(rest) - 1)} older remain")
        return None
    if total > window.limit:
        return (f"history costs {window.amount(total)}, over the budget of {window.amount(window.limit)} "
                f"({messages(len(history))})")
    body = policy.split(appended)[1]
    start = len(body) - len(rest)
    earlier = next((i for i in range(start - 1, -1, -1) if policy.may_start(body[i])), None)
    if earlier is not None and total + window.total(body[earlier:start]) <= window.limit:
        older = ("the next older message" if start - earlier == 1 else
                 f"the older messages back to {position(body[earlier], appended)}, the nearest that may start "
                 "the history")
        return (f"history is over-trimmed: it costs {total} of {window.amount(window.limit)}, and {older} "
                f"({window.amount(window.total(body[earlier:start]))}) would still fit")
    return None


def compaction_problem(before: Sequence[Message], history: Sequence[Message],
                       known: Sequence[tuple[Sequence[Message], str]] = ()) -> str | None:
    """How ``history``, loaded after a compaction of a session that held ``before`` (and nothing
    appended since), breaks the contract, in store terms; None when it keeps it: one summary message
    first, whose content is exactly the summariser's text, covering the oldest messages of ``before``,
    followed by the rest of ``before``, each message exactly once, in order. A session of one message
    may stay as it was; a longer one must have at least one message summarised. ``known``: groups of
    the session's messages the scenario knows the story of, each with it (those an earlier summary
    covered: "the store dropped ..."), named when exactly such a group is lost."""
    before, history = [m.plain() for m in before], list(history)
    if not history:
        return f"compact left the session empty: the {messages(len(before))} it held are lost"
    if [m.plain() for m in history] == before:
        return (None if len(before) < 2 else
                f"compact left the history as it was ({messages(len(before))}): nothing was summarised")
    first, rest = history[0], [m.plain() for m in history[1:]]
    covered = summarised(first.content)
    if covered is None:
        if SUMMARY_MARK in first.content:
            return ("the first message is not exactly the text summarize returned: the store changed the summary "
                    f"({first.describe()})")
        place = next((i for i, m in enumerate(history) if summarised(m.content) is not None), None)
        if place is None:
            return f"the history holds no summary, and {diagnose(before, [m.plain() for m in history], before)}"
        inside = summarised(history[place].content)
        stale = [m for m in history[:place] if m.plain() in inside]
        return (f"the summary is not the first message but message {place + 1} of the history"
                + (f", after {messages(len(stale))} it covers: the originals it replaced were not all removed "
                   "(duplicates)" if stale else ""))
    later = next((m for m in history[1:] if summarised(m.content) is not None), None)
    if later is not None:
        return (f"the history holds a second summary ({later.describe()}): compact must leave one summary "
                "message, first (a second compaction summarises the earlier summary too)")
    both = next((m for m in covered if m in rest), None)
    if both is not None:
        return (f"{position(both, before)} is both summarised and still in the history after the summary: "
                "the originals the summary replaced were not all removed (duplicates)")
    if covered + rest == before:
        return None
    foreign = next((m for m in covered + rest if m not in before), None)
    if foreign is not None:
        return f"the history holds {foreign.describe()}, which the session did not hold before compact"
    lost = [m for m in before if m not in covered + rest]
    if lost:
        found = (f"{position(lost[0], before)} is lost: neither summarised nor in the history after the summary "
                 f"(the summary covers {messages(len(covered))}, and {messages(len(rest))} come after it)")
        story = next((text for group, text in known if lost == [m.plain() for m in group]), None)
        return found + (f"; the {messages(len(lost))} lost are exactly {story}" if story else "")
    if covered != before[:len(covered)]:
        return (f"the summary does not cover the oldest messages of the session in order (it covers "
                f"{', '.join(position(m, before) for m in covered[:4])}{' ...' if len(covered) > 4 else ''})")
    return "the messages after the summary are not the rest of the session in order"
