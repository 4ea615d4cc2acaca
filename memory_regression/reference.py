"""The reference model: what a correct store returns, and how to say what a wrong one did.

Scenarios compute the expected history here and raise :class:`HistoryMismatch` with a
message in store terms ("lost message 7 of 12") followed by expected against actual.

A windowed store keeps what its :class:`WindowPolicy` says within a :class:`Window` (N messages or
a token budget): ``suffix``, the policy with no rules, keeps the longest suffix of the session that
fits; the rules ``start-on-user`` and ``keep-system`` change that, alone or together.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from difflib import SequenceMatcher
from enum import Enum
from itertools import combinations, zip_longest
from typing import Callable, Sequence

from .contract import Message, normalize_history

MAX_LISTED = 24  # rows of the expected/actual listing in one failure message
LOST_WIDTH = 30  # characters of a lost message's content quoted in its diagnosis
UNIT_SLIP = (500, 2000)   # a TTL this many times too long or too short: seconds and milliseconds confused


@dataclass(frozen=True)
class Listing:
    """Expected against actual, row by row, cut to MAX_LISTED rows from three before the first
    difference. A row is ``[differs, expected number, expected message, actual number, actual
    message]``; a side with no message in that row has number None and message "". Plain values
    only, so that it travels from a worker to the runner as it is."""

    expected: int     # messages in each history
    actual: int
    rows: list[list]
    before: int       # equal rows left out above
    after: int        # rows left out below

    def text(self) -> str:
        """The listing as aligned text, ``!!`` marking the rows that differ."""
        left = f"expected ({messages(self.expected)})"
        width = max([len(left), *(len(row[2]) for row in self.rows)])
        lines = [f"        {left:<{width}}  |      actual ({messages(self.actual)})"]
        if self.before:
            lines.append(f"  ... {self.before} earlier rows equal")
        for differs, i, want, j, got in self.rows:
            lines.append(f"{'!!' if differs else '  '}{i or '':>4}  {want or '-':<{width}}  |"
                         f"{j or '':>4}  {got or '-'}")
        if self.after:
            lines.append(f"  ... {self.after} more rows")
        return "\n".join(lines)


class HistoryMismatch(AssertionError):
    """A scenario's failure: a one-line diagnosis plus the expected and actual histories."""

    def __init__(self, diagnosis: str, expected: Sequence[Message], actual: Sequence[Message]):
        self.diagnosis = diagnosis
        self.listing = listing(expected, actual)
        super().__init__(f"{diagnosis}\n{self.listing.text()}")


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


def messages(count: int) -> str:
    return f"{count} message" + ("" if count == 1 else "s")


def _times(count: int) -> str:
    return {1: "once", 2: "twice"}.get(count, f"{count} times")


def unmatched(items: Sequence[Message], others: Sequence[Message]) -> list[Message]:
    """The messages of ``items`` that ``others`` does not hold, in order, counting repeats: of a
    message that comes twice, a history holding it once leaves the second unmatched."""
    left = Counter(others)
    found = []
    for message in items:
        if left[message]:
            left[message] -= 1
        else:
            found.append(message)
    return found


def _number(message: Message, appended: Sequence[Message]) -> str:
    for index, candidate in enumerate(appended):
        if candidate == message:
            return f"message {index + 1} of {len(appended)}"
    return "a message that was never appended to this session"


def unit_hint(ratio: float, unit_given: str, unit_meant: str) -> str:
    """The unit slip a TTL ``ratio`` times off shows, only where it is about a thousand: seconds and
    milliseconds confused."""
    low, high = UNIT_SLIP
    return f" ({ratio:,.0f}×: {unit_given} taken for {unit_meant}?)" if low <= ratio <= high else ""


def _text_order(message: Message) -> tuple[str, str]:
    return message.role, message.content


