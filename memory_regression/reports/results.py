"""What a run found, as typed values: the outcome of a scenario, the status of the run and its exit
code (all three defined here and nowhere else), one scenario's result and the run's summary.

The runner reads the summary from memory; :mod:`.reports` turns it into files and :mod:`.github`
into outputs, a job summary and annotations.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import Enum, IntEnum
from typing import Any

from .figures import KINDS, NO_POINT, Figure, Place, figure


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
    SUITE_ERROR = "suite error"     # the suite itself failed (its files, its code): the store was not judged
    NOT_RUN = "not run"             # the run executed no scenario (--collect-only and the like)
    REDIS_ERROR = "redis error"
    INTERRUPTED = "interrupted"
    DID_NOT_FINISH = "did not finish"   # the run's deadline (--run-timeout) passed: its results are partial
    REPORT_ERROR = "report error"       # a report could not be written (a full disk, a file-size limit)

    @property
    def exit_code(self) -> ExitCode:
        return _EXIT_CODES[self]

    def __str__(self) -> str:
        return self.value


_EXIT_CODES = {
    Status.NOT_STARTED: ExitCode.USAGE, Status.PASSED: ExitCode.PASSED, Status.FAILED: ExitCode.FAILED,
    Status.USAGE_ERROR: ExitCode.USAGE, Status.SUITE_ERROR: ExitCode.USAGE, Status.NOT_RUN: ExitCode.USAGE,
    Status.REDIS_ERROR: ExitCode.REDIS, Status.INTERRUPTED: ExitCode.INTERRUPTED,
    Status.DID_NOT_FINISH: ExitCode.FAILED, Status.REPORT_ERROR: ExitCode.USAGE,
}


class Outcome(str, Enum):
    PASSED = "passed"
    FAILED = "failed"     # the store did something wrong, crashed or hung
    ERROR = "error"       # the scenario judged nothing: the suite's own code, or its setup or teardown, failed
    SKIPPED = "skipped"   # the store lacks a capability the scenario needs

    def __str__(self) -> str:
        return self.value


# What of the store's text a result and the reports keep, whatever the store printed or raised (six scenarios
# failing with 20 MB messages once made a 240 MB summary.json): each cut says how much was left out.
CAPTURE_LIMIT = 64 * 1024   # characters of captured output, of pytest's traceback, of a run's message
DETAILS_LIMIT = 3000        # characters of a traceback kept in a verdict's details, of a finding or a warning
MESSAGE_LIMIT = 4 * 1024    # characters of a verdict's message


def cap(text: str, limit: int, what: str) -> str:
    """``text`` cut to ``limit`` characters, saying how much was cut."""
    if len(text) <= limit:
        return text
    return (text[:limit] + f"\n[... {len(text) - limit:,} more characters of {what} cut: the suite keeps "
            f"the first {limit // 1024} KB of each]")


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
    # the guarantees it checks (capabilities.Guarantee values), and its warnings: each a mapping of the
    # guarantee it found broken and the text saying how; a warning fails the scenario only under --strict
    guarantees: list[str] = field(default_factory=list)
    warnings: list[dict] = field(default_factory=list)
    engine: str = ""          # the engine it ran on, when the run has several (--redis server,fakeredis)
    # the figures it recorded (ScenarioContext.measure): each a mapping with its "kind" (figures.KINDS)
    measurements: list[dict] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return self.outcome in (Outcome.FAILED, Outcome.ERROR)

    @property
    def case(self) -> str:
        """Its id without the engine: the same on every engine (``test_x[N=5-fakeredis]`` is
        ``test_x[N=5]``)."""
        if not self.engine:
            return self.nodeid
        return self.nodeid.removesuffix(f"[{self.engine}]").replace(f"-{self.engine}]", "]")

    def properties(self) -> list[tuple[str, str]]:
        """junit.xml properties of its figures (p95 and its ratio to the Redis floor of append and
        load, bytes per message and the growth of the footprint) and of its warnings."""
        found = [pair for measured in self.measurements for pair in figure(measured).properties()]
        return found + [("warning", f"{warning['guarantee']}: {warning['text']}") for warning in self.warnings]


@dataclass
class RunSummary:
    status: Status = Status.NOT_STARTED
    message: str | None = None
    store: str | None = None
    store_file: str | None = None
    store_line: int | None = None
    capabilities: list[str] = field(default_factory=list)
    shape: str | None = None          # how the store is called (binding.StoreBinding.shape)
    unfilled: str = ""                # the factory's parameters the suite leaves at their defaults
    observations: list[str] = field(default_factory=list)   # what the store did before the scenarios (.observe)
    # what the store's names say it has beside what the binding found, and the options that take those or fix
    # the binding's problems (.proposals): option key -> value
    proposals: list[str] = field(default_factory=list)
    fixes: dict[str, str] = field(default_factory=dict)
    conformance_level: str = "none"
    backend: str | None = None
    backend_warning: str | None = None
    # with several engines (--redis server,fakeredis): name, title ("server (redis 7.0.15)") and
    # description of each, in the order given; empty with one
    engines: list[dict] = field(default_factory=list)
    window_sizes: list[int] = field(default_factory=list)
    window_policy: str | None = None      # --window-policy as the settings name it; None before they are read
    groups: list[str] = field(default_factory=list)   # the scenario groups chosen (--groups)
    profiles: list[dict] = field(default_factory=list)
    results: list[ScenarioResult] = field(default_factory=list)
    keys_without_ttl: list[str] = field(default_factory=list)
    # processes the store left running after the run, each "its command line (pid N)", killed (.leftovers)
    leftovers: list[str] = field(default_factory=list)
    duration_s: float = 0.0
    report_files: dict[str, str] = field(default_factory=dict)
    comparison: dict[str, Any] | None = None   # how the run differs from --baseline's (baseline.Comparison)

    @property
    def exit_code(self) -> ExitCode:
        """The status's, unless the run was compared with a baseline and its scenarios judged (passed or
        failed): then 1 when what --fail-on-regression names happened (the comparison's ``fails_step``),
        else 0."""
        compared = self.comparison is not None and self.comparison["compared"]
        if compared and self.status in (Status.PASSED, Status.FAILED):
            return ExitCode.FAILED if self.comparison["fails_step"] else ExitCode.PASSED
        return self.status.exit_code

    def totals(self) -> dict[str, int]:
        counts = {"total": len(self.results), "passed": 0, "failed": 0, "skipped": 0, "errors": 0}
        for result in self.results:
            counts["errors" if result.outcome is Outcome.ERROR else result.outcome.value] += 1
        return counts

    def failures(self) -> list[ScenarioResult]:
        return [r for r in self.results if r.failed]

    def warnings(self) -> list[dict[str, str]]:
        """Every warning, in report order: ``nodeid``, ``guarantee`` and ``text``."""
        return [{"nodeid": r.nodeid, **warning} for r in self.results for warning in r.warnings]

    def findings(self) -> list[tuple[str, str]]:
        """(nodeid, text) of every finding, in report order: coverage, growth, how far a budget reached."""
        return [(r.nodeid, text) for r in self.results for text in r.findings]

    def measured(self, kind: str) -> list[dict[str, Any]]:
        """Every figure of ``kind`` (``latency``, ``footprint``) the scenarios recorded, in report order,
        as summary.json lists them: each with the scenario's ``nodeid``, ``scenario``, ``point``,
        ``outcome`` and, when the run has several engines, ``engine``; one entry per store run, window
        and engine."""
        return [{"nodeid": result.nodeid, "scenario": result.scenario, "point": result.point,
                 **({"engine": result.engine} if self.engines else {}), "outcome": str(result.outcome),
                 **{key: value for key, value in measured.items() if key != "kind"}}
                for result in self.results for measured in result.measurements if measured.get("kind") == kind]

    def figures(self, kind: str) -> list[Figure]:
        """The same figures, typed (:mod:`.figures`), for the reports to render."""
        return [figure({"kind": kind, **entry}, Place(entry["nodeid"], entry["scenario"], entry["point"],
                                                      entry["outcome"], entry.get("engine", "")))
                for entry in self.measured(kind)]

    def matrix(self) -> tuple[list[str], list[tuple[str, str, dict[str, Any]]]]:
        """Columns (the run-once column, the windows, then the profiles, as configured) and rows
        (group, scenario, point -> outcome), in the order the scenarios were collected. With several
        engines a cell holds the outcome on each engine, side by side (engine name -> outcome, in
        the engines' order)."""
        configured = [NO_POINT, *(f"N={n}" for n in self.window_sizes), *(p["name"] for p in self.profiles)]
        order = {engine["name"]: index for index, engine in enumerate(self.engines)}
        seen: set[str] = set()
        rows: dict[str, tuple[str, str, dict[str, Any]]] = {}
        for result in self.results:
            point = result.point or NO_POINT
            seen.add(point)
            cells = rows.setdefault(result.scenario, (result.group, result.scenario, {}))[2]
            if self.engines:
                cell = cells.setdefault(point, {})
                cell[result.engine] = result.outcome
                cells[point] = dict(sorted(cell.items(), key=lambda item: order.get(item[0], len(order))))
            else:
                cells[point] = result.outcome
        columns = [c for c in configured if c in seen] + sorted(seen - set(configured))
        return columns, list(rows.values())

    def engine_differences(self) -> list[dict[str, Any]]:
        """Every scenario (at every window or profile) that passes on one engine and fails on
        another: its case id, scenario, point, outcome per engine and what differs, worded
        "passes on fakeredis 2.41.0, fails on server (redis 7.0.15)". Skips do not count: a
        scenario that needs a real server is skipped on fakeredis, which is no difference of verdict."""
        titles = {engine["name"]: engine["title"] for engine in self.engines}
        cases: dict[str, list[ScenarioResult]] = {}
        for result in self.results:
            if result.engine:
                cases.setdefault(result.case, []).append(result)
        found = []
        for case, results in cases.items():
            passed = [titles.get(r.engine, r.engine) for r in results if r.outcome is Outcome.PASSED]
            failed = [titles.get(r.engine, r.engine) for r in results if r.outcome is Outcome.FAILED]
            errors = [titles.get(r.engine, r.engine) for r in results if r.outcome is Outcome.ERROR]
            if not passed or not (failed or errors):
                continue
            words = [f"passes on {' and '.join(passed)}"]
            words += [f"fails on {' and '.join(failed)}"] if failed else []
            words += [f"errors on {' and '.join(errors)}"] if errors else []
            found.append({"case": case, "scenario": results[0].scenario, "point": results[0].point,
                          "outcomes": {r.engine: str(r.outcome) for r in results}, "message": ", ".join(words)})
        return found

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
            del result["measurements"]   # they are the top-level figures below
        for kind in KINDS:
            data[kind] = self.measured(kind)
        data["totals"] = self.totals()
        data["capability_scenarios"] = self.scenarios_by_capability()
        data["matrix"] = {"columns": columns, "rows": [{"group": g, "scenario": s,
                                                        "cells": {k: _cell_json(v) for k, v in c.items()}}
                                                       for g, s, c in rows]}
        data["failures"] = [r for r in data["results"] if r["outcome"] in ("failed", "error")]
        data["warnings"] = self.warnings()
        if self.comparison is None:   # a run without --baseline: its summary stays as it was
            del data["comparison"]
        if self.engines:   # a single engine's summary stays as it was
            data["engine_differences"] = self.engine_differences()
        else:
            del data["engines"]
            for result in data["results"]:
                del result["engine"]
        return data


def _cell_json(cell: Any) -> Any:
    return {engine: str(outcome) for engine, outcome in cell.items()} if isinstance(cell, dict) else str(cell)
