"""What the run adds to pytest-html's report.html, through its hooks: the block above the results
(the verdict banner, the run's facts, the matrix and its legend), each failure's diagnosis and
aligned expected-against-actual histories on its row, and skip reasons as plain text. Stored content
is always escaped, so a message holding HTML shows as text, and long lines wrap.
"""

from __future__ import annotations

import html
from typing import Any, Callable

import pytest

from . import baseline
from ..groups import describe_groups
from ..reference.diagnosis import Listing
from .phase_report import Verdict, read
from ..reference.model import messages
from .figures import LATENCY_OPERATIONS, NO_POINT, PERCENTILES, FootprintFigure, LatencyFigure, size_text
from .renderings import engines_line, headline, verdicts_differ
from .results import RunSummary, ScenarioResult, Status

STYLE = """<style>
body {display: flex; flex-direction: column}
body > * {order: 1; min-width: 0}
body > #title, body > #title + p {order: 0}
body > #environment-header, body > #environment, body > footer {order: 2}
.memory-first-failures {color: black}
.memory-failure {border-left: 4px solid #b00; padding: 0 10px; margin: 6px 0}
.memory-failure pre {max-height: 14em; overflow: auto; background: #f6f6f6; padding: 4px; margin: 4px 0}
.memory-verdict {border-left: 8px solid #b60; background: #fff4e0; padding: 4px 12px; margin: 8px 0}
.memory-verdict.passed {border-color: #060; background: #eaf6ea}
.memory-verdict.failed {border-color: #b00; background: #fbeaea}
.memory-status {font-size: 1.6em; font-weight: bold; margin: 4px 0}
.summary .run-count {display: none}
.memory-matrix td, .memory-matrix th {padding: 2px 8px; text-align: left}
.memory-matrix .passed {color: #060}
.memory-matrix .failed, .memory-matrix .error {color: #b00; font-weight: bold}
.memory-matrix .skipped {color: #888}
.memory-matrix a, .memory-failure a {color: inherit}
.memory-warning {color: #b00}
.memory-differs {border-left: 8px solid #b00; background: #fbeaea; padding: 4px 12px; margin: 8px 0; color: black}
.memory-matrix td.differs {background: #fdd}
.memory-matrix .engine {margin-right: 6px}
.memory-verdict, .memory-diagnosis, .memory-diagnosis pre, .memory-failure, .memory-failure pre, .logwrapper .log
  {white-space: pre-wrap; overflow-wrap: anywhere}
#results-table .memory-diff {table-layout: fixed; width: 100%; font-family: monospace; color: black}
#results-table .memory-diff td, #results-table .memory-diff th
  {white-space: pre-wrap; overflow-wrap: anywhere; vertical-align: top; padding: 1px 6px; border: none}
#results-table .memory-diff .mark {width: 3em}
#results-table .memory-diff .number {width: 4em; text-align: right; color: #888}
#results-table .memory-diff tr.differs {background: #fdd}
#results-table .memory-diff tr.differs .mark {color: #b00; font-weight: bold}
.memory-charts {display: flex; flex-wrap: wrap; gap: 12px}
.memory-charts figure {margin: 0; max-width: 100%}
.memory-charts svg {max-width: 100%; height: auto; font-family: sans-serif; font-size: 12px}
.memory-figures td, .memory-figures th {padding: 2px 8px; text-align: left}
</style>"""

CHART_WIDTH = 620        # pixels of an inline SVG chart (it shrinks to the page)
LABEL_WIDTH = 125        # ... of its row labels
BAR_ROOM = 330           # ... of its longest bar
STORE_COLOUR, FLOOR_COLOUR, BOUND_COLOUR = "#36c", "#aaa", "#b00"


