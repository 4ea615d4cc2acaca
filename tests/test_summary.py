"""The run's verdict and the reports made from it, on real ``RunSummary`` and ``ScenarioResult``
objects: statuses and exit codes, the capabilities a store gets and the conformance level, every
field of summary.json, summary.md and the terminal summary, and the files write_all leaves. (A real
run's keys without a TTL, and its level when a selection leaves capabilities untried, are checked
end to end in test_github.py, through the action.)

Every test here states exact values, so that a changed field name, count, order or mapping fails
one of them; none starts a run, so the whole file takes about a second.
"""

import json
import xml.etree.ElementTree as ET

import pytest

from memory_regression.capabilities import (Capability, UnknownCapability, conformance_level, detect, lookup,
                                            skip_reason)
from memory_regression.binding import bind_store
from memory_regression.loader import load_object
from memory_regression.groups import describe_groups, scenario_group
from memory_regression.redaction import Redactor
from memory_regression.figures import NO_POINT, size_text
from memory_regression.renderings import render_markdown, render_terminal, SUMMARY_MD_LIMIT
from memory_regression.reports import place_junit_cases, ReportPaths, suite_name, write_all
from memory_regression.results import ExitCode, Outcome, RunSummary, ScenarioResult, Status
from tests.conftest import ROOT

CORE, COUNT, TOKEN, TTL, NAMESPACE, CLEAR, ASYNC = (
    Capability.CORE, Capability.COUNT_WINDOW, Capability.TOKEN_WINDOW, Capability.TTL, Capability.NAMESPACE,
    Capability.CLEAR, Capability.ASYNC)
EVERY_CAPABILITY = frozenset(Capability)

ROUND_TRIP = ScenarioResult("test_core.py::test_round_trip", "test_round_trip", "core", "", [],
                            Outcome.PASSED, duration_s=0.5)


SAMPLE_GROUPS = ("core", "count-window", "hygiene", "token-window")


def sample_summary() -> RunSummary:
    """A failed run with one scenario of each outcome, windows, a profile and a key without TTL."""
    return RunSummary(
        Status.FAILED, store="app/m.py:Store", store_file="/w/app/m.py", store_line=7,
        capabilities=["clear", "core", "count-window", "namespace", "ttl"], conformance_level="core+ttl",
        backend="redis 7.2.4 (private server)", window_sizes=[5, 20], window_policy="start-on-user",
        groups=list(SAMPLE_GROUPS), profiles=[{"name": "small-4k", "max_tokens": 3072, "counter": "words"}],
        results=[
            ScenarioResult("test_core.py::test_round_trip", "test_round_trip", "core", "", [],
                           Outcome.PASSED, duration_s=0.5),
            ScenarioResult("test_count_window.py::test_last_n[N=5]", "test_last_n", "count-window", "N=5",
                           ["count-window"], Outcome.FAILED, "kept 6 messages, expected 5",
                           "expected: m2..m6\nactual: m1..m6", 0.25),
            ScenarioResult("test_count_window.py::test_last_n[N=20]", "test_last_n", "count-window", "N=20",
                           ["count-window"], Outcome.PASSED, duration_s=0.75,
                           findings=["longest session: 43 messages"]),
            ScenarioResult("test_token_window.py::test_suffix[small-4k]", "test_suffix", "token-window",
                           "small-4k", ["token-window"], Outcome.SKIPPED, "store lacks token-window"),
            ScenarioResult("test_hygiene.py::test_clear_no_keys", "test_clear_no_keys", "hygiene", "",
                           ["clear", "namespace"], Outcome.ERROR, "teardown failed: ConnectionError",
                           "Traceback: boom"),
        ],
        keys_without_ttl=["mrs:1:messages:a:last-active (test_core.py::test_round_trip)"], duration_s=3.5,
        report_files={"junit": "/w/r/junit.xml"})


# -- statuses and exit codes ---------------------------------------------------------------------

STATUSES = [  # every status, in declaration order: its word in the reports and its exit code
    (Status.NOT_STARTED, "not started", 2), (Status.PASSED, "passed", 0), (Status.FAILED, "failed", 1),
    (Status.USAGE_ERROR, "usage error", 2), (Status.SUITE_ERROR, "suite error", 2),
    (Status.NOT_RUN, "not run", 2), (Status.REDIS_ERROR, "redis error", 3),
    (Status.INTERRUPTED, "interrupted", 130), (Status.DID_NOT_FINISH, "did not finish", 1),
    (Status.REPORT_ERROR, "report error", 2),
]


def test_every_status_is_listed_here():
    assert list(Status) == [status for status, _word, _code in STATUSES]


def test_exit_codes_are_the_documented_numbers():
    assert {code.name: int(code) for code in ExitCode} == {
        "PASSED": 0, "FAILED": 1, "USAGE": 2, "REDIS": 3, "INTERRUPTED": 130}


@pytest.mark.parametrize("status, word, code", STATUSES, ids=[word for _s, word, _c in STATUSES])
def test_status_word_and_exit_code(status, word, code):
    assert status.value == word and str(status) == word and f"{status}" == word
    assert status.exit_code is ExitCode(code)
    summary = RunSummary(status)
    assert summary.exit_code is ExitCode(code)
    assert summary.to_json()["status"] == word
    exit_code = summary.to_json()["exit_code"]
    assert exit_code == code and type(exit_code) is int      # a plain number in JSON, not an enum


