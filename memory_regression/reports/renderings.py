"""The text renderings of a run's summary: summary.md, the terminal summary, the ``--list``
listing, and the cells and lines that report.html shares. Markdown gets no raw control characters
and no pipe that would break a table, and summary.md stays under GitHub's 1 MiB job-summary limit."""

from __future__ import annotations

import html
import re

from . import baseline
from ..contract.capabilities import REGISTRY
from ..groups import describe_groups
from .figures import KINDS, NO_POINT
from .results import LISTED_NOT_RUN, Outcome, RunSummary

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


# what Markdown reads as markup within a line of text: code, emphasis, strike-through, a table's cell ends, and
# links and images (which need "](" or "][": a bracket without them, as in node ids' [N=5], is left as it is,
# and so is an underscore inside a word)
_MARKUP = re.compile(r"([\\`*~|]|\](?=[(\[])|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9]))")
_LINE_ENDS = str.maketrans({"\n": " ", "\r": " "})


def _md_escape(text: str) -> str:
    """``text`` (a store's, a baseline's) as one line of text in Markdown: HTML and markup escaped, newlines
    made spaces, and an @mention broken (a zero-width space after the @), so that it notifies no one."""
    escaped = html.escape(_visible(text).translate(_LINE_ENDS), quote=False)
    return _MARKUP.sub(r"\\\1", escaped).replace("@", "@\u200b")


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


def render_figures_markdown(summary: RunSummary) -> list[str]:
    """summary.md's latency and footprint tables."""
    lines: list[str] = []
    for kind in KINDS:
        found = summary.figures(kind)
        if found:
            lines += ["", *found[0].MARKDOWN_HEAD]
            lines += [f"| {' | '.join(_md_escape(cell) for cell in figure.markdown_cells())} |" for figure in found]
    return lines


def render_figures_terminal(summary: RunSummary) -> list[str]:
    """One line per latency and footprint figure, for the terminal summary."""
    return [figure.terminal_line() for kind in KINDS for figure in summary.figures(kind)]


def render_markdown(summary: RunSummary) -> str:
    """summary.md: totals, conformance level, the matrix and the first failures, under 1 MiB."""
    lines = [f"## Memory regression: {summary.status}", ""]
    if summary.message:
        lines += ["**" + _md_escape(summary.message.splitlines()[0]) + "**", "",
                  "```text", _md_block(summary.message), "```", ""]
    if summary.backend_warning:
        lines += [f"> ⚠️ {_md_escape(summary.backend_warning)}", ""]
    lines += _md_differences(summary) + _md_header(summary) + _md_matrix(summary) + render_figures_markdown(summary)
    if summary.comparison is not None:
        lines += ["", *render_comparison_markdown(summary.comparison)]
    if summary.leftovers:
        lines += ["", "**Processes the store left running after the run** (killed): "
                  + ", ".join(f"`{_visible(text).replace('`', '')}`" for text in summary.leftovers)]
    if summary.keys_without_ttl:
        shown = summary.keys_without_ttl[:20]
        lines += ["", f"Keys left without a TTL ({len(summary.keys_without_ttl)}): "
                  + ", ".join(map(_md_code, shown))
                  + (" ..." if len(summary.keys_without_ttl) > len(shown) else "")]
    lines += _md_notes(summary) + _md_failures(summary)
    text = "\n".join(lines) + "\n"
    if len(text.encode()) > SUMMARY_MD_LIMIT:
        cut = text.encode()[:SUMMARY_MD_LIMIT].decode(errors="ignore")
        text = cut + "\n\n_(summary cut at 1 MiB; the HTML report and junit.xml hold everything)_\n"
    return text


def _md_differences(summary: RunSummary) -> list[str]:
    """The scenarios the engines gave different verdicts on, the first of them named."""
    differences = summary.engine_differences() if summary.engines else []
    if not differences:
        return []
    lines = [f"> {DIFFERS_MARK}**The engines differ on {len(differences)} scenarios:**"]
    lines += [f"> - `{_md_escape(d['case']).replace('`', '')}`: {_md_escape(d['message'])}"
              for d in differences[:FAILURES_IN_SUMMARY]]
    if len(differences) > FAILURES_IN_SUMMARY:
        lines.append(f"> - ... {len(differences) - FAILURES_IN_SUMMARY} more in summary.json")
    return lines + [""]


