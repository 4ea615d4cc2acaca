"""Every report file of a run, and the text renderings of its summary.

pytest writes junit.xml and pytest-html writes report.html for a run that got going; this module
names all four files, clears those of an earlier run, writes summary.json and summary.md always,
and a junit.xml of its own when no scenario ran (a usage or Redis error), so CI always has
something to publish. Whatever a store's text holds, the files stay well-formed: characters XML
cannot carry are escaped, Markdown gets no raw control characters, and credentials are redacted.
"""

from __future__ import annotations

import html
import json
import os
import re
from dataclasses import dataclass
from xml.etree import ElementTree
from pathlib import Path
from typing import Callable

from .capabilities import REGISTRY
from .contract import UsageError
from .groups import describe_groups
from .redaction import Redactor
from .results import LATENCY_OPERATIONS, LISTED_NOT_RUN, NO_POINT, Outcome, RunSummary

SUMMARY_MD_LIMIT = 1024 * 1024 - 4096   # GitHub's job summary takes 1 MiB per step
FAILURES_IN_SUMMARY = 10
FINDINGS_SHOWN = 20          # findings listed in summary.md and the terminal (summary.json has all)
DETAILS_LIMIT = 4000                     # characters of one failure's details in summary.md
MAX_KEYS_WITHOUT_TTL = 200

OUTCOME_MARK = {Outcome.PASSED: "✅", Outcome.FAILED: "❌", Outcome.ERROR: "💥", Outcome.SKIPPED: "⏭️"}
OUTCOME_WORD = {Outcome.PASSED: "pass", Outcome.FAILED: "FAIL", Outcome.ERROR: "ERROR", Outcome.SKIPPED: "skip"}
DIFFERS_MARK = "⚠️ "     # a scenario whose verdict differs between engines

# characters XML 1.0 cannot hold, and control characters a Markdown page should not show raw
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


@dataclass(frozen=True)
class ReportPaths:
    directory: Path

    @property
    def junit(self) -> Path:
        return self.directory / "junit.xml"

    @property
    def html(self) -> Path:
        return self.directory / "report.html"

    @property
    def summary_md(self) -> Path:
        return self.directory / "summary.md"

    @property
    def summary_json(self) -> Path:
        return self.directory / "summary.json"

    def all(self) -> tuple[Path, ...]:
        return (self.junit, self.html, self.summary_md, self.summary_json)


def prepare_report_dir(paths: ReportPaths, shown: str) -> list[Path]:
    """Create the report directory (returning the directories made), check it can be written, and
    remove an earlier run's reports, so that a run stopping before pytest leaves no stale one."""
    created: list[Path] = []
    directory = paths.directory
    try:
        for parent in reversed([directory, *directory.parents]):
            if not parent.exists():
                try:
                    parent.mkdir()
                    created.append(parent)
                except FileExistsError:
                    pass   # another run sharing the directory made it meanwhile
        if not directory.is_dir():
            raise UsageError(f"--report-dir {shown!r} is not a directory: give a directory for the reports")
        probe = directory / f".memory-regression-write-check-{os.getpid()}"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        raise UsageError(f"--report-dir {shown!r} cannot be written: {exc.strerror or exc}; give a "
                         "directory this user can write to") from None
    clear_old_reports(paths)
    return created


def clear_old_reports(paths: ReportPaths) -> None:
    """Remove the files of an earlier run (symlinks included, never followed), so that nothing stale
    sits beside this run's reports."""
    for path in paths.all():
        try:
            if path.is_symlink() or path.is_file():
                path.unlink()
        except OSError:
            pass


def written_reports(paths: ReportPaths) -> dict[str, str]:
    names = {"junit": paths.junit, "html": paths.html, "summary_md": paths.summary_md,
             "summary_json": paths.summary_json}
    return {name: str(path) for name, path in names.items() if path.is_file() and not path.is_symlink()}


def xml_safe(text: str) -> str:
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def _visible(text: str) -> str:
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def headline(summary: RunSummary) -> str:
    t = summary.totals()
    warned = len({w["nodeid"] for w in summary.warnings()})
    return (f"{t['passed']} passed{f' ({warned} with warnings)' if warned else ''}, {t['failed']} failed, "
            f"{t['skipped']} skipped, {t['errors']} errors of {t['total']} scenarios; conformance level "
            f"{summary.conformance_level}")


def _md_escape(text: str) -> str:
    return html.escape(_visible(text), quote=False).replace("|", "\\|").replace("\n", " ")