def test_a_summary_starts_as_not_started_and_judges_nothing():
    summary = RunSummary()
    assert summary.status is Status.NOT_STARTED and summary.exit_code is ExitCode.USAGE
    assert summary.totals() == {"total": 0, "passed": 0, "failed": 0, "skipped": 0, "errors": 0}
    assert summary.failures() == [] and summary.matrix() == ([], [])
    assert summary.scenarios_by_capability() == {}
    assert summary.conformance_level == "none"


def test_outcomes_and_which_count_as_failures():
    assert [(str(o), o.value) for o in Outcome] == [
        ("passed", "passed"), ("failed", "failed"), ("error", "error"), ("skipped", "skipped")]
    failed = {o: ScenarioResult("t", "t", "core", "", [], o).failed for o in Outcome}
    assert failed == {Outcome.PASSED: False, Outcome.FAILED: True, Outcome.ERROR: True, Outcome.SKIPPED: False}


def test_a_result_not_yet_reported_is_an_error():
    """A scenario whose worker died before reporting is counted as an error, never as a pass."""
    result = ScenarioResult("t", "t", "core", "", [])
    assert (result.outcome, result.message, result.details, result.duration_s) == (Outcome.ERROR, "", "", 0.0)
    assert result.failed


@pytest.mark.parametrize("path, group", [
    ("suite/test_count_window.py", "count-window"), ("test_ttl.py", "ttl"),
    ("/a/test_dir/test_core.py", "core"), ("suite/test_test_x.py", "test-x"),
])
def test_scenario_group_from_its_file(path, group):
    assert scenario_group(path) == group


# -- totals, failures, matrix, capabilities -------------------------------------------------------

def test_totals_count_each_outcome_once():
    summary = sample_summary()
    summary.results.append(ScenarioResult("t6", "t6", "core", "", [], Outcome.ERROR))
    assert summary.totals() == {"total": 6, "passed": 2, "failed": 1, "skipped": 1, "errors": 2}
    assert list(summary.totals()) == ["total", "passed", "failed", "skipped", "errors"]


def test_failures_are_the_failed_and_errored_in_run_order():
    summary = sample_summary()
    assert [r.nodeid for r in summary.failures()] == [
        "test_count_window.py::test_last_n[N=5]", "test_hygiene.py::test_clear_no_keys"]


def test_matrix_columns_follow_the_configuration_then_the_unconfigured_sorted():
    summary = RunSummary(window_sizes=[20, 5, 50], profiles=[{"name": "small-4k"}, {"name": "gpt-4o"}], results=[
        ScenarioResult("a[zeta]", "a", "g1", "zeta", [], Outcome.PASSED),
        ScenarioResult("b[N=5]", "b", "g2", "N=5", [], Outcome.FAILED),
        ScenarioResult("b[N=20]", "b", "g2", "N=20", [], Outcome.PASSED),
        ScenarioResult("c", "c", "g1", "", [], Outcome.SKIPPED),
        ScenarioResult("a[gpt-4o]", "a", "g1", "gpt-4o", [], Outcome.ERROR),
        ScenarioResult("a[alpha]", "a", "g1", "alpha", [], Outcome.PASSED),
    ])
    columns, rows = summary.matrix()
    # N=50 and small-4k ran nothing: no column; zeta and alpha were never configured: at the end, sorted
    assert columns == [NO_POINT, "N=20", "N=5", "gpt-4o", "alpha", "zeta"]
    assert rows == [
        ("g1", "a", {"zeta": Outcome.PASSED, "gpt-4o": Outcome.ERROR, "alpha": Outcome.PASSED}),
        ("g2", "b", {"N=5": Outcome.FAILED, "N=20": Outcome.PASSED}),
        ("g1", "c", {NO_POINT: Outcome.SKIPPED}),
    ]
    assert NO_POINT == "—"


def test_scenarios_by_capability_name_each_scenario_once_in_run_order():
    summary = sample_summary()
    summary.results.append(ScenarioResult("test_core.py::test_round_trip[again]", "test_round_trip", "core", "",
                                          [], Outcome.PASSED))
    assert summary.scenarios_by_capability() == {
        "core": ["test_round_trip"], "count-window": ["test_last_n"], "token-window": ["test_suffix"],
        "clear": ["test_clear_no_keys"], "namespace": ["test_clear_no_keys"]}


# -- the conformance level --------------------------------------------------------------------------

def judged(*results: ScenarioResult) -> list[tuple[frozenset[Capability], bool]]:
    """What the runner hands conformance_level: per scenario that ran (not skipped), what it required
    and whether it passed."""
    return [(frozenset(Capability(c) for c in r.requires), r.outcome is Outcome.PASSED)
            for r in results if r.outcome is not Outcome.SKIPPED]


def ran(outcome: Outcome, *requires: str) -> ScenarioResult:
    return ScenarioResult(f"t[{'+'.join(requires)}]", "t", "g", "", list(requires), outcome)


PASSED, FAILED, ERROR, SKIPPED = Outcome.PASSED, Outcome.FAILED, Outcome.ERROR, Outcome.SKIPPED


