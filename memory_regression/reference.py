"""The reference model: what a correct store returns, and how to say what a wrong one did.

Scenarios compute the expected history here and raise :class:`HistoryMismatch` with a
message in store terms ("lost message 7 of 12") followed by expected against actual.
"""

from __future__ import annotations

from dataclasses import dataclass
from difflib import SequenceMatcher
from itertools import zip_longest
from typing import Callable, Sequence

from .contract import Message

MAX_LISTED = 24  # rows of the expected/actual listing in one failure message


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


def expected_count_window(appended: Sequence[Message], window: int) -> list[Message]:
    """The last min(k, N) messages of the k appended."""
    return list(appended[-window:]) if appended else []


def messages(count: int) -> str:
    return f"{count} message" + ("" if count == 1 else "s")


def _number(message: Message, appended: Sequence[Message]) -> str:
    for index, candidate in enumerate(appended):
        if candidate == message:
            return f"message {index + 1} of {len(appended)}"
    return "a message that was never appended to this session"


def _first_content_difference(expected: str, actual: str) -> str:
    for position, (a, b) in enumerate(zip(expected, actual)):
        if a != b:
            return f"first difference at character {position}: expected {a!r}, got {b!r}"
    return (f"expected {len(expected)} characters, got {len(actual)}, "
            f"the first {min(len(expected), len(actual))} equal")


def diagnose(expected: Sequence[Message], actual: Sequence[Message],
             appended: Sequence[Message]) -> str | None:
    """A one-line diagnosis of how ``actual`` differs from ``expected``, or None if equal."""
    expected, actual = list(expected), list(actual)
    if expected == actual:
        return None
    if len(actual) > 1 and actual == expected[::-1]:
        return f"history is in reverse order ({messages(len(actual))}, newest first)"
    if not actual:
        return f"history is empty; expected {messages(len(expected))}"
    if len(actual) == len(expected):
        for index, (want, got) in enumerate(zip(expected, actual)):
            if want == got:
                continue
            if want.content == got.content:
                return f"message {index + 1} of the history lost its role: expected {want.role!r}, got {got.role!r}"
            if got in expected:
                return (f"history is reordered: position {index + 1} holds "
                        f"{_number(got, appended)}, expected {_number(want, appended)}")
            if want.role == got.role and got not in appended:
                return (f"message {index + 1} of the history was altered: "
                        f"{_first_content_difference(want.content, got.content)}")
            return f"position {index + 1} holds {_number(got, appended)}, expected {_number(want, appended)}"
    missing = [m for m in expected if m not in actual]
    extra = [m for m in actual if m not in expected]
    if len(actual) < len(expected) and not extra:
        return (f"lost {_number(missing[0], appended)}"
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


def assert_history(expected: Sequence[Message], actual: Sequence[Message],
                   appended: Sequence[Message], context: str = "") -> None:
    __tracebackhide__ = True
    problem = diagnose(expected, actual, appended)
    if problem:
        raise HistoryMismatch(f"{context}{problem}", expected, actual)


def expected_token_window(appended: Sequence[Message], budget: int,
                          cost: Callable[[str], int]) -> list[Message]:
    """The longest suffix of what was appended that fits the budget (empty if the newest does not)."""
    kept: list[Message] = []
    total = 0
    for message in reversed(appended):
        total += cost(message.content)
        if total > budget:
            break
        kept.append(message)
    return kept[::-1]


def token_window_problem(appended: Sequence[Message], history: Sequence[Message], budget: int,
                         cost: Callable[[str], int]) -> str | None:
    """Check a token-windowed history: a contiguous suffix, within budget, and maximal.

    When the newest message alone exceeds the budget, the history may be empty or hold that
    message alone; no older message may remain.
    """
    count = len(history)
    if count > len(appended) or list(history) != list(appended[len(appended) - count:]):
        return "history is not a suffix of what was appended"
    costs = [cost(m.content) for m in history]
    total = sum(costs)
    newest_oversize = bool(appended) and cost(appended[-1].content) > budget
    if newest_oversize:
        if count > 1:
            return (f"the newest message alone costs {cost(appended[-1].content)} tokens, over the budget "
                    f"of {budget}, yet {messages(count - 1)} older remain")
        return None
    if total > budget:
        return f"history costs {total} tokens, over the budget of {budget} ({messages(count)})"
    if count < len(appended):
        older = appended[len(appended) - count - 1]
        if total + cost(older.content) <= budget:
            return (f"history is over-trimmed: it costs {total} of {budget} tokens, and the next older "
                    f"message ({cost(older.content)} tokens) would still fit")
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
