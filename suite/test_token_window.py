"""Token window: a store built with max_tokens keeps the newest messages that fit the budget."""

import functools

import pytest

from memory_regression.conversations import token_conversation
from memory_regression.reference import HistoryMismatch, expected_token_window, token_window_problem


@pytest.mark.requires("token-window")
def test_token_window_keeps_maximal_suffix(memory, profile):
    """After every append the history is a contiguous suffix of what was appended, costs no more
    than the budget, and is maximal: the next older message would not fit.

    The conversation is about three budgets long, with turns of 1/16 to 1/5 of the budget, one
    turn that makes a suffix land exactly on the budget, and one turn that alone exceeds it (then
    the history may be empty or hold that turn alone, but no older one). The cost of a message is
    ``count_tokens(content)``, per-message overhead included; if your store counts its own way,
    pass the same counter with --token-counter.

    If this fails: compare the store's counter with the suite's (see the profile line of the
    report), check ``>`` against ``>=`` when trimming, and what happens to an oversize message."""
    budget = profile.max_tokens
    cost = functools.lru_cache(maxsize=None)(memory.counter(profile))  # each text once
    conversation = token_conversation(budget, cost, profile.name)
    store = memory.store(profile=profile)
    appended = []
    for message in conversation.messages:
        store.append("tokens", message.role, message.content)
        appended.append(message)
        history = store.load("tokens")
        problem = token_window_problem(appended, history, budget, cost)
        if problem:
            where = (" (this append makes a suffix cost exactly the budget)"
                     if len(appended) - 1 == conversation.exact_index else
                     " (this message alone is over the budget)"
                     if len(appended) - 1 == conversation.oversize_index else "")
            raise HistoryMismatch(f"{profile.name}, budget {budget} tokens, after {len(appended)} appends"
                                  f"{where}: {problem}", expected_token_window(appended, budget, cost), history)
