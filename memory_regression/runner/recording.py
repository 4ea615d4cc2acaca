"""Recording: a scenario's reports, as the runner receives them, become its
:class:`~.results.ScenarioResult` (outcome, verdict, duration, findings, warnings, figures, keys
left without a TTL), and each report gets the junit properties and the report.html diagnosis the
result gives it, before junit.xml and report.html see it; and pytest's terminal counts a call that
judged nothing as an error, as they do."""

from __future__ import annotations

from dataclasses import asdict
from typing import Callable

import pytest

from ..reports import html_report, files as reports
from ..reports.phase_report import Verdict, read
from ..reports.results import Outcome, RunSummary, ScenarioResult
from ..channel.messages import ScenarioInfo


def outcome_of(report: pytest.TestReport, verdict: Verdict | None) -> Outcome:
    """A report's outcome: a failure is the store's (failed) unless the scenario judged nothing: its
    verdict says so (the suite's own code raised: ``not_judged``), or a setup or teardown failed with
    no verdict (error)."""
    if report.skipped:
        return Outcome.SKIPPED
    if report.passed:
        return Outcome.PASSED
    if verdict is None:
        return Outcome.FAILED if report.when == "call" else Outcome.ERROR
    return Outcome.ERROR if verdict.not_judged else Outcome.FAILED


class Recorder:
    """The results of a run, by node id. ``scenario_info(nodeid)`` says what the scenario is (its name,
    group, point, capabilities, engine and guarantees), as the worker announced it or as its node id
    says."""

    def __init__(self, summary: RunSummary, scenario_info: Callable[[str], ScenarioInfo]):
        self.summary = summary
        self.scenario_info = scenario_info
        self.results: dict[str, ScenarioResult] = {}

    def record(self, report: pytest.TestReport) -> None:
        result = self._result(report.nodeid)
        recorded = report.nodeid in self.results
        phase = read(report)
        verdict = phase.verdict
        # the call decides, or a setup that did not pass, or a teardown failing after a call that found nothing
        if (report.when == "call" or (not recorded and not report.passed)
                or (recorded and report.failed and result.outcome in (Outcome.PASSED, Outcome.SKIPPED))):
            result.outcome = outcome_of(report, verdict)
            if verdict is not None and (report.failed or report.skipped):
                result.message, result.details = verdict.message, verdict.details
        if recorded or report.when == "call" or not report.passed:
            result.duration_s = round(result.duration_s + report.duration, 4)
            self.results[report.nodeid] = result
        result.findings += phase.findings
        result.warnings += [asdict(warning) for warning in phase.warnings]
        result.guarantees = [g for g in result.guarantees if g not in phase.unjudged]
        result.measurements += phase.measurements
        for key in phase.keys_without_ttl:
            if len(self.summary.keys_without_ttl) < reports.MAX_KEYS_WITHOUT_TTL:
                self.summary.keys_without_ttl.append(f"{key} ({report.nodeid})")
        report.user_properties = self._properties(result)
        if report.failed and result.message:
            html_report.attach_diagnosis(report, result, verdict)

    @pytest.hookimpl(tryfirst=True)
    def pytest_report_teststatus(self, report: pytest.TestReport) -> tuple[str, str, str] | None:
        """pytest's own terminal lines count a call that judged nothing as an error, as the reports do."""
        if report.when == "call" and outcome_of(report, read(report).verdict) is Outcome.ERROR:
            return "error", "E", "ERROR"
        return None

    def _result(self, nodeid: str) -> ScenarioResult:
        if nodeid in self.results:
            return self.results[nodeid]
        info = self.scenario_info(nodeid)
        return ScenarioResult(nodeid, info.scenario, info.group, info.point, list(info.requires),
                              engine=info.engine, guarantees=list(info.guarantees))

    def _properties(self, result: ScenarioResult) -> list[tuple[str, str]]:
        window = result.point.removeprefix("N=") if result.point.startswith("N=") else ""
        profile = result.point if result.point and not window else ""
        return [("scenario", result.scenario), ("group", result.group),
                ("capability", "+".join(result.requires) or "core"), ("window", window),
                ("profile", profile), ("backend", self.summary.backend or ""),
                *([("engine", result.engine)] if result.engine else []), *result.properties()]
