"""The run's verdict (memory_regression/runner/verdict.py), branch by branch, in precedence order, on real
RunSummary objects: no run needed."""

import pytest
from pytest import ExitCode

from memory_regression.reports.results import Outcome, RunSummary, ScenarioResult, Status
from memory_regression.runner.verdict import RunFacts, decide, verdict
from memory_regression.channel.messages import Abort
from tests.unit.test_engines import engines_summary

OK, FAILED = int(ExitCode.OK), int(ExitCode.TESTS_FAILED)


def result(outcome, name="test_a"):
    return ScenarioResult(f"test_core.py::{name}", name, "core", "", [], outcome)


def summary(*outcomes):
    return RunSummary(results=[result(outcome, f"test_{i}") for i, outcome in enumerate(outcomes)])


PASSED_ONE = summary(Outcome.PASSED)
FAILED_ONE = summary(Outcome.PASSED, Outcome.FAILED)
ABORT = Abort("usage error", "the store needs RediSearch")


@pytest.mark.parametrize("facts, expected", [
    (RunFacts(PASSED_ONE, OK), (Status.PASSED, None)),
    (RunFacts(FAILED_ONE, FAILED), (Status.FAILED, None)),
    (RunFacts(summary(Outcome.PASSED, Outcome.ERROR, Outcome.FAILED), FAILED), (Status.FAILED, None)),
    (RunFacts(summary(Outcome.PASSED, Outcome.ERROR), FAILED),
     (Status.SUITE_ERROR, "1 scenario judged nothing, and none found a fault of the store: test_core.py::test_1: its "
                          "setup or teardown failed")),
    (RunFacts(RunSummary(results=[result(Outcome.ERROR, "test_x"), result(Outcome.ERROR, "test_y")]), FAILED),
     (Status.SUITE_ERROR, "2 scenarios judged nothing, and none found a fault of the store: test_core.py::test_x: "
                          "its setup or teardown failed; ...")),
    (RunFacts(FAILED_ONE, int(ExitCode.INTERRUPTED)),
     (Status.FAILED, "the run stopped at the first failures (-x or --maxfail): later scenarios did not run")),
    (RunFacts(summary(Outcome.PASSED, Outcome.ERROR), int(ExitCode.INTERRUPTED)),
     (Status.SUITE_ERROR, "1 scenario judged nothing, and none found a fault of the store: test_core.py::test_1: its "
                          "setup or teardown failed: the run stopped there (-x or --maxfail), later scenarios did "
                          "not run")),
    (RunFacts(summary(Outcome.SKIPPED, Outcome.SKIPPED), OK),
     (Status.NOT_RUN, "every selected scenario was skipped, as the store lacks their capabilities (see the "
                      "reasons): nothing was checked")),
    (RunFacts(summary(), OK, collected=53),
     (Status.NOT_RUN, "53 scenarios were collected and none was run (--collect-only, or an option that runs "
                      "nothing): nothing was checked")),
    (RunFacts(summary(), int(ExitCode.NO_TESTS_COLLECTED)),
     (Status.USAGE_ERROR, "no scenario was selected: check the -k expression")),
    (RunFacts(PASSED_ONE, OK, aborts=(ABORT,)), (Status.USAGE_ERROR, "the store needs RediSearch")),
    (RunFacts(PASSED_ONE, OK, collection_errors=("suite/test_core.py: SyntaxError",)),
     (Status.SUITE_ERROR, "the suite's own files could not be loaded (a broken installation?):\n"
                          "suite/test_core.py: SyntaxError")),
    (RunFacts(PASSED_ONE, OK, interrupted_by="SIGTERM"),
     (Status.INTERRUPTED, "the run was interrupted by SIGTERM; the results below are partial")),
    (RunFacts(PASSED_ONE, int(ExitCode.INTERRUPTED)),
     (Status.INTERRUPTED, "the run was interrupted; the results below are partial")),
    (RunFacts(FAILED_ONE, OK, stopped=(Status.REDIS_ERROR, "Redis went away during test_a")),
     (Status.REDIS_ERROR, "Redis went away during test_a")),
    (RunFacts(PASSED_ONE, OK, run_timeout=15.0, stopped=(Status.REDIS_ERROR, "x"), interrupted_by="SIGTERM"),
     (Status.DID_NOT_FINISH, "the run did not finish within --run-timeout 15 s: it was cut off, and the results "
                             "below are partial")),
    (RunFacts(PASSED_ONE, int(ExitCode.USAGE_ERROR)), (Status.USAGE_ERROR, "pytest stopped with exit status 4")),
], ids=lambda value: value[0].value if isinstance(value, tuple) else "")
def test_each_cause_gives_its_status_and_message(facts, expected):
    assert verdict(facts) == expected


def test_each_cause_outranks_those_after_it():
    """The deadline over a stop, a stop over an interrupt, an interrupt over the suite's errors, those
    over a worker's abort, an abort over the scenarios' outcomes."""
    everything = dict(run_timeout=1.0, stopped=(Status.USAGE_ERROR, "stopped"), interrupted_by="SIGINT",
                      collection_errors=("broken",), aborts=(ABORT,))
    order = [Status.DID_NOT_FINISH, Status.USAGE_ERROR, Status.INTERRUPTED, Status.SUITE_ERROR, Status.USAGE_ERROR,
             Status.FAILED]
    for dropped, expected in enumerate(order):
        kept = dict(list(everything.items())[dropped:])
        assert verdict(RunFacts(FAILED_ONE, FAILED, **kept))[0] is expected, kept


def test_engines_that_differ_are_named_in_the_failure():
    status, message = verdict(RunFacts(engines_summary(), FAILED))
    assert status is Status.FAILED
    assert message == ("the engines differ on 2 scenarios: test_core.py::test_a passes on fakeredis 2.41.0, fails on "
                       "server (redis 7.0.15); ...")


@pytest.mark.parametrize("facts, expected", [
    (RunFacts(RunSummary(), 0, started=False, stopped=(Status.USAGE_ERROR, "no store given")),
     (Status.USAGE_ERROR, "no store given")),
    (RunFacts(RunSummary(), 0, started=False, stopped=(Status.USAGE_ERROR, "no store given"), interrupted_by="SIGINT"),
     (Status.INTERRUPTED, "the run was interrupted by SIGINT before any scenario ran")),
    (RunFacts(RunSummary(), 0, started=False), (Status.INTERRUPTED, "the run was interrupted before any scenario ran")),
])
def test_a_run_stopped_before_any_scenario_says_why_unless_an_interrupt_ended_it(facts, expected):
    assert verdict(facts) == expected


def test_reports_that_could_not_be_written_make_any_verdict_a_report_error_that_carries_it():
    """A late fact is one more input of the same decision: the status is never rewritten after it."""
    status, message = verdict(RunFacts(FAILED_ONE, FAILED, unwritten=("report.html: No space left on device",)))
    assert status is Status.REPORT_ERROR
    assert message.startswith("the reports could not all be written (report.html: No space left on device)")
    assert "The run itself was failed" in message, message
    summary = RunSummary(results=list(PASSED_ONE.results))
    decide(summary, RunFacts(summary, OK, interrupted_by="SIGTERM"), phrase=str.upper)
    assert (summary.status, summary.message) == (Status.INTERRUPTED, "THE RUN WAS INTERRUPTED BY SIGTERM; THE "
                                                                     "RESULTS BELOW ARE PARTIAL")
