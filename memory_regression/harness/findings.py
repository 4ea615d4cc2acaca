"""What a scenario reports besides its outcome (fixture ``findings``): notes, warnings and figures."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..contract.capabilities import Guarantee


@dataclass
class Findings:
    """Everything here is listed under the scenario in every report, whether it passes or fails."""

    notes: list[str] = field(default_factory=list)
    warnings: list[dict[str, str]] = field(default_factory=list)
    measurements: list[dict[str, Any]] = field(default_factory=list)
    unjudged: list[str] = field(default_factory=list)   # guarantees the scenario checks but could not judge

    def note(self, finding: str) -> None:
        """Report something the scenario measured (what it covered, how a store's time grew)."""
        self.notes.append(finding)

    def warn(self, guarantee: Guarantee, text: str) -> None:
        """Report a guarantee the store does not hold: a cost or a transient effect, not lost or wrong
        memory. The scenario still passes (but under ``--strict``), the warning is listed in every
        report, and the conformance level leaves the guarantee out."""
        self.warnings.append({"guarantee": Guarantee(guarantee).value, "text": text})

    def not_judged(self, guarantee: Guarantee, why: str) -> None:
        """Report that a guarantee the scenario checks could not be judged this time (too few
        samples within its budget): a note says why, and the scenario does not count as having
        checked it, so the conformance level names it only if another scenario judged it."""
        self.notes.append(why)
        self.unjudged.append(Guarantee(guarantee).value)

    def measure(self, kind: str, data: dict[str, Any]) -> None:
        """Record numbers the scenario measured, of a ``kind`` the reports know (``latency``,
        ``footprint``: see :mod:`.figures`): they reach summary.json, summary.md, junit.xml and
        report.html as figures, not as text. ``data`` is plain JSON."""
        self.measurements.append({"kind": kind, **data})