def test_level_names_every_capability_whose_scenarios_all_passed_in_registry_order():
    results = [ran(PASSED), *(ran(PASSED, c) for c in ("clear", "namespace", "ttl", "token-window", "count-window"))]
    assert conformance_level(EVERY_CAPABILITY - {ASYNC}, judged(*results)) == \
        "core+count-window+token-window+ttl+namespace+clear"


def test_a_capability_none_of_whose_scenarios_ran_is_not_claimed():
    """Deselected with -k, or skipped: the store has the capability but nothing showed it works."""
    assert conformance_level(EVERY_CAPABILITY - {ASYNC}, judged(ran(PASSED), ran(PASSED, "ttl"))) == "core+ttl"
    assert conformance_level(EVERY_CAPABILITY - {ASYNC}, judged(ran(PASSED), ran(SKIPPED, "ttl"))) == "core"
    assert conformance_level({CORE, TTL}, []) == "none"


def test_core_is_not_claimed_when_no_core_scenario_ran():
    assert conformance_level({CORE, TTL}, judged(ran(PASSED, "ttl"))) == "ttl"


@pytest.mark.parametrize("outcome", [FAILED, ERROR])
def test_a_failed_core_scenario_makes_the_level_none(outcome):
    results = [ran(PASSED), ran(outcome), ran(PASSED, "ttl"), ran(PASSED, "clear")]
    assert conformance_level({CORE, TTL, CLEAR, ASYNC}, judged(*results)) == "none"


@pytest.mark.parametrize("outcome", [FAILED, ERROR])
def test_one_failed_scenario_loses_its_capability_only(outcome):
    results = [ran(PASSED), ran(PASSED, "ttl"), ran(outcome, "ttl"), ran(PASSED, "clear")]
    assert conformance_level({CORE, TTL, CLEAR}, judged(*results)) == "core+clear"


def test_a_scenario_needing_two_capabilities_counts_for_both_and_not_for_core():
    assert conformance_level({CORE, CLEAR, NAMESPACE}, judged(ran(PASSED), ran(FAILED, "clear", "namespace"))) \
        == "core"
    assert conformance_level({CORE, CLEAR, NAMESPACE}, judged(ran(PASSED), ran(PASSED, "clear", "namespace"))) \
        == "core+namespace+clear"
    # a failed scenario that needs a capability says nothing about core
    assert conformance_level({CORE, TTL}, judged(ran(PASSED), ran(FAILED, "ttl"))) == "core"


def test_a_capability_the_store_lacks_is_not_claimed_even_if_its_scenarios_passed():
    assert conformance_level({CORE}, judged(ran(PASSED), ran(PASSED, "ttl"))) == "core"


def test_async_is_claimed_with_the_level_it_carries_and_never_alone():
    results = judged(ran(PASSED), ran(PASSED, "ttl"))
    assert conformance_level({CORE, TTL, ASYNC}, results) == "core+ttl+async"
    assert conformance_level({CORE, TTL}, results) == "core+ttl"
    assert conformance_level({CORE, ASYNC}, []) == "none"
    assert conformance_level({CORE, ASYNC}, judged(ran(FAILED))) == "none"
    assert conformance_level([ASYNC, TTL, CORE], results) == "core+ttl+async"   # in registry order, whatever the input



# -- capabilities: detection, skip reasons, marker names ------------------------------------------

def detected(spec: str) -> list[str]:
    factory, source = load_object(spec, ROOT)
    binding = bind_store(spec, factory, source, {}, lambda _binding: pytest.fail("a class needs no probe"))
    return sorted(c.value for c in detect(binding))


def test_capabilities_follow_from_the_factory_parameters_and_methods():
    assert detected("tests.stores.correct:ListStore") == ["clear", "core", "count-window", "namespace", "ttl"]
    assert detected("tests.stores.correct:TokenStore") == ["clear", "core", "namespace", "token-window", "ttl"]
    assert detected("examples/stores/async_store.py:AsyncChatMemory") == [
        "async", "clear", "core", "count-window", "namespace", "ttl"]
    assert detected("tests.stores.shapes:SavesDicts") == ["clear", "core", "namespace", "tool-calls", "ttl"]
    assert detected("examples/stores/compacting.py:CompactingStore") == [
        "clear", "compaction", "core", "count-window", "namespace", "ttl"]
    assert detected("examples/stores/two_backends.py:TwoBackendStore") == [
        "clear", "consistency", "core", "count-window", "namespace", "ttl"]


def test_a_skip_reason_says_what_to_add_to_claim_the_capability():
    assert skip_reason([c for c in Capability if c is not CORE]) == "; ".join([
        "store lacks count-window: its factory takes no max_messages (or max_history, window, window_size)",
        "store lacks token-window: its factory takes no max_tokens (or token_limit, max_token_limit)",
        "store lacks ttl: its factory takes no ttl (or ttl_seconds, expire)",
        "store lacks namespace: its factory takes no namespace (or prefix, key_prefix)",
        "store lacks clear: it has no clear, delete, clear_session, delete_messages or reset method",
        "store lacks tool-calls: its append takes role and content, not whole messages (or its message type has "
        "no tool_calls and tool_call_id)",
        "store lacks compaction: it has no compact method, or its factory takes no summarize (or summarizer)",
        "store lacks consistency: it has no consistent_state method (session_id) -> bool saying whether every "
        "backend it writes agrees",
        "store lacks async: its methods are not coroutines"])


