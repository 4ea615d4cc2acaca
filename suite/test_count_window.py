"""Count window: a store built with max_messages=N keeps what the run's window policy says of the
last N messages (under the default, suffix: exactly the last N)."""

import pytest

from memory_regression.conversations import window_turns
from memory_regression.reference import HistoryMismatch, count_window, expected_count_window, window_problem


@pytest.mark.requires("count-window")
def test_count_window_keeps_last_n(memory, window):
    """After k appends, for every k from 0 to 2N+3 turns (so 0, 1, N-1, N, N+1 and 2N+3 among
    them), the history is exactly what the window policy keeps, in order: under suffix the last
    min(k, N); under start-on-user the longest suffix of at most N that starts on no assistant or tool
    message (the turns are then user, assistant, tool, assistant, so the window's edge falls on each);
    under keep-system the conversation opens with a system message, which stays first and counts
    toward N.

    If this fails: look at the LTRIM indices (``ltrim(key, -N, -1)`` keeps N; ``-N-1`` keeps one
    too many; ``0, N-1`` keeps the oldest; ``-0`` keeps everything), at trimming that happens
    before rather than after the push, and at a trim that is not in the same transaction. Under a
    policy, the message names the rule broken; a hint naming another policy means the store
    follows that one: pass it with --window-policy if it does so on purpose."""
    policy = memory.window_policy
    store = memory.store(max_messages=window)
    appended = []

    def check():
        history = store.load("window")
        problem = window_problem(appended, history, count_window(window), policy)
        if problem:
            raise HistoryMismatch(f"N={window}, after {len(appended)} appends: {problem}",
                                  expected_count_window(appended, window, policy), history)

    check()
    for message in window_turns(2 * window + 3, policy):
        appended.append(store.add("window", message))
        check()