def _md_block(text: str) -> str:
    return _visible(text[:DETAILS_LIMIT]).replace("```", "'''")


def engine_cell(cell: dict[str, Outcome], words: dict[Outcome, str], separator: str) -> str:
    """A matrix cell of a run on several engines: the outcome on each, in the engines' order, marked
    when the engines disagree on the verdict."""
    text = separator.join(words[outcome] for outcome in cell.values())
    return f"{DIFFERS_MARK}{text}" if verdicts_differ(cell) else text


def verdicts_differ(cell: dict[str, Outcome]) -> bool:
    outcomes = set(cell.values())
    return Outcome.PASSED in outcomes and bool(outcomes & {Outcome.FAILED, Outcome.ERROR})


def engines_line(summary: RunSummary) -> str:
    return ", ".join(engine["title"] for engine in summary.engines)


def size_text(size: float) -> str:
    """Bytes as a person reads them: 812 B, 12.3 KB, 4.0 MB."""
    if size < 1024:
        return f"{size:,.0f} B"
    return f"{size / 1024:,.1f} KB" if size < 1024 * 1024 else f"{size / 1024 / 1024:,.1f} MB"


def _ms(value: float | None) -> str:
    return "?" if value is None else f"{value:.3f}" if value < 10 else f"{value:,.1f}"


def _times(value: float | None) -> str:
    return "?" if value is None else f"{value:g}×"


def figure_label(entry: dict) -> str:
    """Where a figure was measured: its window or profile (``N=5``, ``small-4k``, ``unwindowed``),
    and its engine when the run has several."""
    label = entry.get("window") or entry.get("point") or NO_POINT
    return f"{label} on {entry['engine']}" if entry.get("engine") else label


def latency_cells(entry: dict) -> dict[str, str]:
    """One latency figure as text: each operation's p50 / p95 / p99 in ms, the floor's, its p50 and
    p95 as multiples of the floor's, and the budgets given."""
    cells = {}
    for operation in LATENCY_OPERATIONS:
        found = entry.get(operation) or {}
        cells[operation] = " / ".join(_ms(found.get(name)) for name in ("p50_ms", "p95_ms", "p99_ms"))
        cells[f"{operation}_floor"] = " / ".join(_ms(found.get(f"floor_{name}"))
                                                 for name in ("p50_ms", "p95_ms", "p99_ms"))
        cells[f"{operation}_ratio"] = f"{_times(found.get('ratio_p50'))} / {_times(found.get('ratio_p95'))}"
    budgets = [f"{operation} {entry[operation]['budget_ms']:g} ms" for operation in LATENCY_OPERATIONS
               if (entry.get(operation) or {}).get("budget_ms") is not None]
    cells["budget"] = ", ".join(budgets) or "none"
    return cells


def footprint_cells(entry: dict) -> dict[str, str]:
    """One footprint figure as text: what the first messages took, per message against their
    content, and the growth after the rest (none without a window)."""
    cells = {"messages": str(entry.get("messages", "?")), "bytes": size_text(entry.get("bytes", 0)),
             "per_message": f"{entry.get('bytes_per_message', 0):,.0f} B",
             "content": f"{entry.get('content_bytes_per_message', 0):,.0f} B",
             "overhead": _times(entry.get("overhead_ratio")), "growth": "no window, not judged"}
    if entry.get("bytes_after") is not None:
        cells["growth"] = (f"{size_text(entry['bytes_after'])} after {entry['appends_after']} appends: "
                           f"{_times(entry.get('growth'))} (at most {entry.get('bound')}×)")
    return cells