def test_a_marker_names_a_capability_by_its_word_or_an_alias():
    assert [lookup(name) for name in ("core", "count-window", "count_window", "token_window", "ttl", "clear")] == [
        CORE, COUNT, COUNT, TOKEN, TTL, CLEAR]
    with pytest.raises(UnknownCapability) as raised:
        lookup("tll")
    assert str(raised.value) == ("@pytest.mark.requires('tll') names no capability; known: core, count-window, "
                                 "count_window, token-window, token_window, ttl, namespace, clear, tool-calls, "
                                 "tool_calls, compaction, consistency, async")

# -- summary.json -----------------------------------------------------------------------------------

SUMMARY_JSON_FIELDS = {  # as docs/reports.md lists them
    "status", "exit_code", "message", "store", "store_file", "store_line", "capabilities", "shape", "unfilled",
    "observations", "conformance_level", "backend", "backend_warning", "window_sizes", "window_policy", "groups",
    "profiles", "totals", "capability_scenarios", "matrix", "results", "failures", "warnings", "keys_without_ttl",
    "leftovers", "duration_s", "report_files", "latency", "footprint"}


def result_json(nodeid, scenario, group, point, requires, outcome, message="", details="", duration_s=0.0,
                findings=()):
    return {"nodeid": nodeid, "scenario": scenario, "group": group, "point": point, "requires": requires,
            "outcome": outcome, "message": message, "details": details, "duration_s": duration_s,
            "findings": list(findings), "guarantees": [], "warnings": []}


def test_summary_json_has_every_field_with_its_value():
    data = sample_summary().to_json()
    assert set(data) == SUMMARY_JSON_FIELDS
    results = [
        result_json("test_core.py::test_round_trip", "test_round_trip", "core", "", [], "passed", duration_s=0.5),
        result_json("test_count_window.py::test_last_n[N=5]", "test_last_n", "count-window", "N=5",
                    ["count-window"], "failed", "kept 6 messages, expected 5", "expected: m2..m6\nactual: m1..m6",
                    0.25),
        result_json("test_count_window.py::test_last_n[N=20]", "test_last_n", "count-window", "N=20",
                    ["count-window"], "passed", duration_s=0.75, findings=["longest session: 43 messages"]),
        result_json("test_token_window.py::test_suffix[small-4k]", "test_suffix", "token-window", "small-4k",
                    ["token-window"], "skipped", "store lacks token-window"),
        result_json("test_hygiene.py::test_clear_no_keys", "test_clear_no_keys", "hygiene", "",
                    ["clear", "namespace"], "error", "teardown failed: ConnectionError", "Traceback: boom"),
    ]
    assert data == {
        "status": "failed", "exit_code": 1, "message": None, "store": "app/m.py:Store",
        "store_file": "/w/app/m.py", "store_line": 7,
        "capabilities": ["clear", "core", "count-window", "namespace", "ttl"], "shape": None, "unfilled": "",
        "observations": [], "conformance_level": "core+ttl", "backend": "redis 7.2.4 (private server)",
        "backend_warning": None, "window_sizes": [5, 20],
        "window_policy": "start-on-user", "groups": list(SAMPLE_GROUPS),
        "profiles": [{"name": "small-4k", "max_tokens": 3072, "counter": "words"}],
        "totals": {"total": 5, "passed": 2, "failed": 1, "skipped": 1, "errors": 1},
        "capability_scenarios": {"core": ["test_round_trip"], "count-window": ["test_last_n"],
                                 "token-window": ["test_suffix"], "clear": ["test_clear_no_keys"],
                                 "namespace": ["test_clear_no_keys"]},
        "matrix": {"columns": ["—", "N=5", "N=20", "small-4k"], "rows": [
            {"group": "core", "scenario": "test_round_trip", "cells": {"—": "passed"}},
            {"group": "count-window", "scenario": "test_last_n", "cells": {"N=5": "failed", "N=20": "passed"}},
            {"group": "token-window", "scenario": "test_suffix", "cells": {"small-4k": "skipped"}},
            {"group": "hygiene", "scenario": "test_clear_no_keys", "cells": {"—": "error"}}]},
        "results": results,
        "failures": [results[1], results[4]], "warnings": [],
        "keys_without_ttl": ["mrs:1:messages:a:last-active (test_core.py::test_round_trip)"], "leftovers": [],
        "duration_s": 3.5, "report_files": {"junit": "/w/r/junit.xml"}, "latency": [], "footprint": [],
    }
    json.dumps(data)   # every value is plain JSON: no enum, no dataclass


def test_summary_json_of_a_run_that_judged_nothing():
    data = RunSummary(Status.USAGE_ERROR, "no store given").to_json()
    assert data == {
        "status": "usage error", "exit_code": 2, "message": "no store given", "store": None, "store_file": None,
        "store_line": None, "capabilities": [], "shape": None, "unfilled": "", "observations": [],
        "conformance_level": "none", "backend": None,
        "backend_warning": None, "window_sizes": [], "window_policy": None, "groups": [], "profiles": [], "results": [],
        "keys_without_ttl": [],
        "leftovers": [], "duration_s": 0.0, "report_files": {},
        "totals": {"total": 0, "passed": 0, "failed": 0, "skipped": 0, "errors": 0},
        "capability_scenarios": {}, "matrix": {"columns": [], "rows": []}, "failures": [], "warnings": [],
        "latency": [], "footprint": []}


