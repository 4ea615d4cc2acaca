"""The growth finding of a scenario that times its appends (context.growth_finding): a store whose
append time grows with its history is told by how much; noise, a machine slow throughout and a
growth too small to matter are not findings."""

from memory_regression.context import growth_finding

MS = 0.001


def test_append_time_that_grows_with_the_history_is_a_finding():
    durations = [0.2 * MS + i * 0.01 * MS for i in range(1000)]    # linear per append: quadratic in all
    assert growth_finding(durations, 6.0) == (
        "append time grows with history length: 1,000 appends in 6.0 s, the first 100 at 0.69 ms each, "
        "the last 100 at 9.70 ms each (medians, 14×)")


def test_pauses_of_the_machine_are_no_growth():
    durations = [0.1 * MS] * 1000
    for i in range(0, 1000, 7):
        durations[i] = 80 * MS    # a pause every 7th append, the last tenth included
    assert growth_finding(durations, 12.0) is None


def test_a_store_slow_throughout_is_no_growth():
    assert growth_finding([5 * MS] * 1000, 5.0) is None


def test_a_growth_of_less_than_a_millisecond_per_append_is_no_finding():
    assert growth_finding([0.01 * MS + i * 0.0005 * MS for i in range(1000)], 0.3) is None


def test_too_few_appends_are_not_judged():
    assert growth_finding([i * MS for i in range(1, 50)], 1.2) is None
