"""Count window: a store built with max_messages=N keeps exactly the last N messages."""

import pytest

from memory_regression.conversations import numbered_messages
from memory_regression.reference import assert_history, expected_count_window


@pytest.mark.requires("count-window")
def test_count_window_keeps_last_n(memory, window):
    """After k appends, for every k from 0 to 2N+3 (so 0, 1, N-1, N, N+1 and 2N+3 among them),
    the history is exactly the last min(k, N) messages, in order.

    If this fails: look at the LTRIM indices (``ltrim(key, -N, -1)`` keeps N; ``-N-1`` keeps one
    too many; ``0, N-1`` keeps the oldest; ``-0`` keeps everything), at trimming that happens
    before rather than after the push, and at a trim that is not in the same transaction."""
    store = memory.store(max_messages=window)
    appended = []
    assert_history([], store.load("window"), appended, context=f"N={window}, after 0 appends: ")
    for message in numbered_messages(2 * window + 3, "turn"):
        store.append("window", message.role, message.content)
        appended.append(message)
        assert_history(expected_count_window(appended, window), store.load("window"), appended,
                       context=f"N={window}, after {len(appended)} appends: ")
