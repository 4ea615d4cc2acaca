"""What a comparison with a baseline counts as a regression (memory_regression/reports/baseline.py); the
comparisons of real runs are tests/end_to_end/test_baseline.py's."""

import pytest

from memory_regression.reports.baseline import (FAIL_ON, NOISE, OTHER_SERVER, SERVER_NOTE, baseline_json, check_fail_on,
    compare, figure_change_cells, headline, sections)
from memory_regression.errors import UsageError


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


def test_a_failing_core_takes_the_level_down_once_and_only_failing_scenarios_count_as_lost():
    """One bug (a count window off by one) fails a core scenario and the count-window ones: core and
    count-window are lost, each by its own failing scenarios; ttl, clear and bounded-storage, whose
    scenarios all passed, leave the level only with core: said once, as its fall, and not counted."""
    def run(core, window, guarantees_ok=True):
        found = summary("core+count-window+ttl+clear+bounded-storage" if core == window == "passed" else "none",
                        [("test_core.py::test_round_trip", core, []),
                         ("test_count_window.py::test_keeps_last_n[N=5]", window, ["count-window"]),
                         ("test_ttl.py::test_refresh", "passed", ["ttl"]),
                         ("test_clear.py::test_clear", "passed", ["clear"])])
        found["results"].append({"nodeid": "test_footprint.py::test_bounded", "outcome": "passed", "requires": [],
                                 "guarantees": ["bounded-storage"]})
        return found
    comparison = compare(run("failed", "failed"), run("passed", "passed"), "b.json", ("lost-guarantees",))
    assert comparison.newly_failing == ["test_core.py::test_round_trip", "test_count_window.py::test_keeps_last_n[N=5]"]
    assert comparison.lost == ["core", "count-window"] and comparison.fallen == ["ttl", "clear", "bounded-storage"]
    assert comparison.regressions == 4 and comparison.fails_step == ["lost-guarantees (2)"]
    assert comparison.level_fall == ("the level falls from core+count-window+ttl+clear+bounded-storage to none: "
                                     "core failed, and with it ttl, clear, bounded-storage, whose own scenarios did "
                                     "not fail")
    assert comparison.level_fall in headline(comparison.to_json())
    assert [words for words, _items in sections(comparison.to_json())] == [
        "newly failing", "lost from the conformance level, their scenarios failing"]


def test_a_guarantee_a_scenario_warned_of_is_lost():
    now, before = summary("core", [CORE]), summary("core+bounded-storage", [CORE])
    for run in (now, before):
        run["results"][0]["guarantees"] = ["bounded-storage"]
    now["warnings"] = [{"nodeid": CORE[0], "guarantee": "bounded-storage", "text": "grows"}]
    comparison = compare(now, before, "b.json")
    assert (comparison.lost, comparison.fallen, comparison.level_fall) == (["bounded-storage"], [], "")


def test_fail_on_regression_true_is_every_kind_and_false_none():
    assert check_fail_on("true") == check_fail_on(" True ") == tuple(FAIL_ON)
    assert check_fail_on("false") == check_fail_on("FALSE") == ()
    failing = (*TTL[:1], "failed", ["ttl"])
    every = compare(summary("core", [CORE, failing]), summary("core+ttl", [CORE, TTL]), "b.json", check_fail_on("true"))
    assert every.fails_step == ["new-failures (1)", "failures (1)", "lost-guarantees (1)"]
    none = compare(summary("core", [CORE, failing]), summary("core+ttl", [CORE, TTL]), "b.json", check_fail_on("false"))
    assert none.fails_step == [] and none.regressions == 2
    assert "nothing that fails the step (--fail-on-regression false)" in headline(none.to_json())


def test_a_baseline_of_another_server_is_compared_naming_it_and_storage_figures_across_servers_do_not_count():
    """Redis 7.0 on a laptop, Redis 8.0 in the image: the verdicts and the latency (multiples of each
    run's own floor) are compared; bytes per message, which follows the server's encodings, is shown
    and not counted."""
    limit = NOISE["p50 × floor"]
    before, now = figured(1.7, 320), figured(1.7 * limit * 1.01, 640)
    now["backend"] = "redis 8.0.2 (private server, port 2)"
    comparison = compare(now, before, "b.json", ("figures",))
    assert comparison.compared and comparison.differences == [
        "the Redis server: redis 7.0.15 in the baseline, redis 8.0.2 now" + SERVER_NOTE]
    assert comparison.figures_worse == [
        f"test_latency.py::t[N=5]: append p50 × floor 1.7 → {1.7 * limit * 1.01:g} ({limit * 1.01:.2f}×; identical "
        f"runs move it by up to {limit:g}×)"]
    assert comparison.figures_not_counted == ["test_footprint.py::f: bytes per message 320 → 640 (2.00×; identical "
                                              f"runs move it by up to {NOISE['bytes per message']:g}×)"]
    assert comparison.fails_step == ["figures (1)"] and comparison.regressions == 1
    assert figure_change_cells(comparison.figures[-1])[-1] == OTHER_SERVER