def html_summary(summary: RunSummary) -> list[str]:
    """The block the run adds above pytest-html's results, which its style moves above pytest-html's
    environment too, so that the report opens on the reason: the verdict banner (which replaces
    pytest-html's "N tests took" line: that counts only passes and failures, not skips and errors),
    the first failures, each with its reason and its expected against actual, the run's facts, the
    matrix (each cell a link to its scenario's row in the results table) and a legend for it."""
    kind = summary.status.value if summary.status in (Status.PASSED, Status.FAILED) else "other"
    banner = [f"<p class='memory-status'>{html.escape(summary.status.value)}</p>"]
    if summary.results:
        banner.append(f"<p>{html.escape(headline(summary))}; the run took {summary.duration_s:.0f} s</p>")
    if summary.message:
        banner.append(f"<p>{html.escape(summary.message)}</p>")
    parts = [STYLE, "<div class='memory-summary'>", f"<div class='memory-verdict {kind}'>{''.join(banner)}</div>",
             *first_failures(summary)]
    if summary.backend_warning:
        parts.append(f"<p class='memory-warning'><b>Warning:</b> {html.escape(summary.backend_warning)}</p>")
    differences = summary.engine_differences() if summary.engines else []
    if differences:
        parts.append(f"<div class='memory-differs'><p><b>The engines differ on {len(differences)} scenarios:</b></p>"
                     "<ul>" + "".join(f"<li><b>{html.escape(d['case'])}</b>: {html.escape(d['message'])}</li>"
                                      for d in differences) + "</ul></div>")
    parts += [_facts(summary), *_matrix(summary), *figures_html(summary)]
    if summary.comparison is not None:
        parts.append(f"<div class='memory-comparison'><p><b>{html.escape(baseline.headline(summary.comparison))}</b>"
                     "</p><ul>" + "".join(f"<li><b>{html.escape(words)}</b> ({len(items)}): "
                                         + ", ".join(html.escape(item) for item in items) + "</li>"
                                         for words, items in baseline.sections(summary.comparison))
                     + "</ul>" + _figure_changes(summary.comparison["figures"]) + "</div>")
    return [*parts, *_notes(summary), "</div>"]


def _facts(summary: RunSummary) -> str:
    """The run's facts: the store as bound and observed, the server, the groups and the profiles."""
    items = [("Store", summary.store), ("Shape", summary.shape), ("Capabilities", ", ".join(summary.capabilities)),
             ("Conformance level", summary.conformance_level), ("Redis", summary.backend),
             ("Groups", describe_groups(summary.groups) if summary.groups else None),
             ("Parameters the suite does not fill", summary.unfilled or None),
             *(("Observed", text) for text in summary.observations),
             *(("Proposed", text) for text in summary.proposals),
             *(("Left running after the run, killed", text) for text in summary.leftovers)]
    items += [(f"Profile {p['name']}", f"budget {p['max_tokens']} tokens, counter {p['counter']}")
              for p in summary.profiles]
    return "<ul>" + "".join(f"<li><b>{html.escape(k)}:</b> {html.escape(str(v))}</li>" for k, v in items if v) + "</ul>"


def _matrix(summary: RunSummary) -> list[str]:
    """The matrix, each cell a link to its scenario's row in the results table, and its legend."""
    columns, rows = summary.matrix()
    if not rows:
        return []
    nodeids = {(r.scenario, r.point or NO_POINT, r.engine): r.nodeid for r in summary.results}
    parts = ["<table class='memory-matrix'><tr><th>group</th><th>scenario</th>"
             + "".join(f"<th>{html.escape(c)}</th>" for c in columns) + "</tr>"]
    for group, scenario, cells in rows:
        parts.append(f"<tr><td>{html.escape(group)}</td><td>{html.escape(scenario)}</td>"
                     + "".join(_cell(cells.get(c), bool(summary.engines),
                                     lambda engine, c=c, scenario=scenario: nodeids.get((scenario, c, engine)))
                               for c in columns) + "</tr>")
    return [*parts, "</table>", _legend(columns, summary)]


def _notes(summary: RunSummary) -> list[str]:
    """The warnings and the findings, each list whole."""
    parts = []
    warnings = summary.warnings()
    if warnings:
        parts.append("<p><b>Warnings</b> (costs and transient effects, not lost memory: they fail only with "
                     "--strict):</p><ul class='memory-warnings'>" + "".join(
                         f"<li><b>{html.escape(w['nodeid'])}</b> ({html.escape(w['guarantee'])}): "
                         f"{html.escape(w['text'])}</li>" for w in warnings) + "</ul>")
    findings = summary.findings()
    if findings:
        parts.append("<p><b>Findings</b> (measured by the scenarios, whether they passed or failed):</p>"
                     "<ul class='memory-findings'>" + "".join(
                         f"<li><b>{html.escape(nodeid)}</b>: {html.escape(text)}</li>" for nodeid, text in findings)
                     + "</ul>")
    return parts


