"""What a comparison with a baseline counts as a regression (memory_regression/baseline.py); the
comparisons of real runs are tests/end_to_end/test_baseline.py's."""

from memory_regression.baseline import compare


def summary(level, results, groups=("default",)):
    return {"store": "m.py:S", "backend": "redis 7.0.15 (private server, port 1)", "window_sizes": [5],
            "window_policy": "suffix", "profiles": [], "groups": list(groups), "conformance_level": level,
            "results": [{"nodeid": nodeid, "outcome": outcome, "requires": requires, "guarantees": []}
                        for nodeid, outcome, requires in results], "warnings": []}


CORE = ("test_core.py::test_round_trip", "passed", [])
TTL = ("test_ttl.py::test_refresh", "passed", ["ttl"])


def test_a_capability_whose_scenarios_did_not_run_now_is_not_judged_lost():
    """Fewer groups now: ttl is missing from the level because its scenario did not run, which is
    no regression; the groups differ, which the comparison says."""
    comparison = compare(summary("core", [CORE]), summary("core+ttl", [CORE, TTL]), "base.json")
    assert (comparison.lost, comparison.not_judged, comparison.regressions) == ([], ["ttl"], 0)
    assert comparison.gone == [TTL[0]] and comparison.differences == []
    other_groups = compare(summary("core", [CORE], groups=["core"]), summary("core+ttl", [CORE, TTL]), "base.json")
    assert other_groups.differences == ["the scenario groups: default in the baseline, core now"]


def test_a_capability_whose_scenario_ran_and_failed_is_lost():
    comparison = compare(summary("core", [CORE, (*TTL[:1], "failed", ["ttl"])]), summary("core+ttl", [CORE, TTL]),
                         "base.json")
    assert (comparison.lost, comparison.newly_failing, comparison.regressions) == (["ttl"], [TTL[0]], 2)
