"""The growth finding of a scenario that times its appends (memory_regression.harness.growth): a store whose
append time grows with its history is told by how much; noise, a machine slow throughout or slowed
meanwhile (the control appends to short sessions show it) and a growth too small to matter are not
warned of."""

import itertools
import time
from types import SimpleNamespace

import pytest
from redis.crc import key_slot

from memory_regression.contract.rules import Message
from memory_regression.harness.findings import Findings
from memory_regression.harness.growth import (CONTROL_EVERY, CONTROL_SESSION_LENGTH, GROWTH_SAMPLES, AppendTimes, Took,
    append_within, control_ids, growth_finding, timed_appends)

MS = 0.001


def times(history, control=lambda made: 0.2 * MS, cpu=None, control_cpu=None):
    """Append times of ``history``, with a control append after every CONTROL_EVERY, taking ``control(made)``;
    on the CPU clock ``cpu`` and ``control_cpu(made)``, by default as on the wall clock (an idle machine's)."""
    cpu, control_cpu = history if cpu is None else cpu, control if control_cpu is None else control_cpu
    return AppendTimes([Took(*took) for took in zip(history, cpu)],
                       [(made, Took(control(made), control_cpu(made)))
                        for made in range(CONTROL_EVERY, len(history) + 1, CONTROL_EVERY)])


LINEAR = [0.2 * MS + i * 0.01 * MS for i in range(1000)]    # linear per append: quadratic in all


def test_append_time_that_grows_with_the_history_is_warned_of():
    """On an idle machine, where an append's time is its CPU time: the warning says the growth is in
    the store's process."""
    assert growth_finding(times(LINEAR), 6.0) == (
        "append time grows with history length: 1,000 appends in 6.0 s, the first 100 at 0.69 ms each, "
        "the last 100 at 9.70 ms each (medians, 13.9×), while appends to short sessions made meanwhile took "
        "0.20 ms each at the start and 0.20 ms at the end; the worker's CPU time per append went from 0.69 ms to "
        "9.70 ms (appends to short sessions: 0.20 ms and 0.20 ms): the growth is in the store's code or its client "
        "library (a busy machine does not lengthen CPU time)", None)


def test_a_growth_in_redis_is_warned_of_without_naming_the_store_code():
    """The appends wait longer and longer on the wall clock while the worker's CPU time per append
    stays flat (a command whose work in Redis grows with the list): warned of, and not blamed on
    the store's code."""
    warning, note = growth_finding(times(LINEAR, cpu=[0.1 * MS] * 1000, control_cpu=lambda made: 0.1 * MS), 6.0)
    assert note is None
    assert warning.startswith("append time grows with history length: 1,000 appends in 6.0 s"), warning
    assert warning.endswith("; the worker's CPU time per append went from 0.10 ms to 0.10 ms (appends to short "
                            "sessions: 0.10 ms and 0.10 ms)"), warning


def test_a_machine_busy_at_the_start_does_not_hide_a_growth():
    """The first tenth of the appends ran on a machine busy enough to make them, and the control appends
    made meanwhile, five times slower: against the first tenth alone the last grew less than
    GROWTH_RATIO, against their controls far more."""
    busy_start = [5 * d if i < 100 else d for i, d in enumerate(LINEAR)]
    warning, note = growth_finding(times(busy_start, lambda made: 1 * MS if made <= 100 else 0.2 * MS,
                                         cpu=LINEAR, control_cpu=lambda made: 0.2 * MS), 6.0)
    assert note is None
    assert warning.startswith("append time grows with history length: 1,000 appends in 6.0 s, the first 100 at 3.47 "
                              "ms each, the last 100 at 9.70 ms each (medians, 2.8×), while appends to short sessions "
                              "made meanwhile took 1.00 ms each at the start and 0.20 ms at the end; "), warning