def _sorted_runs(expected: list[Message], actual: list[Message]) -> bool:
    """Whether ``actual`` is ``expected`` cut into runs of consecutive messages, each run sorted by
    text, one run moving at least three messages (two swapped prove nothing: any user message and
    its reply sort that way). The runs are the longest that stay sorted."""
    if len(actual) != len(expected):
        return False
    balance: Counter = Counter()
    ends = []
    for index, (want, got) in enumerate(zip(expected, actual)):
        balance[want] += 1
        balance[got] -= 1
        for message in (want, got):
            if not balance[message]:
                del balance[message]
        if not balance:   # the messages so far are those expected so far: a run may end here
            ends.append(index + 1)
    start, shown = 0, False
    for before, end in zip(ends, [*ends[1:], None]):
        if end is not None and _text_order(actual[before - 1]) <= _text_order(actual[before]):
            continue   # the next run goes on in order: one run
        run = actual[start:before]
        if run != sorted(run, key=_text_order):
            return False
        shown = shown or sum(got != want for got, want in zip(run, expected[start:before])) > 2
        start = before
    return shown


def _first_content_difference(expected: str, actual: str) -> str:
    if actual == expected.strip() or actual in (expected.lstrip(), expected.rstrip()):
        return f"its surrounding whitespace was stripped ({expected!r:.40} came back as {actual!r:.40})"
    for name in ("latin-1", "cp1252"):
        if actual == expected.encode("utf-8").decode(name, errors="replace"):
            return (f"its UTF-8 bytes were read as {name} (mojibake): {expected!r:.20} came back as {actual!r:.20}")
    if actual and expected.startswith(actual):
        return f"it was cut at {len(actual):,} characters (of {len(expected):,})"
    for position, (a, b) in enumerate(zip(expected, actual)):
        if a != b:
            return f"first difference at character {position}: expected {a!r}, got {b!r}"
    return (f"expected {len(expected)} characters, got {len(actual)}, "
            f"the first {min(len(expected), len(actual))} equal")


def _fields_difference(expected: dict, actual: dict) -> str:
    """How a whole message's fields (tool calls, tool result ids, metadata) came back changed."""
    lost = [key for key in expected if key not in actual]
    if lost:
        return f"lost its {' and '.join(lost)}: expected {json.dumps({k: expected[k] for k in lost})[:300]}"
    changed = next((key for key in expected if expected[key] != actual[key]), None)
    if changed:
        return (f"changed its {changed}: expected {json.dumps(expected[changed])[:300]}, "
                f"got {json.dumps(actual[changed])[:300]}")
    return f"gained {', '.join(key for key in actual if key not in expected)}, never appended"


def without_orphaned_results(kept: Sequence[Message], policy: "WindowPolicy") -> list[Message]:
    """``kept`` without the tool results at the start of what follows the policy's head: the window
    trimmed their calls (the suite appends every tool result after the message that calls it)."""
    head, rest = policy.split(kept)
    drop = next((index for index, message in enumerate(rest) if message.role != "tool"), len(rest))
    return head + rest[drop:]


def orphaned_tool_result(history: Sequence[Message]) -> str | None:
    """The first tool result in ``history`` whose call is in no earlier assistant message of it, in
    store terms, or None. Sent back to the model, such a history fails the request with HTTP 400."""
    calls: set[str] = set()
    for index, message in enumerate(history):
        fields = message.extra()
        calls.update(call.get("id") for call in fields.get("tool_calls") or [] if isinstance(call, dict))
        if message.role == "tool" and fields.get("tool_call_id") not in calls:
            return (f"message {index + 1} of the history is a tool result (tool_call_id "
                    f"{fields.get('tool_call_id')!r}) whose calling assistant message is not before it: the window "
                    "trimmed the call and kept the result, an orphan that fails the next chat-completions request "
                    "with HTTP 400")
    return None


