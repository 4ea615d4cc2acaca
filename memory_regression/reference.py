"""The reference model: what a correct store returns, and how to say what a wrong one did.

Scenarios compute the expected history here and raise :class:`HistoryMismatch` with a
message in store terms ("lost message 7 of 12") followed by expected against actual.
"""

from __future__ import annotations

from typing import Callable, Sequence

from .contract import Message

MAX_LISTED = 24  # rows of the expected/actual listing in one failure message


class HistoryMismatch(AssertionError):
    """A scenario's failure: a one-line diagnosis plus the expected and actual histories."""

    def __init__(self, diagnosis: str, expected: Sequence[Message] | None, actual: Sequence[Message]):
        self.diagnosis = diagnosis
        self.expected = list(expected) if expected is not None else None
        self.actual = list(actual)
        super().__init__(f"{diagnosis}\n{side_by_side(self.expected, self.actual)}")


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


def side_by_side(expected: Sequence[Message] | None, actual: Sequence[Message]) -> str:
    """Expected against actual, one message a row, around the first difference."""
    expected_rows = [m.describe() for m in expected] if expected is not None else []
    actual_rows = [m.describe() for m in actual]
    first = 0
    if expected is not None:
        while (first < min(len(expected_rows), len(actual_rows))
               and expected[first] == actual[first]):
            first += 1
    start = max(0, first - 3)
    end = start + MAX_LISTED
    longest = max(len(expected_rows), len(actual_rows))
    lines = []
    if expected is not None:
        lines.append(f"expected ({messages(len(expected_rows))}) | actual ({messages(len(actual_rows))})")
    else:
        lines.append(f"actual ({messages(len(actual_rows))})")
    if start:
        lines.append(f"  ... {start} earlier rows equal")
    for index in range(start, min(end, longest)):
        want = expected_rows[index] if index < len(expected_rows) else "-"
        got = actual_rows[index] if index < len(actual_rows) else "-"
        if expected is None:
            lines.append(f"  {index + 1:>4}  {got}")
        else:
            lines.append(f"{'  ' if want == got else '!!'}{index + 1:>4}  {want}  |  {got}")
    if longest > end:
        lines.append(f"  ... {longest - end} more rows")
    return "\n".join(lines)
