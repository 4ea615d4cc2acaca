"""What a run found, as typed values: the outcome of a scenario, the status of the run and its exit
code (all three defined here and nowhere else), one scenario's result and the run's summary.

The runner reads the summary from memory; :mod:`.reports` turns it into files and :mod:`.github`
into outputs, a job summary and annotations.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import Enum, IntEnum


class ExitCode(IntEnum):
    PASSED = 0          # every scenario that ran passed
    FAILED = 1          # a scenario failed: a finding about the store
    USAGE = 2           # the run could not judge the store: bad input, a store outside the contract, nothing run
    REDIS = 3           # Redis could not be started, or went away
    INTERRUPTED = 130   # Ctrl-C or SIGTERM


class Status(str, Enum):
    """The verdict of a run, as the reports word it; each has one exit code."""

    NOT_STARTED = "not started"
    PASSED = "passed"
    FAILED = "failed"
    USAGE_ERROR = "usage error"
    SUITE_ERROR = "suite error"     # the suite's own files could not be loaded
    NOT_RUN = "not run"             # the run executed no scenario (--collect-only and the like)
    REDIS_ERROR = "redis error"
    INTERRUPTED = "interrupted"

    @property
    def exit_code(self) -> ExitCode:
        return _EXIT_CODES[self]

    def __str__(self) -> str:
        return self.value


_EXIT_CODES = {
    Status.NOT_STARTED: ExitCode.USAGE, Status.PASSED: ExitCode.PASSED, Status.FAILED: ExitCode.FAILED,
    Status.USAGE_ERROR: ExitCode.USAGE, Status.SUITE_ERROR: ExitCode.USAGE, Status.NOT_RUN: ExitCode.USAGE,
    Status.REDIS_ERROR: ExitCode.REDIS, Status.INTERRUPTED: ExitCode.INTERRUPTED,
}


class Outcome(str, Enum):
    PASSED = "passed"
    FAILED = "failed"     # the store did something wrong, crashed or hung
    ERROR = "error"       # the scenario could not be set up or torn down
    SKIPPED = "skipped"   # the store lacks a capability the scenario needs

    def __str__(self) -> str:
        return self.value


# the skip reason of a scenario that ``--list`` did not run although the store could run it
LISTED_NOT_RUN = "would run (listed by --list, not run)"


@dataclass
class ScenarioResult:
    nodeid: str
    scenario: str
    group: str
    point: str                # "N=5", a profile name, or "" for scenarios run once
    requires: list[str]
    outcome: Outcome = Outcome.ERROR
    message: str = ""         # one line: the diagnosis, the exception, or the skip reason
    details: str = ""         # expected against actual, or the end of a traceback
    duration_s: float = 0.0
    findings: list[str] = field(default_factory=list)   # what the scenario measured or noted, pass or fail

    @property
    def failed(self) -> bool:
        return self.outcome in (Outcome.FAILED, Outcome.ERROR)


NO_POINT = "—"   # the matrix column of scenarios that run once, not per window or profile


@dataclass
class RunSummary:
    status: Status = Status.NOT_STARTED
    message: str | None = None
    store: str | None = None
    store_file: str | None = None
    store_line: int | None = None
    capabilities: list[str] = field(default_factory=list)
    shape: str | None = None          # how the store is called (contract.StoreBinding.shape)
    conformance_level: str = "none"
    backend: str | None = None
    backend_warning: str | None = None
    window_sizes: list[int] = field(default_factory=list)
    window_policy: str | None = None      # --window-policy as the settings name it; None before they are read
    groups: list[str] = field(default_factory=list)   # the scenario groups chosen (--groups)
    profiles: list[dict] = field(default_factory=list)
    results: list[ScenarioResult] = field(default_factory=list)
    keys_without_ttl: list[str] = field(default_factory=list)
    duration_s: float = 0.0
    report_files: dict[str, str] = field(default_factory=dict)

    @property
    def exit_code(self) -> ExitCode:
        return self.status.exit_code

    def totals(self) -> dict[str, int]:
        counts = {"total": len(self.results), "passed": 0, "failed": 0, "skipped": 0, "errors": 0}
        for result in self.results:
            counts["errors" if result.outcome is Outcome.ERROR else result.outcome.value] += 1
        return counts

    def failures(self) -> list[ScenarioResult]:
        return [r for r in self.results if r.failed]

    def findings(self) -> list[tuple[str, str]]:
        """(nodeid, text) of every finding, in report order: coverage, growth, how far a budget reached."""
        return [(r.nodeid, text) for r in self.results for text in r.findings]

    def matrix(self) -> tuple[list[str], list[tuple[str, str, dict[str, Outcome]]]]:
        """Columns (the run-once column, the windows, then the profiles, as configured) and rows
        (group, scenario, point -> outcome), in the order the scenarios were collected."""
        configured = [NO_POINT, *(f"N={n}" for n in self.window_sizes), *(p["name"] for p in self.profiles)]
        seen: set[str] = set()
        rows: dict[str, tuple[str, str, dict[str, Outcome]]] = {}
        for result in self.results:
            point = result.point or NO_POINT
            seen.add(point)
            rows.setdefault(result.scenario, (result.group, result.scenario, {}))[2][point] = result.outcome
        columns = [c for c in configured if c in seen] + sorted(seen - set(configured))
        return columns, list(rows.values())

    def scenarios_by_capability(self) -> dict[str, list[str]]:
        """The scenarios that ran for each capability: those whose marker names it (core: no marker)."""
        found: dict[str, list[str]] = {}
        for result in self.results:
            for capability in result.requires or ["core"]:
                if result.scenario not in found.setdefault(capability, []):
                    found[capability].append(result.scenario)
        return found

    def to_json(self) -> dict:
        columns, rows = self.matrix()
        data = asdict(self)
        data["status"] = self.status.value
        data["exit_code"] = int(self.exit_code)
        for result in data["results"]:
            result["outcome"] = str(result["outcome"])
        data["totals"] = self.totals()
        data["capability_scenarios"] = self.scenarios_by_capability()
        data["matrix"] = {"columns": columns, "rows": [{"group": g, "scenario": s,
                                                        "cells": {k: str(v) for k, v in c.items()}}
                                                       for g, s, c in rows]}
        data["failures"] = [r for r in data["results"] if r["outcome"] in ("failed", "error")]
        return data