def figures_html(summary: RunSummary) -> list[str]:
    """The latency and footprint figures: a chart per latency figure (each percentile of append and
    load beside the Redis floor's) and per footprint figure (the session's bytes after its first
    messages and after the rest, against the bound), drawn as inline SVG, so that the report stays
    one self-contained file that needs no script; and a table of the footprint figures."""
    parts = []
    latency, footprint = summary.figures("latency"), summary.figures("footprint")
    if latency:
        parts.append("<h3>Latency</h3><p>Milliseconds: the store's append and load (blue) against the raw Redis "
                     "floor of the same sizes (grey, RPUSH and LRANGE through redis-py on the same server, in the "
                     "same run); the ratio is the store's percentile over the floor's.</p>")
        parts.append("<div class='memory-charts'>" + "".join(_latency_chart(figure) for figure in latency) + "</div>")
    if footprint:
        parts.append("<h3>Storage footprint</h3><p>MEMORY USAGE (SAMPLES 0) of the session's keys after its first "
                     "messages (a full window; 10 under a roomy one) and after the rest (ten windows' worth; twice "
                     "the messages); the red line is the most allowed.</p>")
        parts.append("<table class='memory-figures memory-footprint'><tr><th>where</th><th>messages</th><th>bytes</th>"
                     "<th>per message</th><th>content per message</th><th>overhead</th><th>growth</th></tr>" + "".join(
                         "<tr>" + "".join(f"<td>{html.escape(text)}</td>" for text in figure.markdown_cells()) + "</tr>"
                         for figure in footprint) + "</table>")
        charts = [_footprint_chart(figure) for figure in footprint if figure.bytes_after is not None]
        if charts:
            parts.append("<div class='memory-charts'>" + "".join(charts) + "</div>")
    return parts


def _bar(y: float, width: float, colour: str, text: str) -> str:
    """A horizontal bar from the label column, ``text`` after its end."""
    width = max(width, 1.0)
    return (f"<rect x='{LABEL_WIDTH}' y='{y:.0f}' width='{width:.1f}' height='11' fill='{colour}'/>"
            f"<text x='{LABEL_WIDTH + width + 4:.1f}' y='{y + 10:.0f}'>{html.escape(text)}</text>")


def _latency_chart(figure: LatencyFigure) -> str:
    """One latency figure as an SVG bar chart: per operation and percentile, the store's bar over
    the floor's, each labelled with its milliseconds, the store's with its ratio to the floor."""
    rows = [(operation, name) for operation in LATENCY_OPERATIONS for name in PERCENTILES]
    values = [figure.operation(o).ms(n, floor) or 0.0 for o, n in rows for floor in (False, True)]
    scale = BAR_ROOM / max(max(values), 1e-9)
    title = f"latency at {figure.label}: {'?' if figure.samples is None else figure.samples} samples of each"
    height = 36 + 30 * len(rows)
    body = [f"<text x='0' y='14' font-weight='bold'>{html.escape(title)}</text>"]
    for index, (operation, name) in enumerate(rows):
        found, y = figure.operation(operation), 26 + 30 * index
        own, floor = found.ms(name) or 0.0, found.ms(name, floor=True) or 0.0
        body.append(f"<text x='0' y='{y + 16}'>{html.escape(f'{operation} {name}')}</text>")
        body.append(_bar(y, own * scale, STORE_COLOUR, f"{own:.3f} ms ({found.ratio(name)}× the floor)"))
        body.append(_bar(y + 13, floor * scale, FLOOR_COLOUR, f"floor {floor:.3f} ms"))
    body.append(f"<text x='0' y='{height - 4}'>budget (p95): {html.escape(figure.cells()['budget'])}</text>")
    return (f"<figure><svg class='memory-latency-chart' xmlns='http://www.w3.org/2000/svg' role='img' "
            f"viewBox='0 0 {CHART_WIDTH} {height}' width='{CHART_WIDTH}' height='{height}'>"
            f"<title>{html.escape(title)}</title>{''.join(body)}</svg></figure>")


