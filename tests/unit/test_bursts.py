"""What a burst's history says of each writer's messages (memory_regression/harness/bursts.py): a message present
further on is reordered, not missing."""

from memory_regression.harness.bursts import out_of_run, whose
from memory_regression.contract.rules import Message


def burst(*order):
    """Writer 1's messages #1.. appended; the history holds them in ``order`` (1-based numbers)."""
    sent = [Message("user", f"writer 1, message {n}") for n in range(1, 5)]
    return [sent[n - 1] for n in order], whose([sent])


def test_a_message_present_further_on_is_reordered_not_missing():
    history, appended = burst(1, 3, 2, 4)
    assert out_of_run(history, appended) == ("writer 1's message #3 follows its #1, and its #2 comes later in the "
                                             "history: reordered")


def test_a_message_absent_is_missing():
    history, appended = burst(1, 3, 4)
    assert out_of_run(history, appended) == "writer 1's message #3 follows its #1, and its #2 is missing"


def test_consecutive_messages_say_nothing():
    history, appended = burst(2, 3, 4)
    assert out_of_run(history, appended) is None
