"""How a wrong history is told: what the store did, in store terms, where the evidence shows it.

:func:`assert_history` raises :class:`HistoryMismatch` with a one-line diagnosis ("lost message 7
of 12 (user: 'turn 0007')", "history is in reverse order", "the oldest 5 kept: the wrong end is
trimmed") followed by expected against actual (:class:`Listing`). A cause is named only where the
histories show it; otherwise the diagnosis says what was observed. The expected histories come from
the reference model (:mod:`.reference`).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from difflib import SequenceMatcher
from itertools import zip_longest
from typing import Callable, Sequence

from ..contract.rules import Message
from .model import messages


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


def _times(count: int) -> str:
    return {1: "once", 2: "twice"}.get(count, f"{count} times")


def _repeat(lost: Message, expected: Sequence[Message], actual: Sequence[Message]) -> str:
    """What a lost message that the history still holds is: one of a repeat, held fewer times."""
    if lost not in actual:
        return ""
    return (f", a repeat: the same message comes {_times(expected.count(lost))}, the history holds it "
            f"{_times(actual.count(lost))}")


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


def position(message: Message, appended: Sequence[Message]) -> str:
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
    missing, extra = unmatched(expected, actual), unmatched(actual, expected)
    dropped = next((message for message in missing if message in actual), None)
    if dropped is not None and len(actual) >= len(expected):   # the window filled up with an older message instead
        instead = f", and holds {position(extra[0], appended)} instead, which the window should have dropped"
        return (f"lost {position(dropped, appended)} ({dropped.describe(LOST_WIDTH)}"
                f"{_repeat(dropped, expected, actual)})" + (instead if extra else ""))
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
                        f"{position(got, appended)}, expected {position(want, appended)}")
            if want.role == got.role and got not in appended:
                return (f"message {index + 1} of the history was altered: "
                        f"{_first_content_difference(want.content, got.content)}")
            return f"position {index + 1} holds {position(got, appended)}, expected {position(want, appended)}"
    if len(actual) < len(expected) and not extra:
        return (f"lost {position(missing[0], appended)} ({missing[0].describe(LOST_WIDTH)}"
                f"{_repeat(missing[0], expected, actual)})"
                + (f" and {len(missing) - 1} more" if len(missing) > 1 else "") + _one_role(missing, expected)
                + f": history has {messages(len(actual))}, expected {len(expected)}")
    if len(actual) > len(expected) and not missing:
        if extra[0] not in appended:
            return (f"history holds {messages(len(extra))} never appended to this session, "
                    f"first {extra[0].describe()}")
        return (f"kept {messages(len(actual))}, expected {len(expected)}: {position(extra[0], appended)} "
                "should have been trimmed")
    if extra and missing and extra[0] not in appended:   # text no append wrote where appended text is missing
        return (f"lost {position(missing[0], appended)} ({missing[0].describe(LOST_WIDTH)})"
                + (f" and {len(missing) - 1} more" if len(missing) > 1 else "")
                + f", and holds {messages(len(extra))} no append wrote, first {extra[0].describe(LOST_WIDTH)}: the "
                "store altered what it stored or loaded, or lost those messages and holds other text")
    if extra:
        return f"history holds {position(extra[0], appended)}, which should not be there"
    return f"history differs: expected {messages(len(expected))}, got {len(actual)}"


def _one_role(missing: list[Message], expected: list[Message]) -> str:
    """Where the messages lost are every message of one role, and only they: that, said."""
    roles = {message.role for message in missing}
    if len(missing) < 2 or len(roles) != 1:
        return ""
    role = roles.pop()
    if sum(message.role == role for message in expected) != len(missing):
        return ""
    return f", every {role} message of the {len(expected)} and only those"


def assert_history(expected: Sequence[Message], actual: Sequence[Message], appended: Sequence[Message],
                   context: str = "", hint: Callable[[list[Message]], str | None] | None = None) -> None:
    """Raise HistoryMismatch unless ``actual`` is ``expected``. ``hint``, given the actual history
    of a mismatch, may add what the scenario's own evidence shows of the cause (None: nothing); a
    hint that raises (it may load through the store again) adds nothing, and the mismatch stands."""
    problem = diagnose(expected, actual, appended)
    if problem:
        try:
            found = hint(list(actual)) if hint else None
        except Exception:   # the store failing again while the evidence was gathered: the mismatch is the finding
            found = None
        raise HistoryMismatch(f"{context}{problem}" + (f"; {found}" if found else ""), expected, actual)


def lost_after(expected: Sequence[Message], actual: Sequence[Message], firsts: Sequence[Message],
               event: str, reached: Callable[[Message], str | None] = lambda message: None) -> str | None:
    """When every message ``actual`` lacks is among ``firsts`` (each the first appended after
    ``event``, a kill of the store's connections, a restart) and nothing else differs: how the
    store lost them. Their appends returned, so it swallowed the error each met, unless the server
    ran the write of the first lost one (``reached``: the steps it ran, in words, where the store's
    commands were logged): then it was stored and lost afterwards."""
    missing = unmatched(expected, actual)
    if not missing or unmatched(actual, expected) or any(message not in firsts for message in missing):
        return None
    which = "the lost message is" if len(missing) == 1 else f"the {len(missing)} lost messages are"
    ran = reached(missing[0])
    if ran:
        return (f"{which} the first appended after {event}; its append returned, and the server ran its write "
                f"({ran}): the message was stored and lost afterwards (possible causes: a later write of the store "
                "replaced or trimmed it, or a reconnect wrote back a copy of the session kept from before)")
    return (f"{which} the first appended after {event}, and its append returned: the store swallows the error "
            "of an append that meets a closed connection (a \"best-effort\" write), so the message is lost unseen")


def fresh_instance_loads(expected: Sequence[Message], fresh: Sequence[Message], why: str) -> str | None:
    """When a new store instance loads ``expected`` where another loaded something else: Redis holds
    the right history, and ``why`` says what the other instance did instead."""
    if list(fresh) != list(expected):
        return None
    return f"a new store instance loads the {messages(len(expected))} expected, so Redis holds them: {why}"


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