def _footprint_chart(figure: FootprintFigure) -> str:
    """One footprint figure as an SVG bar chart: the session's bytes after the first messages and
    after all of them, and the bound as a red line."""
    first, after, bound = figure.bytes, figure.bytes_after or 0, figure.bound or 0
    scale = BAR_ROOM / max(after, first * bound, 1)
    title = f"footprint at {figure.label}: growth {figure.growth}× (at most {bound}×)"
    colour = STORE_COLOUR if figure.bounded else BOUND_COLOUR
    limit = LABEL_WIDTH + first * bound * scale
    body = [f"<text x='0' y='14' font-weight='bold'>{html.escape(title)}</text>",
            f"<text x='0' y='36'>after {int(figure.messages or 0)} appends</text>",
            _bar(26, first * scale, STORE_COLOUR, size_text(first)),
            f"<text x='0' y='62'>after {int(figure.appends_after or 0)} appends</text>",
            _bar(52, after * scale, colour, size_text(after)),
            f"<line x1='{limit:.1f}' y1='22' x2='{limit:.1f}' y2='68' stroke='{BOUND_COLOUR}' stroke-dasharray='4 2'/>"]
    return (f"<figure><svg class='memory-footprint-chart' xmlns='http://www.w3.org/2000/svg' role='img' "
            f"viewBox='0 0 {CHART_WIDTH} 76' width='{CHART_WIDTH}' height='76'>"
            f"<title>{html.escape(title)}</title>{''.join(body)}</svg></figure>")


def _figure_changes(changes: list[dict]) -> str:
    """The figures both runs measured, each with its change and whether it is beyond the noise."""
    if not changes:
        return ""
    rows = [baseline.FIGURE_COLUMNS, *map(baseline.figure_change_cells, changes)]
    return ("<table class='memory-figure-changes'>"
            + "".join("<tr>" + "".join(f"<{tag}>{html.escape(cell)}</{tag}>" for cell in row) + "</tr>"
                      for tag, row in zip(["th", *["td"] * len(changes)], rows)) + "</table>")


def _cell(cell: Any, several: bool, nodeid: Callable[[str], str | None]) -> str:
    """A matrix cell: the outcome, or with several engines the outcome on each, side by side, each a
    link to its row in pytest-html's results table (the anchor that row carries: :data:`ROW_ANCHOR` and its node id)."""
    if cell is None:
        return "<td class='none'></td>"
    if not several:
        return f"<td class='{cell}'>{_to_row(nodeid(''), str(cell))}</td>"
    marked = " differs" if verdicts_differ(cell) else ""
    return (f"<td class='engines{marked}'>" + "".join(
        f"<span class='engine {outcome}' title='{html.escape(engine)}'>{_to_row(nodeid(engine), str(outcome))}</span>"
        for engine, outcome in cell.items()) + "</td>")


ROW_ANCHOR = "scenario-"    # the id of a scenario's first row in the results table, before its node id


def _to_row(nodeid: str | None, text: str) -> str:
    """``text`` as a link to the results table's row of ``nodeid`` (its details: the log, the diagnosis)."""
    escaped = html.escape(text)
    return f"<a href='#{html.escape(ROW_ANCHOR + nodeid, quote=True)}'>{escaped}</a>" if nodeid else escaped


FAILURES_FIRST = 3          # failures report.html shows, with their reasons, right under the verdict
MESSAGE_SHOWN = 400         # characters of each one's reason there (its row has all of it) ...
DETAILS_SHOWN = 4000        # ... and of its expected against actual (shown in a box of a few lines that scrolls)


def first_failures(summary: RunSummary) -> list[str]:
    """The first failures, each with its reason, its expected against actual, and a link to its row."""
    failures = summary.failures()
    if not failures:
        return []
    shown = failures[:FAILURES_FIRST]
    parts = [f"<div class='memory-first-failures'><h3>First failures ({len(shown)} of {len(failures)})</h3>"]
    for result in shown:
        parts.append(f"<div class='memory-failure'><p><b>{_to_row(result.nodeid, result.nodeid)}</b>: "
                     f"{html.escape(_shortened(result.message, MESSAGE_SHOWN))}</p>"
                     f"{_pre(_shortened(result.details, DETAILS_SHOWN))}</div>")
    return [*parts, "</div>"]


def _legend(columns: list[str], summary: RunSummary) -> str:
    """What the matrix's columns and cells mean."""
    windows = [c for c in columns if c.startswith("N=")]
    profiles = [p["name"] for p in summary.profiles if p["name"] in columns]
    entries = [f"{NO_POINT}: scenarios that run once, not per window or profile"] if NO_POINT in columns else []
    if summary.engines:
        entries.append(f"each cell: the outcome on {engines_line(summary)}, in that order; a red cell: the verdicts "
                       "differ between engines")
    if windows:
        entries.append(f"{', '.join(windows)}: count windows (max_messages)")
    if profiles:
        entries.append(f"{', '.join(profiles)}: model profiles (token budgets)")
    entries += ["a blank cell: the scenario does not run at that window or profile",
                "skipped: the store lacks a capability the scenario needs (the reason is on its row below)",
                "error: the scenario could not be set up or torn down"]
    return ("<p class='memory-legend'><b>Legend:</b> "
            + "; ".join(html.escape(entry) for entry in entries) + ".</p>")


