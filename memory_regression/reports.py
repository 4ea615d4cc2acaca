"""What a run found, and the files that carry it: summary.json, summary.md, and junit.xml on errors.

pytest writes junit.xml and pytest-html writes report.html for a run that got going; this module
writes the two summaries always, and a junit.xml of its own when the run stopped before any
scenario (a usage or Redis error), so CI always has something to publish.
"""

from __future__ import annotations

import html
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

SUMMARY_MD_LIMIT = 1024 * 1024 - 4096   # GitHub's job summary takes 1 MiB per step
FAILURES_IN_SUMMARY = 10
DETAILS_LIMIT = 4000                     # characters of one failure's details in summary.md

OUTCOME_MARK = {"passed": "✅", "failed": "❌", "error": "💥", "skipped": "⏭️"}
OUTCOME_WORD = {"passed": "pass", "failed": "FAIL", "error": "ERROR", "skipped": "skip"}
NO_POINT = "—"

EXIT_PASSED, EXIT_FAILED, EXIT_USAGE, EXIT_REDIS, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


@dataclass
class ScenarioResult:
    nodeid: str
    scenario: str
    group: str
    point: str                # "N=5", a profile name, or "" for scenarios run once
    requires: list[str]
    outcome: str              # passed, failed, error, skipped
    message: str = ""         # one line: the diagnosis, the exception, or the skip reason
    details: str = ""         # expected against actual, or the end of a traceback
    duration_s: float = 0.0


@dataclass
class RunSummary:
    status: str = "not started"
    exit_code: int = EXIT_USAGE
    message: str | None = None
    store: str | None = None
    store_file: str | None = None
    store_line: int | None = None
    capabilities: list[str] = field(default_factory=list)
    conformance_level: str = "none"
    backend: str | None = None
    backend_warning: str | None = None
    window_sizes: list[int] = field(default_factory=list)
    profiles: list[dict] = field(default_factory=list)
    results: list[ScenarioResult] = field(default_factory=list)
    keys_without_ttl: list[str] = field(default_factory=list)
    duration_s: float = 0.0
    report_files: dict[str, str] = field(default_factory=dict)

    def totals(self) -> dict[str, int]:
        counts = {"total": len(self.results), "passed": 0, "failed": 0, "skipped": 0, "errors": 0}
        for result in self.results:
            counts["errors" if result.outcome == "error" else result.outcome] += 1
        return counts

    def failures(self) -> list[ScenarioResult]:
        return [r for r in self.results if r.outcome in ("failed", "error")]

    def matrix(self) -> tuple[list[str], list[tuple[str, str, dict[str, str]]]]:
        """Columns (matrix points) and rows (group, scenario, point -> outcome)."""
        columns: list[str] = []
        rows: dict[str, tuple[str, str, dict[str, str]]] = {}
        for result in self.results:
            point = result.point or NO_POINT
            if point not in columns:
                columns.append(point)
            row = rows.setdefault(result.scenario, (result.group, result.scenario, {}))
            row[2][point] = result.outcome
        if NO_POINT in columns:
            columns.remove(NO_POINT)
            columns.insert(0, NO_POINT)
        return columns, list(rows.values())

    def to_json(self) -> dict:
        columns, rows = self.matrix()
        data = asdict(self)
        data["totals"] = self.totals()
        data["matrix"] = {"columns": columns,
                          "rows": [{"group": g, "scenario": s, "cells": c} for g, s, c in rows]}
        data["failures"] = [asdict(r) for r in self.failures()]
        return data


def headline(summary: RunSummary) -> str:
    t = summary.totals()
    return (f"{t['passed']} passed, {t['failed']} failed, {t['skipped']} skipped, {t['errors']} errors"
            f" of {t['total']} scenarios; conformance level {summary.conformance_level}")


def _md_escape(text: str) -> str:
    return html.escape(text, quote=False).replace("|", "\\|").replace("\n", " ")