def _md_header(summary: RunSummary) -> list[str]:
    """What was run: the store, as bound and observed, the server, the windows, groups and profiles."""
    lines = [
        f"- Store: `{_visible(summary.store or '(none)').replace('`', '')}`",
        f"- Capabilities: {', '.join(summary.capabilities) or 'unknown'}",
        *([f"- Shape: {_md_escape(summary.shape)}"] if summary.shape else []),
        *([f"- Parameters the suite does not fill: `{_visible(summary.unfilled).replace('`', '')}`"]
          if summary.unfilled else []),
        *(f"- Observed: {_md_escape(text)}" for text in summary.observations),
        *(f"- Proposed: {_md_escape(text)}" for text in summary.proposals),
        f"- Conformance level: **{summary.conformance_level}**",
        f"- Redis: {_md_escape(summary.backend or 'not started')}",
        f"- Window sizes: {', '.join(map(str, summary.window_sizes)) or NO_POINT}",
        f"- Window policy: {summary.window_policy or NO_POINT}",
        *([f"- Groups: {describe_groups(summary.groups)}"] if summary.groups else []),
    ]
    return lines + [f"- Profile `{profile['name']}`: budget {profile['max_tokens']} tokens, "
                    f"counter {_md_escape(profile['counter'])}" for profile in summary.profiles]


def _md_matrix(summary: RunSummary) -> list[str]:
    """The totals, and a row per scenario, a column per window size or profile (each cell per engine)."""
    if not summary.results:
        return []
    lines = ["", headline(summary), ""]
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
    return lines


def _md_notes(summary: RunSummary) -> list[str]:
    """The warnings, then the findings, each list cut at FINDINGS_SHOWN."""
    lines: list[str] = []
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
    return lines


def _md_failures(summary: RunSummary) -> list[str]:
    """The first failures, each with its expected and actual histories folded under it."""
    failures = summary.failures()
    if not failures:
        return []
    lines = ["", f"### First failures ({min(len(failures), FAILURES_IN_SUMMARY)} of {len(failures)})", ""]
    for result in failures[:FAILURES_IN_SUMMARY]:
        lines += [f"**{_md_escape(result.nodeid)}**: {_md_escape(result.message)}", ""]
        if result.details:
            lines += ["<details><summary>expected against actual</summary>", "", "```text",
                      _md_block(result.details), "```", "</details>", ""]
    return lines


def render_listing(summary: RunSummary) -> str:
    """What ``--list`` prints: the store's capabilities (and how to claim the missing ones), the
    window sizes and profiles, and each scenario that would run or be skipped, with the reason."""
    where = f" (defined at {summary.store_file}:{summary.store_line})" if summary.store_file else ""
    lines = [f"store {summary.store}{where}", *([f"shape: {summary.shape}"] if summary.shape else []),
             f"capabilities: {', '.join(summary.capabilities) or 'none'}"]
    lines += [f"  lacks {spec.capability}: {spec.missing}" for spec in REGISTRY.values()
              if spec.capability.value not in summary.capabilities]
    lines += observed_lines(summary.unfilled, summary.observations, summary.proposals)
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


def observed_lines(unfilled: str, observations: list[str], proposals: list[str] = ()) -> list[str]:
    """The store's unfilled parameters, what was observed of it (:mod:`.observe`) and what its names say
    it has (:mod:`.proposals`), a line each: in the run's header, its terminal summary and --list."""
    filled = [f"parameters the suite does not fill (they keep their defaults): {unfilled}"]
    return [*(filled if unfilled else []), *(f"observed: {text}" for text in observations),
            *(f"proposed: {text}" for text in proposals)]


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
    lines += observed_lines(summary.unfilled, summary.observations, summary.proposals)
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
    if summary.comparison is not None:
        lines.append(baseline.headline(summary.comparison))
        lines += [f"  {words}: {', '.join(items[:FINDINGS_SHOWN])}" + (" ..." if len(items) > FINDINGS_SHOWN else "")
                  for words, items in baseline.sections(summary.comparison)]
    for name, path in summary.report_files.items():
        lines.append(f"{name}: {path}")
    return _visible("\n".join(lines))


