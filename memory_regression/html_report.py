"""What the run adds to pytest-html's report.html, through its hooks: the block above the results
(the run's facts and the matrix) and each failure's diagnosis on its row. Stored content is always
escaped, so a message holding HTML shows as text.
"""

from __future__ import annotations

import html
from typing import Any

from .results import RunSummary, ScenarioResult


def html_summary(summary: RunSummary) -> list[str]:
    """The block the run adds above pytest-html's results table: the run's facts and the matrix."""
    items = [("Store", summary.store), ("Capabilities", ", ".join(summary.capabilities)),
             ("Conformance level", summary.conformance_level), ("Redis", summary.backend)]
    items += [(f"Profile {p['name']}", f"budget {p['max_tokens']} tokens, counter {p['counter']}")
              for p in summary.profiles]
    if summary.message:
        items.insert(0, ("Status", f"{summary.status}: {summary.message}"))
    parts = ["<style>.memory-matrix td, .memory-matrix th {padding: 2px 8px; text-align: left}"
             " .memory-matrix .passed {color: #060} .memory-matrix .failed, .memory-matrix .error"
             " {color: #b00; font-weight: bold} .memory-matrix .skipped {color: #888}"
             " .memory-warning {color: #b00}</style>", "<div class='memory-summary'>"]
    if summary.backend_warning:
        parts.append(f"<p class='memory-warning'><b>Warning:</b> {html.escape(summary.backend_warning)}</p>")
    parts.append("<ul>" + "".join(f"<li><b>{html.escape(k)}:</b> {html.escape(str(v))}</li>"
                                  for k, v in items if v) + "</ul>")
    columns, rows = summary.matrix()
    if rows:
        parts.append("<table class='memory-matrix'><tr><th>group</th><th>scenario</th>"
                     + "".join(f"<th>{html.escape(c)}</th>" for c in columns) + "</tr>")
        for group, scenario, cells in rows:
            parts.append(f"<tr><td>{html.escape(group)}</td><td>{html.escape(scenario)}</td>"
                         + "".join(f"<td class='{cells[c] if c in cells else 'none'}'>{cells.get(c, '')}</td>"
                                   for c in columns) + "</tr>")
        parts.append("</table>")
    return [*parts, "</div>"]


def attach_diagnosis(report: Any, result: ScenarioResult) -> None:
    """Put a failure's diagnosis and histories on its row of report.html, as escaped text."""
    try:
        from pytest_html import extras
    except ImportError:
        return
    block = (f"<div class='memory-diagnosis'><p><b>{html.escape(result.message)}</b></p>"
             f"<pre>{html.escape(result.details)}</pre></div>")
    report.extras = [*getattr(report, "extras", []), extras.html(block)]