def test_a_server_busy_at_the_end_does_not_hide_a_growth():
    """Measured, the store that rewrites its history at every append, on a Redis server another
    client kept busy reading a list of 20,000 items: the short control appends waited on it most
    (0.15 ms each at the start, 7.30 ms at the end), so against them the last appends (11.87 ms,
    from 0.30) grew less than GROWTH_RATIO on the wall clock; on the CPU clock, which the waits do
    not run, they grew from 0.28 ms to 3.21 ms against 0.13 ms and 0.30 ms for the controls. (One
    clean-clone CI run passed this store's growth off as a busy machine's, in a note.)"""
    rewrites = [0.30 * MS + i * 0.0116 * MS for i in range(1000)]
    cpu = [0.28 * MS + i * 0.0030 * MS for i in range(1000)]
    warning, note = growth_finding(times(rewrites, lambda made: 0.15 * MS if made <= 100 else 7.30 * MS,
                                         cpu=cpu, control_cpu=lambda made: 0.13 * MS if made <= 100 else 0.30 * MS),
                                   4.0)
    assert note is None
    assert warning == ("append time grows with history length: 1,000 appends in 4.0 s, the first 100 at 0.87 ms "
                       "each, the last 100 at 11.31 ms each (medians, 12.9×), while appends to short sessions made "
                       "meanwhile took 0.15 ms each at the start and 7.30 ms at the end (they slowed too: a busy "
                       "machine or server, whose delays weigh most on short calls); the worker's CPU time per append "
                       "went from 0.43 ms to 3.13 ms (appends to short sessions: 0.13 ms and 0.30 ms): the growth "
                       "is in the store's code or its client library (a busy machine does not lengthen CPU time)")


def test_appends_that_sped_up_are_no_growth_however_much_more_their_controls_did():
    """Measured on a clean-clone CI run, the async example on a cluster: the first tenth's appends
    at 9.73 ms against 10.31 ms for their controls (a machine so busy that its delays made both
    alike), the last at 5.10 ms against 1.75 ms: against their controls 3.1× more, on their own
    twice faster."""
    slowed_start = [9.73 * MS] * 40 + [7 * MS] * 320 + [5.10 * MS] * 40
    assert growth_finding(times(slowed_start, lambda made: 10.31 * MS if made <= 40 else 1.75 * MS), 2.8) == (
        None, None)


def test_a_session_slower_than_the_controls_throughout_is_no_growth():
    """A session's appends three times slower than the control appends from its first to its last: the
    history did not grow them."""
    assert growth_finding(times([3 * MS] * 1000, lambda made: 1 * MS), 3.0) == (None, None)


def test_appends_slowed_with_their_controls_on_both_clocks_are_a_note_not_a_warning():
    """The control appends slowed as much as the history's, on the wall clock and on the CPU clock
    (a store that slows with all it holds, or a machine busy throughout the end): not the
    history, and the note says what it may be instead."""
    slowed = [0.5 * MS] * 900 + [5 * MS] * 100
    warning, note = growth_finding(times(slowed, lambda made: 5 * MS if made > 900 else 0.5 * MS), 3.0)
    assert warning is None
    assert note == ("appends slowed during the run: 1,000 appends in 3.0 s, the first 100 at 0.50 ms each, the "
                    "last 100 at 5.00 ms each (medians, 10.0×); appends to short sessions made meanwhile slowed "
                    "with them (0.50 ms each at the start and 5.00 ms at the end), so not with the session's "
                    "history: the machine was busy, or the store slows with all the data it holds; the worker's CPU "
                    "time per append went from 0.50 ms to 5.00 ms (appends to short sessions: 0.50 ms and 5.00 ms) "
                    "(no warning)")


def test_pauses_of_the_machine_are_no_growth():
    durations = [0.1 * MS] * 1000
    for i in range(0, 1000, 7):
        durations[i] = 80 * MS    # a pause every 7th append, the last tenth included
    assert growth_finding(times(durations), 12.0) == (None, None)


def test_a_store_slow_throughout_is_no_growth():
    assert growth_finding(times([5 * MS] * 1000), 5.0) == (None, None)


def test_a_growth_of_less_than_a_millisecond_per_append_is_no_finding():
    assert growth_finding(times([0.01 * MS + i * 0.0005 * MS for i in range(1000)]), 0.3) == (None, None)


def test_too_few_appends_or_no_control_are_not_judged():
    assert growth_finding(times(LINEAR[:199]), 1.2) == (None, None)
    assert growth_finding(AppendTimes([Took(s, s) for s in LINEAR]), 6.0) == (None, None)


class TimedStore:
    """A store whose appends take ``seconds(session_id)`` each, recording what it was given."""

    def __init__(self, seconds=lambda session_id: 0):
        self.seconds, self.appended = seconds, []

    def append(self, session_id, role, content):
        time.sleep(self.seconds(session_id))
        self.appended.append((session_id, content))