def diagnose(expected: Sequence[Message], actual: Sequence[Message],
             appended: Sequence[Message]) -> str | None:
    """A one-line diagnosis of how ``actual`` differs from ``expected``, or None if equal."""
    expected, actual = list(expected), list(actual)
    if expected == actual:
        return None
    if len(actual) > 1 and actual == expected[::-1]:
        return f"history is in reverse order ({messages(len(actual))}, newest first)"
    if _sorted_runs(expected, actual):
        return (f"history is reordered within runs of consecutive appends, each run sorted by its messages' text "
                f"(role, then content) ({messages(len(actual))}): as a sorted set orders members whose scores tie "
                "(a score of whole seconds that the appends of one second share, a constant)")
    if not actual:
        return f"history is empty; expected {messages(len(expected))}"
    if len(actual) == len(expected):
        for index, (want, got) in enumerate(zip(expected, actual)):
            if want == got:
                continue
            if (want.role, want.content) == (got.role, got.content):
                return f"message {index + 1} of the history {_fields_difference(want.extra(), got.extra())}"
            if want.content == got.content:
                return f"message {index + 1} of the history lost its role: expected {want.role!r}, got {got.role!r}"
            if got in expected:
                return (f"history is reordered: position {index + 1} holds "
                        f"{_number(got, appended)}, expected {_number(want, appended)}")
            if want.role == got.role and got not in appended:
                return (f"message {index + 1} of the history was altered: "
                        f"{_first_content_difference(want.content, got.content)}")
            return f"position {index + 1} holds {_number(got, appended)}, expected {_number(want, appended)}"
    missing, extra = unmatched(expected, actual), unmatched(actual, expected)
    if len(actual) < len(expected) and not extra:
        repeat = (f", a repeat: the same message comes {_times(expected.count(missing[0]))}, the history holds it "
                  f"{_times(actual.count(missing[0]))}" if missing[0] in actual else "")
        return (f"lost {_number(missing[0], appended)} ({missing[0].describe(LOST_WIDTH)}{repeat})"
                + (f" and {len(missing) - 1} more" if len(missing) > 1 else "")
                + f": history has {messages(len(actual))}, expected {len(expected)}")
    if len(actual) > len(expected) and not missing:
        if extra[0] not in appended:
            return (f"history holds {messages(len(extra))} never appended to this session, "
                    f"first {extra[0].describe()}")
        return (f"kept {messages(len(actual))}, expected {len(expected)}: {_number(extra[0], appended)} "
                "should have been trimmed")
    if extra:
        return f"history holds {_number(extra[0], appended)}, which should not be there"
    return f"history differs: expected {messages(len(expected))}, got {len(actual)}"


def assert_history(expected: Sequence[Message], actual: Sequence[Message], appended: Sequence[Message],
                   context: str = "", hint: Callable[[list[Message]], str | None] | None = None) -> None:
    """Raise HistoryMismatch unless ``actual`` is ``expected``. ``hint``, given the actual history
    of a mismatch, may add what the scenario's own evidence shows of the cause (None: nothing); a
    hint that raises (it may load through the store again) adds nothing, and the mismatch stands."""
    __tracebackhide__ = True
    problem = diagnose(expected, actual, appended)
    if problem:
        try:
            found = hint(list(actual)) if hint else None
        except Exception:   # the store failing again while the evidence was gathered: the mismatch is the finding
            found = None
        raise HistoryMismatch(f"{context}{problem}" + (f"; {found}" if found else ""), expected, actual)


def lost_after(expected: Sequence[Message], actual: Sequence[Message], firsts: Sequence[Message],
               event: str) -> str | None:
    """When every message ``actual`` lacks is among ``firsts`` (each the first appended after
    ``event``, a kill of the store's connections, a restart) and nothing else differs: how the
    store lost them. Their appends returned, so it swallowed the error each met."""
    missing = unmatched(expected, actual)
    if not missing or unmatched(actual, expected) or any(message not in firsts for message in missing):
        return None
    which = "the lost message is" if len(missing) == 1 else f"the {len(missing)} lost messages are"
    return (f"{which} the first appended after {event}, and its append returned: the store swallows the error "
            "of an append that meets a closed connection (a \"best-effort\" write), so the message is lost unseen")


def fresh_instance_loads(expected: Sequence[Message], fresh: Sequence[Message], why: str) -> str | None:
    """When a new store instance loads ``expected`` where another loaded something else: Redis holds
    the right history, and ``why`` says what the other instance did instead."""
    if list(fresh) != list(expected):
        return None
    return f"a new store instance loads the {messages(len(expected))} expected, so Redis holds them: {why}"


def expected_token_window(appended: Sequence[Message], budget: int, cost: Callable[[str], int],
                          policy: WindowPolicy = SUFFIX) -> list[Message]:
    """What a store with a token budget holds under ``policy``: under suffix the longest suffix of what
    was appended that fits the budget (empty if the newest does not)."""
    return policy.kept(appended, token_budget(budget, cost))


