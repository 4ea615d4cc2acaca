"""The latency and footprint groups end to end: what they report, what a budget turns into a
failure, and what they skip on fakeredis. No assertion here depends on how fast this machine is:
the budgets are absurdly small or absurdly large, and the slow store sleeps for its time."""

import xml.etree.ElementTree as ET

import pytest

from tests.conftest import ROOT
from tests.stores.latency import SLEEP_S

COUNT_STORE = str(ROOT / "examples/stores/count_window.py") + ":CountWindowStore"
LATENCY = "test_append_and_load_latency_against_the_redis_floor"
FOOTPRINT = "test_storage_stays_within_the_window"
PER_MESSAGE = "test_storage_grows_with_the_messages_kept"
PERF_GROUPS = ("--groups", "latency,footprint")


def junit_properties(report_dir, scenario):
    """The properties of each junit.xml test case of ``scenario``, by its name."""
    root = ET.parse(report_dir / "junit.xml").getroot()
    return {case.get("name"): {p.get("name"): p.get("value") for p in case.iter("property")}
            for case in root.iter("testcase") if case.get("name").startswith(scenario)}


def test_without_a_budget_latency_and_footprint_are_figures_of_every_report(run_suite):
    result = run_suite("--store", COUNT_STORE, *PERF_GROUPS, "--window-sizes", "3,7")
    assert result.exit_code == 0, result.output
    summary = result.summary
    latency, footprint = summary["latency"], summary["footprint"]
    assert [(f["point"], f["window"], f["history_messages"]) for f in latency] == [("N=3", "N=3", 3), ("N=7", "N=7", 7)]
    for figure in latency:
        assert 20 <= figure["samples"] <= 200, figure
        for operation in ("append", "load"):
            found = figure[operation]
            assert found["budget_ms"] is None
            assert 0 < found["p50_ms"] <= found["p95_ms"] <= found["p99_ms"], found
            assert 0 < found["floor_p50_ms"] <= found["floor_p95_ms"] <= found["floor_p99_ms"], found
            # the ratio is of the unrounded times: within rounding of the ratio of the rounded ones
            assert found["ratio_p95"] == pytest.approx(found["p95_ms"] / found["floor_p95_ms"], abs=0.01)
    per_message, *windows = footprint
    assert [(f["window"], f["messages"], f["appends_after"], f["bounded"]) for f in [per_message]] == [
        ("unwindowed", 10, 20, True)]
    assert [(f["window"], f["messages"], f["appends_after"], f["bounded"]) for f in windows] == [
        ("N=3", 3, 30, True), ("N=7", 7, 70, True)]
    for figure in footprint:   # one list of 256-byte messages: more than its content, less than twice it
        assert figure["keys"] == 1 and figure["content_bytes_per_message"] == 255.0, figure
        assert 255 < figure["bytes_per_message"] < 2 * 255, figure
    properties = junit_properties(result.report_dir, LATENCY)[f"{LATENCY}[N=3]"]
    assert properties["append_p95_ms"] == str(latency[0]["append"]["p95_ms"])
    assert properties["load_p95_floor_ratio"] == str(latency[0]["load"]["ratio_p95"])
    assert junit_properties(result.report_dir, FOOTPRINT)[f"{FOOTPRINT}[N=7]"]["footprint_growth"] == str(
        windows[1]["growth"])
    markdown = (result.report_dir / "summary.md").read_text(encoding="utf-8")
    assert f"| N=3 | {latency[0]['samples']} | " in markdown.split("### Latency")[1]
    assert "| N=7 | 7 | " in markdown.split("### Storage footprint")[1]


def test_an_absurdly_small_budget_fails_a_correct_store_and_says_by_how_much(run_suite):
    result = run_suite("--store", COUNT_STORE, "--groups", "latency",
                       "--latency-budget-ms", "append=0.0001,load=0.0001")
    assert result.exit_code == 1, result.output
    failures = result.summary["failures"]
    assert [f["point"] for f in failures] == ["N=5", "N=20"], result.output
    for failure in failures:
        assert failure["message"].startswith("append p95 "), failure
        assert "over the budget of 0.0001 ms (--latency-budget-ms append=0.0001)" in failure["message"]
        assert "; load p95 " in failure["message"]
        assert "the raw Redis floor (LRANGE of the same size)" in failure["message"]
        assert failure["message"].endswith("not Redis'"), failure
    assert [f["append"]["budget_ms"] for f in result.summary["latency"]] == [0.0001, 0.0001]


