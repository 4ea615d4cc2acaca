"""Count window: a store built with max_messages=N keeps what the run's window policy says of the
last N messages (under the default, suffix: exactly the last N)."""

import pytest

from memory_regression.reference.conversations import check_points, window_turns
from memory_regression.reference.diagnosis import HistoryMismatch
from memory_regression.reference.window_problems import window_problem
from memory_regression.reference.model import count_window, expected_count_window


@pytest.mark.requires("count-window")
def test_count_window_keeps_last_n(stores, window):
    """2N+3 turns are appended; after k appends, at 0, 1, N-1, N, N+1 and the last, at the first k
    where the window's edge falls on each role, and at 16 more k spread over the conversation (the
    same on every run), one load must give exactly what the window policy keeps, in order: under suffix the
    last min(k, N); under start-on-user the longest suffix of at most N that starts on no assistant
    or tool message (the turns are then user, assistant, tool, assistant, so the window's edge
    falls on each); under keep-system the conversation opens with a system message, which stays
    first and counts toward N. The loads are bounded, so the scenario's cost grows linearly with N.

    If this fails: look at the LTRIM indices (``ltrim(key, -N, -1)`` keeps N; ``-N-1`` keeps one
    too many; ``0, N-1`` keeps the oldest; ``-0`` keeps everything), at trimming that happens
    before rather than after the push, and at a trim that is not in the same transaction. Under a
    policy, the message names the rule broken; a hint naming another policy means the store
    follows that one: pass it with --window-policy if it does so on purpose."""
    policy = stores.window_policy
    turns = window_turns(2 * window + 3, policy)
    fixed = (0, 1, window - 1, window, window + 1, len(turns), *policy.edge_points(turns, count_window(window)))
    store = stores.new(max_messages=window)
    appended = []
    for point in check_points(len(turns), fixed, f"count window {window}"):
        appended.extend(store.add("window", message) for message in turns[len(appended):point])
        history = store.load("window")
        problem = window_problem(appended, history, count_window(window), policy)
        if problem:
            raise HistoryMismatch(f"N={window}, after {len(appended)} appends: {problem}",
                                  expected_count_window(appended, window, policy), history)
