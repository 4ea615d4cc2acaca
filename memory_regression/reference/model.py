"""The reference model: what a correct store returns.

Scenarios compute the expected history here; how a wrong one is told is :mod:`.diagnosis`'s, and
what several writers at once must leave is :mod:`.bursts`'.

A windowed store keeps what its :class:`WindowPolicy` says within a :class:`Window` (N messages or
a token budget): ``suffix``, the policy with no rules, keeps the longest suffix of the session that
fits; the rules ``start-on-user`` and ``keep-system`` change that, alone or together.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import Enum
from itertools import combinations
from typing import Callable, Sequence

from ..contract.rules import Message, normalize_history


class Rule(str, Enum):
    """A rule of a window policy, as ``--window-policy`` names it."""

    START_ON_USER = "start-on-user"   # the kept history never starts with an assistant or tool message
    KEEP_SYSTEM = "keep-system"       # a leading system message is always kept, and counts toward the window

    def __str__(self) -> str:
        return self.value


SUFFIX_NAME = "suffix"                       # the policy with no rules
NO_START_ROLES = ("assistant", "tool")       # roles start-on-user never lets a history start with


@dataclass(frozen=True)
class Window:
    """What a store keeps its history within: N messages (each weighs 1) or a token budget (each
    weighs its cost). ``unit``, ``name`` and ``verb`` word it: "holds 6 messages, over the window of
    5 messages"; "costs 3620 tokens, over the budget of 3584 tokens"."""

    limit: int
    weight: Callable[[Message], int]
    unit: str
    name: str
    verb: str

    def total(self, history: Sequence[Message]) -> int:
        return sum(self.weight(message) for message in history)

    def amount(self, count: int) -> str:
        return f"{count} {self.unit}" + ("" if count == 1 else "s")


def count_window(size: int) -> Window:
    return Window(size, lambda message: 1, "message", "window", "holds")


def token_budget(budget: int, cost: Callable[[str], int]) -> Window:
    return Window(budget, lambda message: cost(message.content), "token", "budget", "costs")


@dataclass(frozen=True)
class WindowPolicy:
    """Which messages a windowed store keeps (``--window-policy``): the longest suffix of the
    session that fits the window, changed by each rule the policy has.

    - no rules (``suffix``): that suffix, nothing else;
    - ``start-on-user``: the kept history never starts with an assistant or tool message, whether or
      not anything was trimmed; it is the longest such suffix that fits, and may be empty (N=1 and
      the newest message is the assistant's), or then hold the newest message alone (see
      :meth:`allows`). A system message other than the first is an ordinary
      message, and may start it;
    - ``keep-system``: when the first message appended to the session is a system message, it is
      always kept, first, and counts toward the window; the rest is the longest suffix that fits
      beside it. With N=1, or a system message over the budget alone, the history is that message
      alone. Later system messages are ordinary messages.

    Together the rules are LangChain's ``trim_messages(start_on="human", include_system=True)``:
    the kept system message, then the longest suffix that fits beside it and starts on a user
    message (LangChain would also drop a later system message that came first; the suite's
    conversations hold no such message).
    """

    rules: frozenset[Rule] = frozenset()

    def __str__(self) -> str:
        return ",".join(rule.value for rule in Rule if rule in self.rules) or SUFFIX_NAME

    @property
    def start_on_user(self) -> bool:
        return Rule.START_ON_USER in self.rules

    @property
    def keep_system(self) -> bool:
        return Rule.KEEP_SYSTEM in self.rules

    def split(self, appended: Sequence[Message]) -> tuple[list[Message], list[Message]]:
        """The head this policy always keeps (the leading system message under keep-system, else
        nothing) and the rest of what was appended, which the window trims."""
        head = 1 if self.keep_system and appended and appended[0].role == "system" else 0
        return list(appended[:head]), list(appended[head:])

    def may_start(self, message: Message) -> bool:
        """Whether ``message`` may be the oldest kept after the head."""
        return not (self.start_on_user and message.role in NO_START_ROLES)

    def kept(self, appended: Sequence[Message], window: Window) -> list[Message]:
        """What a correct store holds after ``appended``: the head, then the longest suffix of the
        rest that fits the window beside the head and may start the history (the head alone when
        nothing fits)."""
        head, rest = self.split(appended)
        total, start = window.total(head), len(rest)
        for index in range(len(rest) - 1, -1, -1):
            total += window.weight(rest[index])
            if total > window.limit:
                break
            if self.may_start(rest[index]):
                start = index
        return head + rest[start:]

    def edge_points(self, appended: Sequence[Message], window: Window) -> list[int]:
        """The numbers of appends at which the window's edge, once it trims, first falls on each role:
        the oldest message of the longest suffix that fits beside the head (before start-on-user
        drops any) is, for the first time, a user, an assistant, a tool or a system message. A store
        that trims wrongly at one kind of edge (keeps a tool result whose call it trimmed, drops
        or miscounts the system message) shows there. One pass over ``appended``."""
        head, rest = self.split(appended)
        room, total, start = window.limit - window.total(head), 0, 0
        points: dict[str, int] = {}
        for end, message in enumerate(rest, 1):
            total += window.weight(message)
            while start < end and total > room:
                total -= window.weight(rest[start])
                start += 1
            if 0 < start < end:
                points.setdefault(rest[start].role, len(head) + end)
        return sorted(points.values())

    def allows(self, appended: Sequence[Message], history: Sequence[Message], window: Window) -> bool:
        """Whether a correct store may hold ``history``: what :meth:`kept` says or, when that is the
        head alone (the newest message alone is over a token budget, or no suffix the rules allow
        fits), the head and the newest message, whatever its role. llama-index's ChatMemoryBuffer
        never returns an empty history: it keeps the newest message then, so that the model, not
        the memory, reports a message too long to send."""
        history = list(history)
        kept = self.kept(appended, window)
        if history == kept:
            return True
        head, rest = self.split(appended)
        return bool(rest) and kept == head and history == head + rest[-1:]


