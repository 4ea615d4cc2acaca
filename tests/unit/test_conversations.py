"""The window scenarios' conversations exercise the run's window policy: under suffix they are what
they always were, under a rule they reach the points where a store following it differs."""

import math

import pytest

from memory_regression.reference.conversations import (SAMPLED_POINTS, SYSTEM_PROMPT, check_points, numbered_messages,
    token_conversation, window_turns)
from memory_regression.reference.model import POLICIES, SUFFIX, expected_count_window, expected_token_window


def cost(content):
    return math.ceil(len(content) / 4) + 4     # approx, with small-4k's overhead


def test_count_turns_under_suffix_are_unchanged():
    assert window_turns(7, SUFFIX) == numbered_messages(7, "turn")


@pytest.mark.parametrize("policy", POLICIES[1:], ids=str)
@pytest.mark.parametrize("window", [1, 5, 20])
def test_count_turns_make_the_policy_differ_from_suffix_at_several_k(policy, window):
    turns = window_turns(2 * window + 3, policy)
    assert (turns[0] == SYSTEM_PROMPT) == policy.keep_system
    assert ({m.role for m in turns} >= {"tool"}) == policy.start_on_user
    differ = [k for k in range(len(turns) + 1)
              if expected_count_window(turns[:k], window, policy) != expected_count_window(turns[:k], window)]
    assert len(differ) >= 3, differ


@pytest.mark.parametrize("policy", POLICIES, ids=str)
@pytest.mark.parametrize("budget", [3584, 7168])
def test_token_conversation_lands_the_kept_history_on_the_budget(policy, budget):
    conversation = token_conversation(budget, cost, "small-4k", policy)
    messages = conversation.messages
    assert messages[0].role == "system"
    exact = conversation.exact_index
    kept = expected_token_window(messages[:exact + 1], budget, cost, policy)
    assert sum(cost(m.content) for m in kept) == budget
    assert cost(messages[conversation.oversize_index].content) > budget
    differ = [k for k in range(len(messages) + 1)
              if expected_token_window(messages[:k], budget, cost, policy) != expected_token_window(messages[:k],
                                                                                                   budget, cost)]
    assert len(differ) >= 3 or policy == SUFFIX, differ


def test_check_points_keep_the_fixed_ones_and_sample_a_bounded_number():
    fixed = (0, 1, 9_999, 10_000, 10_001, 20_003, 30_000)
    points = check_points(20_003, fixed, "count window 10000")
    assert points == check_points(20_003, fixed, "count window 10000") == sorted(set(points))
    assert {0, 1, 9_999, 10_000, 10_001, 20_003} <= set(points) and max(points) == 20_003
    assert len(points) == 6 + SAMPLED_POINTS          # one from each stretch, none on a fixed point here
    assert check_points(3, (), "short") == [0, 1, 2, 3]
