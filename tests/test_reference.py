"""The reference model against itself: the token-window checker accepts exactly the histories the
model allows, and every mismatch gets a diagnosis."""

from hypothesis import given, settings
from hypothesis import strategies as st

from memory_regression.contract import Message
from memory_regression.reference import (diagnose, expected_count_window, expected_token_window,
                                         token_window_problem)

contents = st.lists(st.text(alphabet="abcdefgh ", min_size=0, max_size=12), min_size=0, max_size=12,
                    unique=True)


def messages(texts):
    return [Message("user" if i % 2 == 0 else "assistant", t) for i, t in enumerate(texts)]


def cost(content):
    return len(content) + 1


@settings(max_examples=300, deadline=None)
@given(contents, st.integers(min_value=1, max_value=60))
def test_token_checker_accepts_exactly_what_the_model_allows(texts, budget):
    appended = messages(texts)
    expected = expected_token_window(appended, budget, cost)
    assert token_window_problem(appended, expected, budget, cost) is None
    newest_alone_over = bool(appended) and cost(appended[-1].content) > budget
    for start in range(len(appended) + 1):  # every suffix
        suffix = appended[start:]
        allowed = suffix == expected or (newest_alone_over and suffix == appended[-1:])
        assert (token_window_problem(appended, suffix, budget, cost) is None) == allowed
    if len(appended) >= 2:  # a history that is not a suffix is always refused
        assert token_window_problem(appended, appended[:1], budget, cost) is not None


@settings(max_examples=300, deadline=None)
@given(contents, st.integers(min_value=1, max_value=15))
def test_count_window_and_diagnosis(texts, window):
    appended = messages(texts)
    expected = expected_count_window(appended, window)
    assert len(expected) == min(len(appended), window) and expected == appended[len(appended) - len(expected):]
    assert diagnose(expected, expected, appended) is None
    for wrong in (appended, expected[::-1], expected[1:], [Message("system", m.content) for m in expected]):
        if wrong != expected:
            assert diagnose(expected, wrong, appended)


def test_diagnosis_wording():
    appended = messages(["a", "b", "c", "d"])
    assert diagnose(appended, appended[::-1], appended) == "history is in reverse order (4 messages, newest first)"
    assert diagnose(appended, appended[1:], appended) == "lost message 1 of 4: history has 3 messages, expected 4"
    assert diagnose(appended[2:], appended[1:], appended) == ("kept 3 messages, expected 2: message 2 of 4 should "
                                                              "have been trimmed")
    assert diagnose([], [Message("system", "hi")], appended) == ("history holds 1 message never appended to "
                                                                 "this session, first system: 'hi'")
    altered = [*appended[:3], Message("assistant", "dX")]
    assert diagnose(appended, altered, appended) == ("message 4 of the history was altered: expected 1 "
                                                     "characters, got 2, the first 1 equal")
    swapped = [*appended[:3], Message("assistant", "e")]
    assert diagnose(appended, swapped, appended) == ("message 4 of the history was altered: first difference "
                                                     "at character 0: expected 'd', got 'e'")