def render_markdown(summary: RunSummary) -> str:
    """summary.md: totals, conformance level, the matrix and the first failures, under 1 MiB."""
    lines = [f"## Memory regression: {summary.status}", ""]
    if summary.message:
        lines += ["**" + _md_escape(summary.message.splitlines()[0]) + "**", "",
                  "```text", summary.message[:DETAILS_LIMIT].replace("```", "'''"), "```", ""]
    if summary.backend_warning:
        lines += [f"> ⚠️ {_md_escape(summary.backend_warning)}", ""]
    lines += [
        f"- Store: `{summary.store or '(none)'}`",
        f"- Capabilities: {', '.join(summary.capabilities) or 'unknown'}",
        f"- Conformance level: **{summary.conformance_level}**",
        f"- Redis: {_md_escape(summary.backend or 'not started')}",
        f"- Window sizes: {', '.join(map(str, summary.window_sizes)) or '—'}",
    ]
    for profile in summary.profiles:
        lines.append(f"- Profile `{profile['name']}`: budget {profile['max_tokens']} tokens, "
                     f"counter {_md_escape(profile['counter'])}")
    if summary.results:
        lines += ["", headline(summary), ""]
        columns, rows = summary.matrix()
        lines.append("| group | scenario | " + " | ".join(_md_escape(c) for c in columns) + " |")
        lines.append("|---|---|" + "---|" * len(columns))
        for group, scenario, cells in rows:
            marks = [OUTCOME_MARK.get(cells.get(c, ""), "") for c in columns]
            lines.append(f"| {group} | `{scenario}` | " + " | ".join(marks) + " |")
    if summary.keys_without_ttl:
        shown = summary.keys_without_ttl[:20]
        lines += ["", f"Keys left without a TTL ({len(summary.keys_without_ttl)}): "
                  + ", ".join(f"`{_md_escape(k)}`" for k in shown)
                  + (" ..." if len(summary.keys_without_ttl) > len(shown) else "")]
    failures = summary.failures()
    if failures:
        lines += ["", f"### First failures ({min(len(failures), FAILURES_IN_SUMMARY)} of {len(failures)})", ""]
        for result in failures[:FAILURES_IN_SUMMARY]:
            lines += [f"**{_md_escape(result.nodeid)}**: {_md_escape(result.message)}", ""]
            if result.details:
                lines += ["<details><summary>expected against actual</summary>", "", "```text",
                          result.details[:DETAILS_LIMIT].replace("```", "'''"), "```", "</details>", ""]
    text = "\n".join(lines) + "\n"
    if len(text.encode()) > SUMMARY_MD_LIMIT:
        cut = text.encode()[:SUMMARY_MD_LIMIT].decode(errors="ignore")
        text = cut + "\n\n_(summary cut at 1 MiB; the HTML report and junit.xml hold everything)_\n"
    return text


def render_terminal(summary: RunSummary) -> str:
    """The one-screen summary printed at the end of a run."""
    lines = [f"memory regression: {summary.status}"]
    if summary.message:
        lines.append(summary.message)
    if summary.backend_warning:
        lines.append(f"WARNING: {summary.backend_warning}")
    if summary.capabilities:
        lines.append(f"store {summary.store}  [{', '.join(summary.capabilities)}]")
    if summary.backend:
        lines.append(f"redis {summary.backend}")
    for profile in summary.profiles:
        lines.append(f"profile {profile['name']}: {profile['max_tokens']} tokens, {profile['counter']}")
    if summary.results:
        lines.append(headline(summary))
        columns, rows = summary.matrix()
        width = max(len(s) for _g, s, _c in rows)
        lines.append(" " * (width + 2) + "  ".join(f"{c:>{max(6, len(c))}}" for c in columns))
        for _group, scenario, cells in rows:
            lines.append(f"  {scenario:<{width}}" + "  ".join(
                f"{OUTCOME_WORD.get(cells.get(c, ''), ''):>{max(6, len(c))}}" for c in columns))
    for result in summary.failures()[:FAILURES_IN_SUMMARY]:
        lines.append(f"  {OUTCOME_WORD[result.outcome]} {result.nodeid}: {result.message}")
    for name, path in summary.report_files.items():
        lines.append(f"{name}: {path}")
    return "\n".join(lines)


def write_summaries(summary: RunSummary, directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "summary.json").write_text(json.dumps(summary.to_json(), indent=2, ensure_ascii=False),
                                            encoding="utf-8")
    (directory / "summary.md").write_text(render_markdown(summary), encoding="utf-8")


def write_error_junit(summary: RunSummary, directory: Path) -> None:
    """A junit.xml for a run that stopped before any scenario: one errored case saying why."""
    from junitparser import Error, JUnitXml, TestCase, TestSuite

    case = TestCase("configuration", classname="memory_regression")
    error = Error(message=(summary.message or summary.status).splitlines()[0], type_=summary.status)
    error.text = summary.message or ""
    case.result = [error]
    suite = TestSuite("memory-regression")
    suite.add_testcase(case)
    suite.update_statistics()
    xml = JUnitXml()
    xml.add_testsuite(suite)
    directory.mkdir(parents=True, exist_ok=True)
    xml.write(str(directory / "junit.xml"))
