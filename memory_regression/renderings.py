"""The text renderings of a run's summary: summary.md, the terminal summary, the ``--list``
listing, and the cells and lines that report.html shares. Markdown gets no raw control characters
and no pipe that would break a table, and summary.md stays under GitHub's 1 MiB job-summary limit."""

from __future__ import annotations

import html
import re

from .capabilities import REGISTRY
from .groups import describe_groups
from .results import LATENCY_OPERATIONS, LISTED_NOT_RUN, NO_POINT, Outcome, RunSummary

SUMMARY_MD_LIMIT = 1024 * 1024 - 4096   # GitHub's job summary takes 1 MiB per step
FAILURES_IN_SUMMARY = 10
FINDINGS_SHOWN = 20          # findings listed in summary.md and the terminal (summary.json has all)
DETAILS_LIMIT = 4000                     # characters of one failure's details in summary.md

OUTCOME_MARK = {Outcome.PASSED: "✅", Outcome.FAILED: "❌", Outcome.ERROR: "💥", Outcome.SKIPPED: "⏭️"}
OUTCOME_WORD = {Outcome.PASSED: "pass", Outcome.FAILED: "FAIL", Outcome.ERROR: "ERROR", Outcome.SKIPPED: "skip"}
DIFFERS_MARK = "⚠️ "     # a scenario whose verdict differs between engines
# control characters a Markdown page should not show raw
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


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


def unwritten_verdict(summary: RunSummary, unwritten: list[str]) -> str:
    """The message of a run whose reports could not all be written: which, why, what to do, and
    the verdict they would have carried."""
    return (f"the reports could not all be written ({'; '.join(unwritten)}): free space on that disk, or "
            f"raise the file-size limit (ulimit -f). The run itself was {summary.status}: "
            f"{headline(summary)}" + (f"; {summary.message}" if summary.message else ""))