def test_to_json_leaves_the_summary_as_it_was():
    summary = sample_summary()
    summary.to_json()
    assert summary == sample_summary()
    assert summary.results[1].outcome is Outcome.FAILED


# -- figures: latency and footprint ----------------------------------------------------------------

def operation(p50, p95, p99, floor, budget=None):
    """A latency figure's operation, its floor a constant ``floor`` ms."""
    return {"p50_ms": p50, "p95_ms": p95, "p99_ms": p99, "floor_p50_ms": floor, "floor_p95_ms": floor,
            "floor_p99_ms": floor, "ratio_p50": round(p50 / floor, 2), "ratio_p95": round(p95 / floor, 2),
            "ratio_p99": round(p99 / floor, 2), "budget_ms": budget}


LATENCY = {"kind": "latency", "window": "N=5", "samples": 200, "content_bytes": 200, "history_messages": 5,
           "append": operation(0.2, 0.4, 0.5, 0.1, 5.0), "load": operation(0.3, 0.6, 0.9, 0.2)}
FOOTPRINT = {"kind": "footprint", "window": "N=5", "messages": 5, "keys": 1, "bytes": 1700, "bytes_per_message": 340.0,
             "content_bytes_per_message": 255.0, "overhead_ratio": 1.33, "appends_after": 50, "bytes_after": 15600,
             "growth": 9.18, "bound": 4, "bounded": False}
UNWINDOWED = {"kind": "footprint", "window": "unwindowed", "messages": 20, "keys": 2, "bytes": 7000,
              "bytes_per_message": 350.0, "content_bytes_per_message": 255.0, "overhead_ratio": 1.37}


def measured_summary(engines=()) -> RunSummary:
    """A run whose latency and footprint scenarios recorded figures (on each of ``engines``)."""
    results = []
    for engine in engines or [""]:
        tail = f"-{engine}]" if engine else "]"
        results += [
            ScenarioResult(f"test_latency.py::test_latency[N=5{tail}", "test_latency", "latency", "N=5", [],
                           Outcome.FAILED, "append p95 over budget", engine=engine, measurements=[dict(LATENCY)]),
            ScenarioResult(f"test_footprint.py::test_bounded[N=5{tail}", "test_bounded", "footprint", "N=5", [],
                           Outcome.FAILED, "9.2×", engine=engine, measurements=[dict(FOOTPRINT)]),
            ScenarioResult(f"test_footprint.py::test_bounded[{engine}]" if engine
                           else "test_footprint.py::test_bounded", "test_bounded", "footprint", "", [],
                           Outcome.PASSED, engine=engine, measurements=[dict(UNWINDOWED)])]
    return RunSummary(Status.FAILED, results=results, window_sizes=[5],
                      engines=[{"name": e, "title": e, "description": e} for e in engines])


def without_kind(figure: dict) -> dict:
    return {key: value for key, value in figure.items() if key != "kind"}


def test_summary_json_carries_the_figures_at_the_top_and_not_in_the_results():
    data = measured_summary().to_json()
    assert data["latency"] == [{"nodeid": "test_latency.py::test_latency[N=5]", "scenario": "test_latency",
                                "point": "N=5", "outcome": "failed", **without_kind(LATENCY)}]
    assert data["footprint"] == [
        {"nodeid": "test_footprint.py::test_bounded[N=5]", "scenario": "test_bounded", "point": "N=5",
         "outcome": "failed", **without_kind(FOOTPRINT)},
        {"nodeid": "test_footprint.py::test_bounded", "scenario": "test_bounded", "point": "", "outcome": "passed",
         **without_kind(UNWINDOWED)}]
    assert all("measurements" not in result for result in data["results"])
    json.dumps(data)


def test_with_several_engines_each_figure_names_its_engine():
    data = measured_summary(("server", "valkey")).to_json()
    assert [(f["engine"], f["nodeid"]) for f in data["latency"]] == [
        ("server", "test_latency.py::test_latency[N=5-server]"),
        ("valkey", "test_latency.py::test_latency[N=5-valkey]")]
    assert [f["engine"] for f in data["footprint"]] == ["server", "server", "valkey", "valkey"]


def test_junit_properties_of_the_figures():
    latency, footprint, unwindowed = measured_summary().results
    assert latency.properties() == [("append_p95_ms", "0.4"), ("append_p95_floor_ratio", "4.0"),
                                    ("load_p95_ms", "0.6"), ("load_p95_floor_ratio", "3.0")]
    assert footprint.properties() == [("bytes_per_message", "340.0"), ("footprint_growth", "9.18")]
    assert unwindowed.properties() == [("bytes_per_message", "350.0")]
    assert ROUND_TRIP.properties() == []