def render_figures_markdown(summary: RunSummary) -> list[str]:
    """summary.md's latency and footprint tables."""
    lines: list[str] = []
    latency = summary.measured("latency")
    if latency:
        lines += ["", "### Latency", "",
                  "Milliseconds, p50 / p95 / p99, beside the raw Redis floor measured in the same run (RPUSH and "
                  "LRANGE of the same sizes through redis-py on the same server); × floor: the store's p50 and p95 as "
                  "multiples of the floor's.", "",
                  "| where | samples | append | RPUSH floor | × floor | load | LRANGE floor | × floor | budget (p95) |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for entry in latency:
            cells = latency_cells(entry)
            row = [_md_escape(figure_label(entry)), str(entry.get("samples", "?")), cells["append"],
                   cells["append_floor"], cells["append_ratio"], cells["load"], cells["load_floor"],
                   cells["load_ratio"], cells["budget"]]
            lines.append(f"| {' | '.join(row)} |")
    footprint = summary.measured("footprint")
    if footprint:
        lines += ["", "### Storage footprint", "",
                  "MEMORY USAGE (SAMPLES 0) of the session's keys after its first messages (a full window; 10 under "
                  "a roomy one), per message against the content's size, and after the rest (ten windows' worth; "
                  "twice the messages).", "",
                  "| where | messages | bytes | per message | content per message | overhead | growth |",
                  "|---|---|---|---|---|---|---|"]
        for entry in footprint:
            cells = footprint_cells(entry)
            lines.append(f"| {_md_escape(figure_label(entry))} | {cells['messages']} | {cells['bytes']} | "
                         f"{cells['per_message']} | {cells['content']} | {cells['overhead']} | {cells['growth']} |")
    return lines


def render_figures_terminal(summary: RunSummary) -> list[str]:
    """One line per latency and footprint figure, for the terminal summary."""
    lines = []
    for entry in summary.measured("latency"):
        cells = latency_cells(entry)
        lines.append(f"  latency {figure_label(entry)}: append {cells['append']} ms ({cells['append_ratio']} the "
                     f"floor at p50 / p95), load {cells['load']} ms ({cells['load_ratio']})")
    for entry in summary.measured("footprint"):
        cells = footprint_cells(entry)
        lines.append(f"  footprint {figure_label(entry)}: {cells['per_message']} per message ({cells['content']} of "
                     f"content, {cells['overhead']}); {cells['growth']}")
    return lines


def render_markdown(summary: RunSummary) -> str:
    """summary.md: totals, conformance level, the matrix and the first failures, under 1 MiB."""
    lines = [f"## Memory regression: {summary.status}", ""]
    if summary.message:
        lines += ["**" + _md_escape(summary.message.splitlines()[0]) + "**", "",
                  "```text", _md_block(summary.message), "```", ""]
    if summary.backend_warning:
        lines += [f"> ⚠️ {_md_escape(summary.backend_warning)}", ""]
    differences = summary.engine_differences() if summary.engines else []
    if differences:
        lines += [f"> {DIFFERS_MARK}**The engines differ on {len(differences)} scenarios:**"]
        lines += [f"> - `{_md_escape(d['case']).replace('`', '')}`: {_md_escape(d['message'])}"
                  for d in differences[:FAILURES_IN_SUMMARY]]
        if len(differences) > FAILURES_IN_SUMMARY:
            lines.append(f"> - ... {len(differences) - FAILURES_IN_SUMMARY} more in summary.json")
        lines.append("")
    lines += [
        f"- Store: `{_visible(summary.store or '(none)').replace('`', '')}`",
        f"- Capabilities: {', '.join(summary.capabilities) or 'unknown'}",
        *([f"- Shape: {_md_escape(summary.shape)}"] if summary.shape else []),
        *([f"- Parameters the suite does not fill: `{_visible(summary.unfilled).replace('`', '')}`"]
          if summary.unfilled else []),
        *(f"- Observed: {_md_escape(text)}" for text in summary.observations),
        f"- Conformance level: **{summary.conformance_level}**",
        f"- Redis: {_md_escape(summary.backend or 'not started')}",
        f"- Window sizes: {', '.join(map(str, summary.window_sizes)) or NO_POINT}",
        f"- Window policy: {summary.window_policy or NO_POINT}",
        *([f"- Groups: {describe_groups(summary.groups)}"] if summary.groups else []),
    ]
    for profile in summary.profiles:
        lines.append(f"- Profile `{profile['name']}`: budget {profile['max_tokens']} tokens, "
                     f"counter {_md_escape(profile['counter'])}")
    if summary.results:
        lines += ["", headline(summary), ""]
        columns, rows = summary.matrix()
        if summary.engines:
            lines += [f"Each cell: the outcome on {engines_line(summary)}, in that order "
                      f"({DIFFERS_MARK}the verdicts differ).", ""]
        lines.append("| group | scenario | " + " | ".join(_md_escape(c) for c in columns) + " |")
        lines.append("|---|---|" + "---|" * len(columns))
        for group, scenario, cells in rows:
            marks = [("" if c not in cells else engine_cell(cells[c], OUTCOME_MARK, " ") if summary.engines
                      else OUTCOME_MARK[cells[c]]) for c in columns]
            lines.append(f"| {group} | `{scenario}` | " + " | ".join(marks) + " |")
    lines += render_figures_markdown(summary)
    if summary.leftovers:
        lines += ["", "**Processes the store left running after the run** (killed): "
                  + ", ".join(f"`{_visible(text).replace('`', '')}`" for text in summary.leftovers)]
    if summary.keys_without_ttl:
        shown = summary.keys_without_ttl[:20]
        lines += ["", f"Keys left without a TTL ({len(summary.keys_without_ttl)}): "
                  + ", ".join(f"`{_md_escape(k).replace('`', '')}`" for k in shown)
                  + (" ..." if len(summary.keys_without_ttl) > len(shown) else "")]
    warnings = summary.warnings()
    if warnings:
        lines += ["", f"### Warnings ({len(warnings)}: costs and transient effects; they fail only with --strict)", ""]
        lines += [f"- ⚠️ **{_md_escape(w['nodeid'])}** ({w['guarantee']}): {_md_escape(w['text'])}"
                  for w in warnings[:FINDINGS_SHOWN]]
        if len(warnings) > FINDINGS_SHOWN:
            lines.append(f"- ... {len(warnings) - FINDINGS_SHOWN} more in summary.json")
    findings = summary.findings()
    if findings:
        lines += ["", "### Findings", ""]
        lines += [f"- **{_md_escape(nodeid)}**: {_md_escape(text)}" for nodeid, text in findings[:FINDINGS_SHOWN]]
        if len(findings) > FINDINGS_SHOWN:
            lines.append(f"- ... {len(findings) - FINDINGS_SHOWN} more in summary.json")
    failures = summary.failures()
    if failures:
        lines += ["", f"### First failures ({min(len(failures), FAILURES_IN_SUMMARY)} of {len(failures)})", ""]
        for result in failures[:FAILURES_IN_SUMMARY]:
            lines += [f"**{_md_escape(result.nodeid)}**: {_md_escape(result.message)}", ""]
            if result.details:
                lines += ["<details><summary>expected against actual</summary>", "", "```text",
                          _md_block(result.details), "```", "</details>", ""]
    text = "\n".join(lines) + "\n"
    if len(text.encode()) > SUMMARY_MD_LIMIT:
        cut = text.encode()[:SUMMARY_MD_LIMIT].decode(errors="ignore")
        text = cut + "\n\n_(summary cut at 1 MiB; the HTML report and junit.xml hold everything)_\n"
    return text


def render_listing(summary: RunSummary) -> str:
    """What ``--list`` prints: the store's capabilities (and how to claim the missing ones), the
    window sizes and profiles, and each scenario that would run or be skipped, with the reason."""
    where = f" (defined at {summary.store_file}:{summary.store_line})" if summary.store_file else ""
    lines = [f"store {summary.store}{where}", *([f"shape: {summary.shape}"] if summary.shape else []),
             f"capabilities: {', '.join(summary.capabilities) or 'none'}"]
    lines += [f"  lacks {spec.capability}: {spec.missing}" for spec in REGISTRY.values()
              if spec.capability.value not in summary.capabilities]
    lines += observed_lines(summary.unfilled, summary.observations)
    lines += [f"left running after the run, killed: {text}" for text in summary.leftovers]
    if summary.backend:
        lines.append(f"redis {summary.backend}")
    lines.append(f"window sizes: {', '.join(map(str, summary.window_sizes))}")
    lines.append(f"window policy: {summary.window_policy}")
    lines.append(f"groups: {describe_groups(summary.groups)}")
    lines += [f"profile {p['name']}: {p['max_tokens']} tokens, counter {p['counter']}" for p in summary.profiles]
    would_run = [r for r in summary.results if r.message == LISTED_NOT_RUN]
    lines.append(f"scenarios: {len(would_run)} would run, {len(summary.results) - len(would_run)} "
                 "would be skipped")
    lines += [f"  run   {r.nodeid}" if r.message == LISTED_NOT_RUN else f"  skip  {r.nodeid}: {r.message}"
              for r in summary.results]
    return _visible("\n".join(lines))


def observed_lines(unfilled: str, observations: list[str]) -> list[str]:
    """The store's unfilled parameters and what was observed of it (:mod:`.observe`), a line each:
    in the run's header, its terminal summary and --list."""
    filled = [f"parameters the suite does not fill (they keep their defaults): {unfilled}"]
    return [*(filled if unfilled else []), *(f"observed: {text}" for text in observations)]


def render_terminal(summary: RunSummary) -> str:
    """The one-screen summary printed at the end of a run."""
    lines = [f"memory regression: {summary.status}"]
    if summary.message:
        lines.append(summary.message)
    if summary.backend_warning:
        lines.append(f"WARNING: {summary.backend_warning}")
    if summary.capabilities:
        lines.append(f"store {summary.store}  [{', '.join(summary.capabilities)}]")
    if summary.shape:
        lines.append(f"shape {summary.shape}")
    lines += observed_lines(summary.unfilled, summary.observations)
    lines += [f"left running after the run, killed: {text}" for text in summary.leftovers]
    if summary.backend:
        lines.append(f"redis {summary.backend}")
    if summary.window_sizes:
        lines.append(f"window sizes {','.join(map(str, summary.window_sizes))}, policy {summary.window_policy}")
    if summary.groups:
        lines.append(f"groups {describe_groups(summary.groups)}")
    for profile in summary.profiles:
        lines.append(f"profile {profile['name']}: {profile['max_tokens']} tokens, {profile['counter']}")
    differences = summary.engine_differences() if summary.engines else []
    if differences:
        lines.append(f"THE ENGINES DIFFER on {len(differences)} scenarios:")
        lines += [f"  {DIFFERS_MARK}{d['case']}: {d['message']}" for d in differences[:FAILURES_IN_SUMMARY]]
        if len(differences) > FAILURES_IN_SUMMARY:
            lines.append(f"  ... {len(differences) - FAILURES_IN_SUMMARY} more in summary.json")
    if summary.results:
        lines.append(headline(summary))
        columns, rows = summary.matrix()
        if summary.engines:
            lines.append(f"each cell: the outcome on {engines_line(summary)}, in that order "
                         f"({DIFFERS_MARK}the verdicts differ)")
            texts = [[engine_cell(cells[c], OUTCOME_WORD, "/") if c in cells else "" for c in columns]
                     for _g, _s, cells in rows]
        else:
            texts = [[OUTCOME_WORD[cells[c]] if c in cells else "" for c in columns] for _g, _s, cells in rows]
        pad = 2 if summary.engines else 0   # "pass/skip" is wider than a column name
        widths = [max(6, len(c), *(len(row[i]) + pad for row in texts)) for i, c in enumerate(columns)]
        width = max(len(s) for _g, s, _c in rows)
        lines.append(" " * (width + 2) + "  ".join(f"{c:>{w}}" for c, w in zip(columns, widths)))
        for (_group, scenario, _cells), row in zip(rows, texts):
            lines.append(f"  {scenario:<{width}}" + "  ".join(f"{t:>{w}}" for t, w in zip(row, widths)))
    for result in summary.failures()[:FAILURES_IN_SUMMARY]:
        lines.append(f"  {OUTCOME_WORD[result.outcome]} {result.nodeid}: {result.message}")
    lines += [f"  warning ({w['guarantee']}) {w['nodeid']}: {w['text']}" for w in summary.warnings()[:FINDINGS_SHOWN]]
    lines += [f"  finding {nodeid}: {text}" for nodeid, text in summary.findings()[:FINDINGS_SHOWN]]
    lines += render_figures_terminal(summary)
    for name, path in summary.report_files.items():
        lines.append(f"{name}: {path}")
    return _visible("\n".join(lines))


def _write(path: Path, text: str) -> None:
    """Write beside ``path`` and rename over it: a reader sees the old file or the new one, and a
    symlink at ``path`` is replaced, never followed."""
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    try:
        partial.write_text(text, encoding="utf-8")
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)