def window_problem(appended: Sequence[Message], history: Sequence[Message], window: Window,
                   policy: WindowPolicy = SUFFIX) -> str | None:
    """How ``history`` breaks ``policy`` within ``window``, in store terms, or None when a correct
    store may hold it (:meth:`WindowPolicy.allows`).

    A broken rule is named first ("start-on-user: the history starts with a tool message (message
    7 of 12)", "keep-system: the leading system message was trimmed"); then, for a token budget,
    what the history costs against it (a counter unlike the store's shows there); then how it
    differs from the expected history. When another policy allows the history, the message ends
    with a hint naming it: the store may follow that policy on purpose.
    """
    appended, history = list(appended), list(history)
    if policy.allows(appended, history, window):
        return None
    problem = (_rule_problem(appended, history, window, policy)
               # a count window's history is exact, and diagnose names the message lost or kept
               or (_budget_problem(appended, history, window, policy) if window.unit == "token" else None)
               or _oldest_kept(appended, history, window, policy)
               or diagnose(policy.kept(appended, window), history, appended))
    other = next((p for p in POLICIES if p != policy and p.allows(appended, history, window)), None)
    if other is not None:
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
                f"({_number(rest[0], appended)})")
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
            "wrong end of the list (LTRIM key 0 N-1 keeps the first N)")


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
                 f"the older messages back to {_number(body[earlier], appended)}, the nearest that may start "
                 "the history")
        return (f"history is over-trimmed: it costs {total} of {window.amount(window.limit)}, and {older} "
                f"({window.amount(window.total(body[earlier:start]))}) would still fit")
    return None


def listing(expected: Sequence[Message], actual: Sequence[Message]) -> Listing:
    """Expected against actual, aligned as difflib's SequenceMatcher matches them (a message one side
    lacks gets a row of its own, so an extra message marks that row alone)."""
    rows: list[list] = []
    matcher = SequenceMatcher(None, expected, actual, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        for i, j in zip_longest(range(i1, i2), range(j1, j2)):
            rows.append([tag != "equal", *_side(expected, i), *_side(actual, j)])
    first = next((index for index, row in enumerate(rows) if row[0]), 0)
    start = max(0, first - 3)
    return Listing(len(expected), len(actual), rows[start:start + MAX_LISTED], start,
                   max(0, len(rows) - start - MAX_LISTED))


def _side(history: Sequence[Message], index: int | None) -> tuple[int | None, str]:
    return (None, "") if index is None else (index + 1, history[index].describe())


# -- compaction ------------------------------------------------------------------------------------
# What the suite's summariser writes: "summary of 3 messages: " and the messages it was given as JSON
# [role, content] pairs, so the text tells exactly which messages a summary covers; a summary among
# them (a second compaction summarises the first summary too) is decoded in turn.
SUMMARY_MARK = "summary of "


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
        return (f"{_number(both, before)} is both summarised and still in the history after the summary: "
                "the originals the summary replaced were not all removed (duplicates)")
    if covered + rest == before:
        return None
    foreign = next((m for m in covered + rest if m not in before), None)
    if foreign is not None:
        return f"the history holds {foreign.describe()}, which the session did not hold before compact"
    lost = [m for m in before if m not in covered + rest]
    if lost:
        found = (f"{_number(lost[0], before)} is lost: neither summarised nor in the history after the summary "
                 f"(the summary covers {messages(len(covered))}, and {messages(len(rest))} come after it)")
        story = next((text for group, text in known if lost == [m.plain() for m in group]), None)
        return found + (f"; the {messages(len(lost))} lost are exactly {story}" if story else "")
    if covered != before[:len(covered)]:
        return (f"the summary does not cover the oldest messages of the session in order (it covers "
                f"{', '.join(_number(m, before) for m in covered[:4])}{' ...' if len(covered) > 4 else ''})")
    return "the messages after the summary are not the rest of the session in order"


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


# -- several writers at once: what each appended must be there once, in its order --------------------

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
    __tracebackhide__ = True
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