def test_summary_md_has_a_latency_and_a_footprint_table():
    text = render_markdown(measured_summary())
    tables = text[text.index("### Latency"):text.index("### First failures")]
    assert tables.splitlines() == [
        "### Latency", "",
        "Milliseconds, p50 / p95 / p99, beside the raw Redis floor measured in the same run (RPUSH and LRANGE of "
        "the same sizes through redis-py on the same server); × floor: the store's p50 and p95 as multiples of the "
        "floor's.", "",
        "| where | samples | append | RPUSH floor | × floor | load | LRANGE floor | × floor | budget (p95) |",
        "|---|---|---|---|---|---|---|---|---|",
        "| N=5 | 200 | 0.200 / 0.400 / 0.500 | 0.100 / 0.100 / 0.100 | 2× / 4× | 0.300 / 0.600 / 0.900 | "
        "0.200 / 0.200 / 0.200 | 1.5× / 3× | append 5 ms |", "",
        "### Storage footprint", "",
        "MEMORY USAGE (SAMPLES 0) of the session's keys after its first messages (a full window; 10 under a roomy "
        "one), per message against the content's size, and after the rest (ten windows' worth; twice the "
        "messages).", "",
        "| where | messages | bytes | per message | content per message | overhead | growth |",
        "|---|---|---|---|---|---|---|",
        "| N=5 | 5 | 1.7 KB | 340 B | 255 B | 1.33× | 15.2 KB after 50 appends: 9.18× (at most 4×) |",
        "| unwindowed | 20 | 6.8 KB | 350 B | 255 B | 1.37× | no window, not judged |", ""]
    several = render_markdown(measured_summary(("server", "valkey")))
    assert "| N=5 on valkey | 200 | 0.200 / 0.400 / 0.500 |" in several


def test_terminal_summary_has_a_line_per_figure():
    lines = [line for line in render_terminal(measured_summary()).splitlines() if line.startswith(("  latency",
                                                                                                  "  footprint"))]
    assert lines == [
        "  latency N=5: append 0.200 / 0.400 / 0.500 ms (2× / 4× the floor at p50 / p95), load 0.300 / 0.600 / 0.900 "
        "ms (1.5× / 3×)",
        "  footprint N=5: 340 B per message (255 B of content, 1.33×); 15.2 KB after 50 appends: 9.18× (at most 4×)",
        "  footprint unwindowed: 350 B per message (255 B of content, 1.37×); no window, not judged"]


@pytest.mark.parametrize("size, text", [(812, "812 B"), (1700, "1.7 KB"), (4 * 1024 * 1024, "4.0 MB")])
def test_sizes_as_a_person_reads_them(size, text):
    assert size_text(size) == text


def test_report_html_draws_a_chart_per_figure_with_its_numbers():
    from memory_regression.html_report import html_summary
    page = "".join(html_summary(measured_summary()))
    latency = page[page.index("<svg class='memory-latency-chart'"):]
    latency = latency[:latency.index("</svg>")]
    for text in ("append p50", "0.200 ms (2.0× the floor)", "floor 0.100 ms", "load p99", "0.900 ms (4.5× the floor)",
                 "budget (p95): append 5 ms"):
        assert text in latency, text
    assert page.count("<svg class='memory-latency-chart'") == 1
    assert page.count("<svg class='memory-footprint-chart'") == 1   # the unwindowed figure has no growth to draw
    assert "15.2 KB" in page and "growth 9.18× (at most 4×)" in page
    assert "<script" not in page and "href=" not in page and "src=" not in page   # self-contained, no script


# -- write_all: the files ---------------------------------------------------------------------------

def test_write_all_writes_the_summary_files_and_names_them(tmp_path):
    """Beside pytest's report.html (and junit.xml, absent here), summary.json and summary.md, redacted;
    report_files names every report there is."""
    directory = tmp_path / "r"
    directory.mkdir()
    (directory / "report.html").write_text("<html></html>")
    summary = sample_summary()
    summary.message = "café: password hunter2 in redis://user:hunter2@db:6379/0"
    write_all(summary, ReportPaths(directory), Redactor(["hunter2"]))
    assert summary.report_files == {"html": str(directory / "report.html"),
                                    "summary_md": str(directory / "summary.md"),
                                    "summary_json": str(directory / "summary.json")}
    assert sorted(p.name for p in directory.iterdir()) == ["report.html", "summary.json", "summary.md"]
    text = (directory / "summary.json").read_text(encoding="utf-8")
    summary.message = "café: password *** in redis://***@db:6379/0"
    assert json.loads(text) == summary.to_json()
    assert '"message": "café: password' in text, "non-ASCII text is written as it is, not as \\u escapes"
    assert (directory / "summary.md").read_text(encoding="utf-8") == render_markdown(summary)


def test_write_all_of_a_run_that_judged_nothing_adds_junit(tmp_path):
    paths = ReportPaths(tmp_path / "new" / "r")     # a directory, and its parent, that do not exist yet
    summary = RunSummary(Status.REDIS_ERROR, "Redis could not be started")
    write_all(summary, paths, Redactor())
    assert summary.report_files == {"junit": str(paths.directory / "junit.xml"),
                                    "summary_md": str(paths.summary_md), "summary_json": str(paths.summary_json)}
    assert "Redis could not be started" in paths.junit.read_text(encoding="utf-8")
    assert json.loads(paths.summary_json.read_text(encoding="utf-8"))["report_files"] == summary.report_files