def test_timed_appends_run_a_control_after_every_few_on_short_sessions():
    store = TimedStore(lambda session_id: 0.002 if session_id == "long" else 0)
    messages = [Message("user", f"m{i}") for i in range(100)]
    timed = timed_appends(store, "long", messages, 60, control=True)
    assert [c for s, c in store.appended if s == "long"] == [m.content for m in messages]
    controls = [s for s, _ in store.appended if s != "long"]
    assert len(controls) == len(timed.control) == 100 // CONTROL_EVERY
    assert {controls.count(s) for s in set(controls)} <= {CONTROL_SESSION_LENGTH, 100 // CONTROL_EVERY %
                                                          CONTROL_SESSION_LENGTH}
    assert [made for made, _ in timed.control] == list(range(CONTROL_EVERY, 101, CONTROL_EVERY))
    assert min(took.wall for took in timed.history) >= 0.002   # the times are of their calls: each slept that long
    assert max(took.cpu for took in timed.history) < 0.002     # asleep, a process spends no CPU time


def test_timed_appends_stop_at_the_budget_and_without_control_append_only_to_the_session():
    store = TimedStore(lambda session_id: 0.01)
    timed = timed_appends(store, "s", [Message("user", f"m{i}") for i in range(1000)], 0.1, control=False)
    assert 1 <= len(timed.history) < 1000 and timed.control == []
    assert {s for s, _ in store.appended} == {"s"}


def test_control_sessions_keys_share_the_sessions_slot_on_a_cluster():
    """Whatever the store puts before and after the session id in its keys, in a hash tag or not, the
    control sessions' keys hash to the session's slot: on a cluster they live on its node."""
    store = TimedStore()
    timed_appends(store, "long-history", [Message("user", f"m{i}") for i in range(400)], 60, control=True)
    controls = {session for session, _ in store.appended} - {"long-history"}
    assert len(controls) == 400 // CONTROL_EVERY // CONTROL_SESSION_LENGTH
    assert all(len(c) == len("long-history") and not {"{", "}"} & set(c) for c in controls), controls
    for template in ("chat:{}", "memory:{}:messages", "chat:{{{}}}:meta", "{}"):
        keys = [template.format(session) for session in ("long-history", *controls)]
        assert {key_slot(key.encode()) for key in keys} == {key_slot(keys[0].encode())}, template


def test_a_short_session_ids_controls_are_named_after_it():
    assert list(itertools.islice(control_ids("long"), 2)) == ["long control 0", "long control 1"]


def test_a_budget_that_holds_too_few_appends_leaves_steady_appends_unjudged():
    """A store too slow for GROWTH_SAMPLES appends within the budget is not judged, and says so,
    rather than holding steady-appends unchecked; one that makes them is judged (here: held)."""
    context = SimpleNamespace(settings=SimpleNamespace(scenario_timeout=300, append_budget=None), findings=Findings())
    messages = [Message("user", f"m{i}") for i in range(1000)]
    slow = append_within(context, TimedStore(lambda session_id: 0.004), "long-history", messages, 0.3)
    assert len(slow.messages) < GROWTH_SAMPLES and context.findings.unjudged == ["steady-appends"]
    assert context.findings.notes == [f"steady-appends not judged: {len(slow.messages):,} appends within the 0.3 s "
                                      f"budget, fewer than the {GROWTH_SAMPLES} a growth of their time is judged on"]
    judged = SimpleNamespace(settings=context.settings, findings=Findings())
    append_within(judged, TimedStore(), "long-history", messages[:GROWTH_SAMPLES], 60)
    assert judged.findings.unjudged == [] and judged.findings.warnings == []


@pytest.mark.parametrize("append_budget, scenario_timeout, budget", [(0.2, 300, 0.2), (None, 0.8, 0.2), (5, 300, 0.3)])
def test_a_run_of_appends_stops_at_the_least_of_its_budget_append_budget_and_a_quarter_of_the_timeout(
        append_budget, scenario_timeout, budget):
    """--append-budget caps the scenario's own budget (0.3 s here), as a quarter of --scenario-timeout does."""
    context = SimpleNamespace(settings=SimpleNamespace(scenario_timeout=scenario_timeout, append_budget=append_budget),
                              findings=Findings())
    timed = append_within(context, TimedStore(lambda session_id: 0.004), "long-history",
                          [Message("user", f"m{i}") for i in range(1000)], 0.3)
    assert timed.budget_s == budget and timed.cut_short
    assert context.findings.notes[0].startswith(f"steady-appends not judged: {len(timed.messages):,} appends within "
                                                f"the {budget:g} s budget")