def error_junit(summary: RunSummary) -> str:
    """junit.xml for a run that judged no scenario: one errored case saying why."""
    from junitparser import Error, JUnitXml, TestCase, TestSuite

    message = xml_safe(summary.message or summary.status.value)
    case = TestCase("configuration", classname="memory_regression")
    error = Error(message=message.splitlines()[0] if message else "", type_=summary.status.value)
    error.text = message
    case.result = [error]
    suite = TestSuite("memory-regression")
    suite.add_testcase(case)
    suite.update_statistics()
    xml = JUnitXml()
    xml.add_testsuite(suite)
    return _xml_text(xml._elem)


def _xml_text(root: ElementTree.Element) -> str:
    return "<?xml version='1.0' encoding='utf-8'?>\n" + ElementTree.tostring(root, encoding="unicode")


def relative_path(path: str | None, root: Path) -> str | None:
    """``path`` relative to ``root``, or None when it lies outside (or there is none)."""
    if not path:
        return None
    try:
        return Path(path).resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return None


def suite_name(summary: RunSummary) -> str:
    """The junit test suite's name: the matrix point the run covered (window sizes and policy,
    profiles), so that the junit files of a matrix of runs, merged, still say where each case ran."""
    if not summary.window_sizes:   # stopped before the settings were read
        return "memory-regression"
    sizes = ",".join(map(str, summary.window_sizes))
    profiles = ",".join(profile["name"] for profile in summary.profiles)
    return f"memory-regression (window sizes {sizes}; window policy {summary.window_policy}; profiles {profiles})"