def test_the_junit_of_a_run_that_judged_nothing_is_one_errored_case_saying_why(tmp_path):
    paths = ReportPaths(tmp_path / "r")
    write_all(RunSummary(Status.USAGE_ERROR, "no store given\x00\ngive --store FILE:CLASS"), paths, Redactor())
    root = ET.parse(paths.junit).getroot()
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    assert suite.get("name").startswith("memory-regression")   # and the run's windows and profiles
    assert (suite.get("tests"), suite.get("errors")) == ("1", "1")
    [case] = suite.findall("testcase")
    assert (case.get("name"), case.get("classname")) == ("configuration", "memory_regression")
    [error] = case.findall("error")
    assert (error.get("message"), error.get("type")) == ("no store given\\x00", "usage error")
    assert error.text == "no store given\\x00\ngive --store FILE:CLASS"

# -- summary.md and the terminal ------------------------------------------------------------------

def test_summary_md_states_the_run_the_matrix_and_the_failures():
    text = render_markdown(sample_summary())
    assert text == "\n".join([
        "## Memory regression: failed",
        "",
        "- Store: `app/m.py:Store`",
        "- Capabilities: clear, core, count-window, namespace, ttl",
        "- Conformance level: **core+ttl**",
        "- Redis: redis 7.2.4 (private server)",
        "- Window sizes: 5, 20",
        "- Window policy: start-on-user",
        f"- Groups: {describe_groups(SAMPLE_GROUPS)}",
        "- Profile `small-4k`: budget 3072 tokens, counter words",
        "",
        "2 passed, 1 failed, 1 skipped, 1 errors of 5 scenarios; conformance level core+ttl",
        "",
        "| group | scenario | — | N=5 | N=20 | small-4k |",
        "|---|---|---|---|---|---|",
        "| core | `test_round_trip` | ✅ |  |  |  |",
        "| count-window | `test_last_n` |  | ❌ | ✅ |  |",
        "| token-window | `test_suffix` |  |  |  | ⏭️ |",
        "| hygiene | `test_clear_no_keys` | 💥 |  |  |  |",
        "",
        "Keys left without a TTL (1): `mrs:1:messages:a:last-active (test_core.py::test_round_trip)`",
        "",
        "### Findings",
        "",
        "- **test_count_window.py::test_last_n[N=20]**: longest session: 43 messages",
        "",
        "### First failures (2 of 2)",
        "",
        "**test_count_window.py::test_last_n[N=5]**: kept 6 messages, expected 5",
        "",
        "<details><summary>expected against actual</summary>",
        "",
        "```text",
        "expected: m2..m6\nactual: m1..m6",
        "```",
        "</details>",
        "",
        "**test_hygiene.py::test_clear_no_keys**: teardown failed: ConnectionError",
        "",
        "<details><summary>expected against actual</summary>",
        "",
        "```text",
        "Traceback: boom",
        "```",
        "</details>",
        "",
    ]) + "\n"


def test_summary_md_of_a_run_stopped_before_any_scenario():
    summary = RunSummary(Status.USAGE_ERROR, "no store given\ngive --store FILE:CLASS",
                         backend_warning="used fakeredis | not a real server")
    assert render_markdown(summary) == "\n".join([
        "## Memory regression: usage error", "",
        "**no store given**", "", "```text", "no store given\ngive --store FILE:CLASS", "```", "",
        "> ⚠️ used fakeredis \\| not a real server", "",
        "- Store: `(none)`", "- Capabilities: unknown", "- Conformance level: **none**",
        "- Redis: not started", "- Window sizes: —", "- Window policy: —"]) + "\n"


def test_summary_md_and_terminal_list_at_most_20_findings_in_run_order():
    summary = sample_summary()
    summary.results[0].findings = [f"first {i}" for i in range(15)]
    summary.results[1].findings = [f"second {i}" for i in range(10)]
    listed = [line for line in render_markdown(summary).splitlines() if line.startswith("- **")]
    assert listed[0] == "- **test_core.py::test_round_trip**: first 0"
    assert listed[15] == "- **test_count_window.py::test_last_n[N=5]**: second 0"
    assert len(listed) == 20
    assert "- ... 6 more in summary.json" in render_markdown(summary)
    assert len([line for line in render_terminal(summary).splitlines() if line.startswith("  finding ")]) == 20
    assert len(summary.findings()) == 26


def test_summary_md_lists_at_most_20_keys_and_10_failures_with_their_counts():
    summary = RunSummary(Status.FAILED, results=[
        ScenarioResult(f"t{i}", f"t{i}", "core", "", [], Outcome.FAILED, f"lost m{i}") for i in range(12)],
        keys_without_ttl=[f"k{i}" for i in range(21)])
    text = render_markdown(summary)
    assert f"Keys left without a TTL (21): {', '.join(f'`k{i}`' for i in range(20))} ...\n" in text
    assert "`k20`" not in text
    assert "### First failures (10 of 12)" in text
    assert [line for line in text.splitlines() if line.startswith("**t")] == [
        f"**t{i}**: lost m{i}" for i in range(10)]
    summary.keys_without_ttl = summary.keys_without_ttl[:20]
    assert f"Keys left without a TTL (20): {', '.join(f'`k{i}`' for i in range(20))}\n" in render_markdown(summary)


def test_summary_md_stays_under_its_limit():
    summary = RunSummary(Status.FAILED, results=[
        ScenarioResult(f"t{i}", "t", "core", "", [], Outcome.FAILED, "x" * 200_000) for i in range(10)])
    text = render_markdown(summary)
    assert SUMMARY_MD_LIMIT - 1024 < len(text.encode()) <= SUMMARY_MD_LIMIT + 200
    assert text.endswith("_(summary cut at 1 MiB; the HTML report and junit.xml hold everything)_\n")


