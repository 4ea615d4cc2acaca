"""Recording a scenario's reports into its result (memory_regression/runner/recording.py), in-process: the
call decides the outcome (an error where its verdict says it judged nothing), a setup failure is
an error, and a teardown failing after a passed call turns it into one (a failed call stays
failed); durations add up from the call on (a setup that passed is left out: the scenario ran
from its call); the verdict, findings, warnings, figures and keys without a TTL are taken from the
worker's phase report, as pytest-xdist carries it, and one that is not a phase report judged
nothing; and each report gets its junit properties."""

import json
from dataclasses import replace

import pytest

from memory_regression.channel.messages import ScenarioInfo
from memory_regression.reports.phase_report import ATTRIBUTE, GuaranteeWarning, PhaseReport, Verdict, attach
from memory_regression.runner.recording import Recorder
from memory_regression.reports.results import Outcome, RunSummary

NODEID = "test_count_window.py::test_count_window_keeps_last_n[N=5]"
INFO = ScenarioInfo("test_count_window_keeps_last_n", "count-window", "N=5", ["count-window"], [], "")


def report(when, outcome, duration=1.0, **phase):
    """pytest's report of a phase with the worker's phase report on it, as the runner receives it: through
    the JSON pytest-xdist sends."""
    made = pytest.TestReport(NODEID, ("suite/test_count_window.py", 1, "x"), {}, outcome,
                             None if outcome == "passed" else "longrepr", when, [], duration)
    attach(made, PhaseReport(**phase))
    return pytest.TestReport._from_json(json.loads(json.dumps(made._to_json())))


def recorded(*reports):
    summary = RunSummary(backend="redis 7")
    recorder = Recorder(summary, lambda nodeid: INFO)
    for one in reports:
        recorder.record(one)
    return recorder.results[NODEID], summary, reports


def test_a_passed_call_is_passed_with_its_durations_and_junit_properties():
    result, _summary, reports = recorded(report("setup", "passed", 0.25), report("call", "passed", 1.5),
                                         report("teardown", "passed", 0.25, findings=["kept 5 of 6"]))
    assert (result.outcome, result.duration_s, result.findings) == (Outcome.PASSED, 1.75, ["kept 5 of 6"])
    assert ("window", "5") in reports[-1].user_properties and ("backend", "redis 7") in reports[-1].user_properties
    assert ("capability", "count-window") in reports[-1].user_properties


def test_a_failed_call_takes_the_workers_verdict():
    verdict = Verdict("N=5, after 6 appends: kept 6 messages", "expected | actual")
    result, _summary, _reports = recorded(report("setup", "passed"), report("call", "failed", verdict=verdict),
                                          report("teardown", "passed"))
    assert (result.outcome, result.message, result.details) == (Outcome.FAILED, verdict.message, "expected | actual")


def test_a_setup_failure_is_an_error_and_a_teardown_failure_spoils_a_passed_call():
    failed_setup, _summary, _reports = recorded(report("setup", "failed", 0.5), report("teardown", "passed", 0.25))
    assert (failed_setup.outcome, failed_setup.duration_s) == (Outcome.ERROR, 0.75)
    spoiled, _summary, _reports = recorded(report("setup", "passed"), report("call", "passed"),
                                           report("teardown", "failed"))
    assert spoiled.outcome is Outcome.ERROR


def test_a_call_that_judged_nothing_is_an_error_and_a_teardown_failure_leaves_a_failed_call_failed():
    suites_own = Verdict("the suite's own code raised KeyError: 'x'", not_judged=True)
    errored, _summary, _reports = recorded(report("call", "failed", verdict=suites_own), report("teardown", "passed"))
    assert (errored.outcome, errored.message) == (Outcome.ERROR, suites_own.message)
    recorder = Recorder(RunSummary(), lambda nodeid: INFO)
    assert recorder.pytest_report_teststatus(report("call", "failed", verdict=suites_own)) == ("error", "E", "ERROR")
    assert recorder.pytest_report_teststatus(report("call", "failed", verdict=Verdict("m"))) is None
    found = Verdict("N=5, after 6 appends: kept 6 messages")
    failed, _summary, _reports = recorded(report("call", "failed", verdict=found),
                                          report("teardown", "failed", verdict=suites_own))
    assert (failed.outcome, failed.message) == (Outcome.FAILED, found.message)


def test_figures_warnings_and_keys_without_ttl_are_kept():
    figure = {"kind": "footprint", "window": "N=5", "bytes": 1700, "bytes_per_message": 340.0, "growth": 9.2}
    warning = GuaranteeWarning("bounded-storage", "9.2x")
    result, summary, reports = recorded(report("call", "passed"), report(
        "teardown", "passed", measurements=[figure], warnings=[warning], keys_without_ttl=["chat:s1"]))
    assert result.measurements == [figure] and result.warnings == [{"guarantee": "bounded-storage", "text": "9.2x"}]
    assert summary.keys_without_ttl == [f"chat:s1 ({NODEID})"]
    assert ("footprint_growth", "9.2") in reports[-1].user_properties
    assert ("warning", "bounded-storage: 9.2x") in reports[-1].user_properties


def test_a_guarantee_the_scenario_could_not_judge_is_not_counted_as_checked():
    """Findings.not_judged: the scenario checks steady-appends by its marker, but its budget held too
    few appends to judge it, so its result no longer lists it (nor would the conformance level)."""
    info = replace(INFO, guarantees=["steady-appends", "bounded-storage"])
    recorder = Recorder(RunSummary(backend="redis 7"), lambda nodeid: info)
    for one in (report("call", "passed"), report("teardown", "passed", unjudged=["steady-appends"])):
        recorder.record(one)
    assert recorder.results[NODEID].guarantees == ["bounded-storage"]


def test_a_phase_report_that_is_not_one_the_suite_makes_judged_nothing():
    """What arrives under the phase report's attribute is checked field by field: a field of the wrong
    type (a warning without its text) is no finding, and no crash of the runner, but a scenario that judged
    nothing, saying why."""
    bad = report("call", "failed")
    setattr(bad, ATTRIBUTE, {**getattr(bad, ATTRIBUTE), "warnings": [{"guarantee": "bounded-storage"}]})
    result, _summary, _reports = recorded(bad)
    assert result.outcome is Outcome.ERROR
    assert result.message.startswith("the worker's report of this scenario is not one the suite makes (the phase "
                                     "report's warnings[0]'s text: not a str)"), result.message