SUFFIX = WindowPolicy()
# every policy, fewest rules first: the order in which a failure's hint looks for one the store follows
POLICIES = tuple(WindowPolicy(frozenset(rules)) for count in range(len(Rule) + 1)
                 for rules in combinations(Rule, count))


def expected_count_window(appended: Sequence[Message], window: int,
                          policy: WindowPolicy = SUFFIX) -> list[Message]:
    """What a store with a window of N messages holds under ``policy``: under suffix the last
    min(k, N) of the k appended."""
    return policy.kept(appended, count_window(window))


def without_orphaned_results(kept: Sequence[Message], policy: "WindowPolicy") -> list[Message]:
    """``kept`` without the tool results at the start of what follows the policy's head: the window
    trimmed their calls (the suite appends every tool result after the message that calls it)."""
    head, rest = policy.split(kept)
    drop = next((index for index, message in enumerate(rest) if message.role != "tool"), len(rest))
    return head + rest[drop:]


def expected_token_window(appended: Sequence[Message], budget: int, cost: Callable[[str], int],
                          policy: WindowPolicy = SUFFIX) -> list[Message]:
    """What a store with a token budget holds under ``policy``: under suffix the longest suffix of what
    was appended that fits the budget (empty if the newest does not)."""
    return policy.kept(appended, token_budget(budget, cost))


# -- compaction ------------------------------------------------------------------------------------
# What the suite's summariser writes: "summary of 3 messages: " and the messages it was given as JSON
# [role, content] pairs, so the text tells exactly which messages a summary covers; a summary among
# them (a second compaction summarises the first summary too) is decoded in turn.
SUMMARY_MARK = "summary of "


def messages(count: int) -> str:
    return f"{count} message" + ("" if count == 1 else "s")


def summarize(history: Sequence[object]) -> str:
    """The suite's summariser, handed to a compacting store as ``summarize``: deterministic, no model.
    ``history`` holds role/content dicts (or objects, or LangChain-style messages: anything a load may
    return)."""
    try:
        given = normalize_history(list(history))
    except (AssertionError, TypeError) as exc:
        raise TypeError(f"summarize takes a list of messages with role and content: {exc}") from None
    return (f"{SUMMARY_MARK}{messages(len(given))}: "
            + json.dumps([[m.role, m.content] for m in given], ensure_ascii=False))


def summarised(content: str) -> list[Message] | None:
    """The messages a summary written by :func:`summarize` covers, oldest first, an earlier summary
    among them replaced by what it covers; None when ``content`` is no such summary, or is one changed
    after it was written (the summary must be exactly the summariser's text)."""
    head, sep, listed = content.partition(": ")
    if not content.startswith(SUMMARY_MARK) or not sep:
        return None
    try:
        pairs = json.loads(listed)
    except ValueError:
        return None
    well_formed = isinstance(pairs, list) and all(
        isinstance(pair, list) and len(pair) == 2 and all(isinstance(part, str) for part in pair) for pair in pairs)
    if (not well_formed
            or summarize([{"role": role, "content": text} for role, text in pairs]) != content):
        return None
    covered: list[Message] = []
    for role, text in pairs:
        covered.extend(summarised(text) or [Message(role, text)])
    return covered


def expected_after_compaction(before: Sequence[Message], history: Sequence[Message]) -> list[Message]:
    """What a correct compaction of ``before`` leaves, for listing against ``history``: the summary as
    loaded (when the first message is one), then the messages of ``before`` it does not cover."""
    covered = summarised(history[0].content) if history else None
    if covered is None:
        return list(before)
    return [history[0], *before[len(covered):]]


def compacted_window(summary: Message, session: Sequence[Message], window: Window, policy: WindowPolicy,
                     in_window: bool) -> list[Message]:
    """What a windowed store holds after a compaction left ``summary`` first and then ``session`` was
    appended and kept (the messages after the summary at compaction, then every append since): with
    the summary in the window (``in_window``, the default) it is a message of the session like any
    other, weighing one message or its tokens, and trimmed once it is the oldest that does not fit;
    outside it, it stays first and the window keeps what it would of ``session`` alone."""
    if in_window:
        return policy.kept([summary, *session], window)
    return [summary, *policy.kept(session, window)]