def test_summary_md_escapes_what_the_store_controls():
    """Store names, keys, messages and details are the store's text: no raw control character, no
    HTML, no | that splits a table, no ``` that closes the details block early."""
    summary = RunSummary(Status.FAILED, store="app/m.py:`Evil`\x1b[31m", keys_without_ttl=["k`1`|\x07"], results=[
        ScenarioResult("t|1", "t", "core", "", [], Outcome.FAILED, '<b>lost</b> "a" | b\nsecond line \x00',
                       "```\nrm\x7f -rf\n```" + "y" * 5000)])
    lines = render_markdown(summary).splitlines()
    assert "- Store: `app/m.py:Evil\\x1b[31m`" in lines
    assert "Keys left without a TTL (1): `k1\\|\\x07`" in lines
    assert '**t\\|1**: &lt;b&gt;lost&lt;/b&gt; "a" \\| b second line \\x00' in lines
    start = lines.index("```text")    # the details: 15 characters, then y up to 4000 in all
    assert lines[start + 1:start + 5] == ["'''", "rm\\x7f -rf", "'''" + "y" * (4000 - 15), "```"]


def test_summary_md_is_cut_only_past_its_limit_and_never_inside_a_character():
    def markdown(message):
        return render_markdown(RunSummary(Status.FAILED, results=[
            ScenarioResult("t", "t", "core", "", [], Outcome.FAILED, message)]))

    limit = 1024 * 1024 - 4096
    room = limit - len(markdown("").encode())
    whole = markdown("x" * room)
    assert len(whole.encode()) == limit and "cut at 1 MiB" not in whole
    cut = markdown("x" * (room + 1) + "é")   # over the limit, the é split by the cut: it is left out
    assert cut == whole[:-2] + "x\n\n_(summary cut at 1 MiB; the HTML report and junit.xml hold everything)_\n"
    assert SUMMARY_MD_LIMIT == limit

def test_terminal_summary_shows_the_run_the_matrix_failures_and_files():
    summary = sample_summary()
    summary.message = "scenarios failed"
    summary.backend_warning = "used fakeredis"
    summary.report_files = {"junit": "/w/r/junit.xml", "summary_json": "/w/r/summary.json"}
    assert render_terminal(summary).splitlines() == [
        "memory regression: failed",
        "scenarios failed",
        "WARNING: used fakeredis",
        "store app/m.py:Store  [clear, core, count-window, namespace, ttl]",
        "redis redis 7.2.4 (private server)",
        "window sizes 5,20, policy start-on-user",
        f"groups {describe_groups(SAMPLE_GROUPS)}",
        "profile small-4k: 3072 tokens, words",
        "2 passed, 1 failed, 1 skipped, 1 errors of 5 scenarios; conformance level core+ttl",
        "                         —     N=5    N=20  small-4k",
        "  test_round_trip     pass                          ",
        "  test_last_n                 FAIL    pass          ",
        "  test_suffix                                   skip",
        "  test_clear_no_keys ERROR                          ",
        "  FAIL test_count_window.py::test_last_n[N=5]: kept 6 messages, expected 5",
        "  ERROR test_hygiene.py::test_clear_no_keys: teardown failed: ConnectionError",
        "  finding test_count_window.py::test_last_n[N=20]: longest session: 43 messages",
        "junit: /w/r/junit.xml",
        "summary_json: /w/r/summary.json",
    ]


def test_terminal_summary_of_a_run_stopped_before_any_scenario():
    assert render_terminal(RunSummary(Status.REDIS_ERROR, "no redis-server on PATH")) == \
        "memory regression: redis error\nno redis-server on PATH"


# -- junit.xml: the suite's name and the cases' place --------------------------------------------

def test_junit_suite_is_named_after_the_matrix_point_and_cases_point_at_the_store(tmp_path):
    summary = sample_summary()
    summary.store_file = str(tmp_path / "app/m.py")
    def placed(source_root):
        written = ('<testsuites><testsuite name="memory-regression"><testcase classname="c" name="a"/>'
                   '<testcase classname="c" name="b"/></testsuite></testsuites>')
        return ET.fromstring(place_junit_cases(summary, written, source_root)).find("testsuite")

    suite = placed(tmp_path)
    assert suite.get("name") == "memory-regression (window sizes 5,20; window policy start-on-user; profiles small-4k)"
    assert [(c.get("file"), c.get("line")) for c in suite.iter("testcase")] == [("app/m.py", "7")] * 2
    suite = placed(tmp_path / "elsewhere")    # the store outside the root: a reporter could not find it
    assert [(c.get("file"), c.get("line")) for c in suite.iter("testcase")] == [(None, None)] * 2
    assert suite_name(RunSummary(Status.USAGE_ERROR, "no store given")) == "memory-regression"


def test_a_run_stopped_before_its_settings_names_its_junit_suite_plainly(tmp_path):
    paths = ReportPaths(tmp_path / "r")
    write_all(RunSummary(Status.USAGE_ERROR, "no store given"), paths, Redactor(), tmp_path)
    assert [s.get("name") for s in ET.parse(paths.junit).getroot().iter("testsuite")] == ["memory-regression"]