def attach_diagnosis(report: Any, result: ScenarioResult, verdict: Verdict | None) -> None:
    """Put a failure's diagnosis on its row of report.html, with its histories as an aligned diff
    when the worker sent them (the verdict's ``listing``), else its details as text."""
    try:
        from pytest_html import extras
    except ImportError:
        return
    if verdict is not None and verdict.listing is not None:
        body = _diff(verdict.listing) + _pre(verdict.notes)
    else:
        body = _pre(result.details)
    block = f"<div class='memory-diagnosis'><p><b>{html.escape(result.message)}</b></p>{body}</div>"
    report.extras = [*getattr(report, "extras", []), extras.html(block)]


def _shortened(text: str, limit: int) -> str:
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters: the whole text is on its row)"


def _pre(text: str) -> str:
    return f"<pre>{html.escape(text)}</pre>" if text else ""


def _diff(listing: Listing) -> str:
    """The listing as a table of mark, number and message on each side; class ``differs`` on the
    rows that differ."""
    def row(differs: bool, i: Any, want: str, j: Any, got: str) -> str:
        cells = "".join(f"<td class='{name}'>{html.escape(str(cell))}</td>" for name, cell in
                        (("mark", "!!" if differs else ""), ("number", i), ("message", want),
                         ("number", j), ("message", got)))
        return f"<tr class='differs'>{cells}</tr>" if differs else f"<tr>{cells}</tr>"

    lines = ["<table class='memory-diff'><colgroup><col class='mark'><col class='number'><col>"
             "<col class='number'><col></colgroup>"
             f"<tr><th></th><th></th><th>expected ({messages(listing.expected)})</th><th></th>"
             f"<th>actual ({messages(listing.actual)})</th></tr>"]
    if listing.before:
        lines.append(row(False, "", f"... {listing.before} earlier rows equal", "", ""))
    for differs, i, want, j, got in listing.rows:
        lines.append(row(differs, i or "", want or "-", j or "", got or "-"))
    if listing.after:
        lines.append(row(False, "", f"... {listing.after} more rows", "", ""))
    return "".join(lines) + "</table>"


def plain_log(report: Any, log: list[str]) -> None:
    """pytest-html logs a skip as pytest's raw (file, line, reason) tuple: log the reason alone, as
    the worker's verdict words it. A failure whose histories the diagnosis shows as a table above
    the log (:func:`attach_diagnosis`) keeps its traceback in the log, without those histories again."""
    verdict = read(report).verdict
    if verdict is None or not log:
        return
    if report.skipped:
        log[0] = html.escape(verdict.message) + "\n"
    elif report.failed and verdict.listing is not None:
        shown = {line.strip() for line in verdict.listing.text().splitlines() if line.strip()}
        kept = [line for line in report.longreprtext.splitlines() if line.removeprefix("E").strip() not in shown]
        log[0] = html.escape("\n".join([*kept, "(the expected and actual histories are in the table above)"])) + "\n"


class HtmlHooks:
    """pytest-html's hooks for a run whose verdict is ``summary`` (the runner registers it): the
    title, the verdict and matrix above the table, and each row's log without what the row shows."""

    def __init__(self, summary: RunSummary):
        self.summary = summary
        self.anchored: set[str] = set()   # the scenarios whose first row has its anchor

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_table_row(self, report: pytest.TestReport, cells: list) -> None:
        """A scenario's first row carries the anchor the matrix and the first failures link to: pytest-html
        shows a row for its call, and for a setup or teardown that did not pass (a skip, an error)."""
        shown = report.when == "call" or not report.passed
        if shown and report.nodeid not in self.anchored and len(cells) > 1:
            self.anchored.add(report.nodeid)
            anchor = f"<a id='{html.escape(ROW_ANCHOR + report.nodeid, quote=True)}'></a>"
            cells[1] = cells[1].replace(">", f">{anchor}", 1)

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_report_title(self, report: Any) -> None:
        report.title = "Memory regression report"

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_summary(self, prefix: list, summary: list, postfix: list) -> None:
        prefix.extend(html_summary(self.summary))

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_table_html(self, report: pytest.TestReport, data: list) -> None:
        plain_log(report, data)
