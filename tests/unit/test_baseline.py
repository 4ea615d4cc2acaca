"""What a comparison with a baseline counts as a regression (memory_regression/baseline.py); the
comparisons of real runs are tests/end_to_end/test_baseline.py's."""

import pytest

from memory_regression.baseline import NOISE, baseline_json, check_fail_on, compare
from memory_regression.contract import UsageError


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


def test_failing_in_the_baseline_too_fails_the_step_only_when_any_failure_does():
    failing = (*TTL[:1], "failed", ["ttl"])
    base, now = summary("core", [CORE, failing]), summary("core", [CORE, failing])
    assert compare(now, base, "b.json").fails_step == []
    assert compare(now, base, "b.json", ("failures",)).fails_step == ["failures (1)"]
    lost = compare(summary("core", [CORE, failing]), summary("core+ttl", [CORE, TTL]), "b.json", ("lost-guarantees",))
    assert lost.fails_step == ["lost-guarantees (1)"]


def test_a_failing_case_the_baseline_lacks_is_newly_failing_and_added():
    comparison = compare(summary("core", [CORE, (*TTL[:1], "failed", ["ttl"])]), summary("core", [CORE]), "b.json")
    assert comparison.newly_failing == comparison.added == [TTL[0]] and comparison.fails_step == ["new-failures (1)"]


def figured(append_p50, bytes_per_message):
    found = summary("core", [CORE])
    found["latency"] = [{"nodeid": "test_latency.py::t[N=5]", "append": {"ratio_p50": append_p50, "ratio_p95": 2.0},
                         "load": {"ratio_p50": 1.5, "ratio_p95": None}}]
    found["footprint"] = [{"nodeid": "test_footprint.py::f", "bytes_per_message": bytes_per_message}]
    return found


def test_a_figure_counts_only_beyond_the_noise_either_way():
    limit = NOISE["p50 × floor"]
    within = compare(figured(1.7 * limit * 0.99, 330), figured(1.7, 320), "b.json", ("figures",))
    assert [c["verdict"] for c in within.figures] == ["within the noise"] * 4 and within.fails_step == []
    assert {c["figure"] for c in within.figures} == {"append p50 × floor", "append p95 × floor", "load p50 × floor",
                                                     "bytes per message"}   # load p95 unmeasured: not compared
    worse = compare(figured(1.7 * limit * 1.01, 640), figured(1.7, 320), "b.json", ("figures",))
    assert worse.fails_step == ["figures (2)"] and worse.regressions == 2
    assert worse.figures_worse[1] == ("test_footprint.py::f: bytes per message 320 → 640 (2.00×; identical runs move "
                                      f"it by up to {NOISE['bytes per message']:g}×)")
    better = compare(figured(1.7, 160), figured(1.7 * limit * 1.01, 320), "b.json", ("figures",))
    assert len(better.figures_better) == 2 and better.regressions == 0 and better.fails_step == []


def test_a_committed_baseline_keeps_what_a_comparison_reads_and_not_the_runs_setting():
    run = {**figured(1.7, 320), "duration_s": 9.1, "report_files": {"html": "/tmp/r/report.html"},
           "backend": "redis 7.0.15 (private server /usr/bin/redis-server, port 40123, pid 567)"}
    run["results"][0].update(duration_s=0.4, findings=["grew 1.1x"], details="")
    kept = baseline_json(run)
    assert kept["backend"] == "redis 7.0.15" and "duration_s" not in kept and "report_files" not in kept
    assert kept["results"] == [{"nodeid": CORE[0], "outcome": "passed", "requires": [], "guarantees": []}]
    assert compare(run, kept, "memory-baseline.json").differences == []


def test_fail_on_regression_names_what_it_knows():
    assert check_fail_on(" figures, new-failures ") == ("figures", "new-failures")
    for given in ("", "figure", "figures,,x"):
        with pytest.raises(UsageError, match="use one or more of new-failures"):
            check_fail_on(given)
