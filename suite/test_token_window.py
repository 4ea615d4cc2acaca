"""Token window: a store built with max_tokens keeps the newest messages that fit the budget, as the
run's window policy says."""

import functools

import pytest

from memory_regression.reference.conversations import check_points, token_conversation
from memory_regression.harness.counter_discovery import counter_finding, probe
from memory_regression.reference.diagnosis import HistoryMismatch
from memory_regression.reference.window_problems import window_problem
from memory_regression.reference.model import expected_token_window, token_budget


@pytest.mark.requires("token-window")
def test_token_window_keeps_maximal_suffix(stores, profile):
    """After k appends, at the boundary points (0, 1, the append that makes the kept history cost
    exactly the budget, the oversize message, the last append), at the first k where the window's
    edge falls on each role, and at 16 more k spread over the conversation (the same on every run),
    one load must give what the window policy keeps: under suffix a contiguous suffix that costs no
    more than the budget and is maximal (the next older message would not fit); under start-on-user
    the longest such suffix that starts on no assistant or tool message; under keep-system the
    opening system message stays first and its cost counts toward the budget.

    The conversation opens with a system message of about a tenth of the budget (trimmed like any
    other under suffix) and is about three budgets long, with turns of 1/16 to 1/5 of the budget
    (user, assistant, tool, assistant under start-on-user), one turn that makes the kept history
    land exactly on the budget, and one turn that alone exceeds it (then the history may leave that
    turn out or hold it alone, after the system message under keep-system, but nothing older). The
    cost of a message is ``count_tokens(content)``, per-message overhead included; if your store
    counts its own way, pass the same counter with --token-counter. The loads are bounded, so the
    scenario's cost grows linearly with the conversation.

    If this fails: where a counter the suite knows (chars, words, approx, a tiktoken encoding, each
    with a per-message overhead) explains every window the store kept, here and in a session of
    small messages whose costs differ from one counter to the next, which the scenario then
    appends, the message names it and the flag: the store counts its own way. Otherwise compare the
    store's counter with the suite's (see the profile line of the report), check ``>`` against
    ``>=`` when trimming, and what happens to an oversize message. Under a policy, the message
    names the rule broken; a hint naming another policy, which then explains every window the store
    kept, means the store follows that one: pass it with --window-policy if it does so on purpose."""
    policy = stores.window_policy
    budget = profile.max_tokens
    cost = functools.lru_cache(maxsize=None)(stores.counter(profile))  # each text once
    conversation = token_conversation(budget, cost, profile.name, policy)
    messages = conversation.messages
    window = token_budget(budget, cost)
    marks = [index + 1 for index in (conversation.exact_index, conversation.oversize_index) if index is not None]
    fixed = (0, 1, len(messages), *marks, *policy.edge_points(messages, window))
    store = stores.new(profile=profile)
    appended, observed = [], []
    for point in check_points(len(messages), fixed, f"token window {profile.name}"):
        appended.extend(store.add("tokens", message) for message in messages[len(appended):point])
        history = store.load("tokens")
        observed.append((list(appended), history))
        own = None if policy.allows(appended, history, window) else counter_finding(
            observed + probe(store, budget), budget, policy, stores.counter(profile).description)
        problem = window_problem(appended, history, window, policy, before=observed[:-1], hint=own is None)
        if problem:
            problem += f"; {own}" if own else ""
            where = (" (this append makes the kept history cost exactly the budget)"
                     if len(appended) - 1 == conversation.exact_index else
                     " (this message alone is over the budget)"
                     if len(appended) - 1 == conversation.oversize_index else "")
            raise HistoryMismatch(f"{profile.name}, budget {budget} tokens, after {len(appended)} appends"
                                  f"{where}: {problem}", expected_token_window(appended, budget, cost, policy),
                                  history)