def place_junit_cases(summary: RunSummary, text: str, source_root: Path | None) -> str:
    """Name junit.xml's suite after the matrix point, and point every test case at the store's
    definition (``file`` relative to ``source_root``, ``line``): where the action's annotations
    point, so that reporter actions place theirs in the user's code, not in the suite's files.
    Takes the text pytest wrote and returns the new one."""
    root = ElementTree.fromstring(text)
    suites = [root] if root.tag == "testsuite" else root.iter("testsuite")
    source = relative_path(summary.store_file, source_root) if source_root is not None else None
    differing = {d["case"]: d["message"] for d in summary.engine_differences()} if summary.engines else {}
    difference = {_junit_key(r.nodeid): differing[r.case] for r in summary.results if r.case in differing}
    for suite in suites:
        suite.set("name", suite_name(summary))
        for case in suite.iter("testcase"):
            if source:
                case.set("file", source)
                if summary.store_line:
                    case.set("line", str(summary.store_line))
            message = difference.get((case.get("classname", "").rsplit(".", 1)[-1], case.get("name")))
            if message:
                properties = case.find("properties")
                if properties is None:
                    properties = ElementTree.SubElement(case, "properties")
                ElementTree.SubElement(properties, "property", name="engine_difference", value=message)
    return _xml_text(root)