def _md_code(text: str) -> str:
    """``text`` as inline code: on one line, with no backtick to end it early (markup, HTML and mentions are
    inert inside)."""
    return f"`{_visible(text).translate(_LINE_ENDS).replace('`', '').replace('|', '/')}`"


def render_comparison_markdown(comparison: dict) -> list[str]:
    """The comparison with a baseline at a glance, as summary.md (the job summary) and the pull
    request's comment show it: its headline, what changed, and every figure both runs measured."""
    lines = [f"### {_md_escape(baseline.headline(comparison))}", ""]
    found = baseline.sections(comparison)
    if found:
        lines += ["| what | count | cases |", "|---|---|---|"]
        lines += [f"| {words} | {len(items)} | " + ", ".join(map(_md_code, items[:FINDINGS_SHOWN]))
                  + (f" ... {len(items) - FINDINGS_SHOWN} more in summary.json" if len(items) > FINDINGS_SHOWN else "")
                  + " |" for words, items in found]
    elif comparison["compared"]:
        lines.append("Nothing changed: the same verdicts, level and warnings as in the baseline.")
    if comparison.get("figures"):
        lines += ["", "Figures both runs measured (latency as multiples of the Redis floor of its own run; a change "
                  "counts beyond what identical runs move it by):", "",
                  "| " + " | ".join(baseline.FIGURE_COLUMNS) + " |", "|---" * len(baseline.FIGURE_COLUMNS) + "|"]
        for change in comparison["figures"]:
            case, *rest = baseline.figure_change_cells(change)
            lines.append(f"| {_md_code(case)} | " + " | ".join(map(_md_escape, rest)) + " |")
    return lines


COMMENT_MARK = "<!-- memory-regression: {store} -->"   # finds the pull request's comment of the same store


NEWLY_FAILING_SHOWN = 3      # the newly failing scenarios a pull request's comment gives with their reasons


def render_comment(summary: RunSummary) -> str:
    """comment.md: what a pull request's comment says of a run compared with a baseline: the first
    newly failing scenarios, each with its one-line reason, then the comparison. Its first line marks
    it as this store's, so that the next push updates the comment instead of adding one."""
    lines = [COMMENT_MARK.format(store=_visible(summary.store or "").replace("--", "-")),
             f"## Memory regression: {_md_escape(summary.store or 'the store')}", "",
             f"This run: **{summary.status}**, {_md_escape(headline(summary))}."
             + (f" {_md_escape(summary.message)}" if summary.message else ""), "",
             *newly_failing_reasons(summary),
             *render_comparison_markdown(summary.comparison or {}), "",
             "The reports (report.html, summary.md, junit.xml, summary.json) are in the workflow run's artifacts."]
    return "\n".join(lines) + "\n"


def newly_failing_reasons(summary: RunSummary) -> list[str]:
    """The first :data:`NEWLY_FAILING_SHOWN` newly failing scenarios, each with the first line of its
    reason, and how many more there are."""
    newly = (summary.comparison or {}).get("newly_failing") or []
    if not newly:
        return []
    reasons = {baseline.case_id(r.nodeid, r.engine): r.message for r in summary.results}
    lines = [f"**Newly failing ({len(newly)}):**", ""]
    lines += [f"- {_md_code(case)}: {_md_escape((reasons.get(case) or 'no reason recorded').splitlines()[0])}"
              for case in newly[:NEWLY_FAILING_SHOWN]]
    if len(newly) > NEWLY_FAILING_SHOWN:
        lines.append(f"- ... and {len(newly) - NEWLY_FAILING_SHOWN} more (the table below, and the reports)")
    return [*lines, ""]


def unwritten_verdict(summary: RunSummary, unwritten: list[str]) -> str:
    """The message of a run whose reports could not all be written: which, why, what to do, and
    the verdict they would have carried."""
    return (f"the reports could not all be written ({'; '.join(unwritten)}): free space on that disk, or "
            f"raise the file-size limit (ulimit -f). The run itself was {summary.status}: "
            f"{headline(summary)}" + (f"; {summary.message}" if summary.message else ""))