def test_an_absurdly_large_budget_passes_a_correct_store(run_suite):
    result = run_suite("--store", COUNT_STORE, "--groups", "latency", "--latency-budget-ms", "append=60000")
    assert result.exit_code == 0, result.output
    assert [(f["append"]["budget_ms"], f["load"]["budget_ms"]) for f in result.summary["latency"]] == [
        (60000.0, None), (60000.0, None)]
    assert "| append 60000 ms |" in (result.report_dir / "summary.md").read_text(encoding="utf-8")


def test_a_slow_store_is_a_finding_without_a_budget_and_a_failure_with_one(run_suite):
    """It sleeps 20 ms per call: at least 20 ms at every percentile, whatever the machine."""
    store = "tests.stores.latency:SleepsPerCall"
    result = run_suite("--store", store, "--groups", "latency", "--window-sizes", "3")
    assert result.exit_code == 0, result.output
    figure = result.summary["latency"][0]
    assert figure["samples"] == 20, "a slow store gets the fewest samples"
    assert figure["append"]["p50_ms"] >= SLEEP_S * 1000 and figure["load"]["p50_ms"] >= SLEEP_S * 1000, figure
    budget = run_suite("--store", store, "--groups", "latency", "--window-sizes", "3", "--latency-budget-ms", "load=10")
    assert budget.exit_code == 1, budget.output
    [failure] = budget.summary["failures"]
    assert failure["message"].startswith("load p95 ") and "over the budget of 10 ms" in failure["message"], failure


def test_on_fakeredis_both_groups_are_skipped_saying_why(run_suite):
    result = run_suite("--store", COUNT_STORE, *PERF_GROUPS, "--redis", "fakeredis")
    assert result.exit_code == 2, result.output   # every scenario skipped: nothing was checked
    reasons = {r["scenario"]: r["message"] for r in result.summary["results"]}
    assert reasons[LATENCY].startswith("needs a real Redis server (round trips to a Redis server over a socket")
    for scenario in (FOOTPRINT, PER_MESSAGE):
        assert reasons[scenario].startswith("needs a real Redis server (MEMORY USAGE, which fakeredis does not have)")
    assert result.summary["latency"] == result.summary["footprint"] == []


def test_a_store_that_trims_only_when_loading_is_warned_with_the_growth_it_showed(run_suite):
    """Storage is a cost: the store passes, each window's scenario warns with the growth measured, and
    the level keeps count-window but lacks bounded-storage."""
    result = run_suite("--store", "tests.stores.footprint:TrimsOnlyWhenLoading", "--groups", "footprint")
    assert result.exit_code == 0, result.output
    warnings = result.summary["warnings"]
    assert [w["nodeid"].rpartition("[")[2] for w in warnings] == ["N=5]", "N=20]"], warnings
    for warning, window in zip(warnings, (5, 20)):
        assert warning["guarantee"] == "bounded-storage"
        assert warning["text"].startswith(f"after {10 * window} appends the session's keys hold "), warning
        assert f"after {window} appends " in warning["text"]
        assert f"× for a window of {window} (at most 4× is allowed); trims only when loading?" in warning["text"]
    windows = [f for f in result.summary["footprint"] if f["window"] != "unwindowed"]
    assert [f["bounded"] for f in windows] == [False, False]
    assert all(f["growth"] > 4 for f in windows)
    assert result.summary["conformance_level"] == "core+count-window", \
        "a window applied when reading keeps count-window and lacks bounded-storage"


def test_a_token_window_is_held_to_its_budget_and_a_store_without_a_window_to_its_messages(run_suite):
    token = run_suite("--store", "examples/stores/token_window.py:TokenWindowStore", "--groups", "footprint",
                      "--token-counter", "examples/stores/token_window.py:message_tokens",
                      "--model-profiles", "llama-3-8b,small-4k")
    assert token.exit_code == 0, token.output
    [per_message, figure] = token.summary["footprint"]
    assert per_message["window"] == "unwindowed" and per_message["bounded"]
    assert figure["window"] == "small-4k" and figure["bounded"] and figure["appends_after"] > 9 * figure["messages"]
    plain = run_suite("--store", "tests.stores.shapes:TypedMessages", "--groups", "footprint")
    assert plain.exit_code == 0, plain.output
    [figure] = plain.summary["footprint"]
    assert (figure["window"], figure["messages"], figure["appends_after"], figure["bound"]) == ("unwindowed", 10, 20, 3)
    assert figure["bounded"] and figure["growth"] < 3, figure