def _junit_key(nodeid: str) -> tuple[str, str]:
    """How junit.xml names a scenario: its module (the last part of ``classname``) and its name."""
    path, _, name = nodeid.partition("::")
    return path.rsplit("/", 1)[-1].removesuffix(".py"), name


def write_all(summary: RunSummary, paths: ReportPaths, redactor: Redactor, source_root: Path | None = None,
              pytest_junit: Path | None = None) -> list[str]:
    """summary.json and summary.md, and junit.xml: the one pytest wrote at ``pytest_junit`` (in the
    run's own directory) with its cases placed at the store's definition under ``source_root``, or
    one saying why no scenario was judged. Every file is replaced in one step, so that a run sharing
    the report directory never reads or leaves a half-written one. The paths written go into the
    summary first. Each file is tried whatever became of the others; returns those that could not
    be written, each with why (a full disk: "summary.json: File too large")."""
    unwritten: list[str] = []

    def attempt(path: Path, render: Callable[[], str]) -> None:
        try:
            _write(path, render())
        except OSError as exc:
            unwritten.append(f"{path.name}: {exc.strerror or exc}")
        except ElementTree.ParseError as exc:   # pytest's junit.xml, cut short by the same cause
            unwritten.append(f"{path.name}: pytest's junit.xml could not be read ({exc})")

    try:
        paths.directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return [f"{paths.directory}: {exc.strerror or exc}"]
    if not summary.results:
        attempt(paths.junit, lambda: error_junit(summary))
    elif pytest_junit is not None and pytest_junit.is_file():
        attempt(paths.junit, lambda: place_junit_cases(summary, pytest_junit.read_text(encoding="utf-8"), source_root))
    summary.report_files = {**written_reports(paths), "summary_md": str(paths.summary_md),
                            "summary_json": str(paths.summary_json)}
    attempt(paths.summary_json, lambda: redactor.text(json.dumps(summary.to_json(), indent=2, ensure_ascii=False)))
    attempt(paths.summary_md, lambda: redactor.text(render_markdown(summary)))
    return unwritten


def unwritten_verdict(summary: RunSummary, unwritten: list[str]) -> str:
    """The message of a run whose reports could not all be written: which, why, what to do, and
    the verdict they would have carried."""
    return (f"the reports could not all be written ({'; '.join(unwritten)}): free space on that disk, or "
            f"raise the file-size limit (ulimit -f). The run itself was {summary.status}: "
            f"{headline(summary)}" + (f"; {summary.message}" if summary.message else ""))
