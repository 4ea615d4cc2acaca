"""What the suite adds to pytest's report of one phase of a scenario (setup, call or teardown), as one
typed object, :class:`PhaseReport`: the verdict of a failure or skip, and, after teardown, what the
scenario noted, warned, left unjudged and measured, and the keys it found without a TTL.

The worker attaches it (:func:`attach`); it travels inside pytest's report, over pytest-xdist, as
plain JSON under one attribute; the runner reads it back (:func:`read`), checked field by field. A
report that carries none has an empty one; one that carries something else judged nothing and says
so. Nothing else reads or writes that attribute.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any, Dict, List, Optional

from ..channel.messages import typed
from ..reference.diagnosis import Listing

ATTRIBUTE = "memory_phase"


@dataclass(frozen=True)
class Verdict:
    """A failure or skip in store terms: ``message``, one line saying what happened; ``details``, the
    text worth reading (expected against actual); for a history mismatch its ``listing`` and ``notes``
    (the steps Hypothesis adds), which report.html shows as a table and text. ``not_judged``: the
    suite's own code raised, so the scenario judged nothing (an error, not the store's failure)."""

    message: str
    details: str = ""
    listing: Optional[Listing] = None
    notes: str = ""
    not_judged: bool = False

    def noted(self, note: str) -> Verdict:
        """This verdict with ``note`` added to its message."""
        return replace(self, message=f"{self.message}; {note}")

    def text(self) -> str:
        """The message and details, as junit.xml and pytest's terminal show a failure."""
        return "\n".join(filter(None, [self.message, self.details]))


@dataclass(frozen=True)
class GuaranteeWarning:
    """A guarantee the store does not hold (:class:`~.capabilities.Guarantee` value), and how."""

    guarantee: str
    text: str


@dataclass(frozen=True)
class PhaseReport:
    """What one phase of a scenario found, beside pytest's outcome."""

    verdict: Optional[Verdict] = None
    findings: List[str] = field(default_factory=list)            # what it measured or noted, pass or fail
    warnings: List[GuaranteeWarning] = field(default_factory=list)
    unjudged: List[str] = field(default_factory=list)            # guarantees it could not judge this time
    measurements: List[Dict[str, Any]] = field(default_factory=list)   # figures, each with its "kind"
    keys_without_ttl: List[str] = field(default_factory=list)


def attach(report: Any, phase: PhaseReport) -> None:
    """Put ``phase`` on pytest's ``report``, in the plain form pytest-xdist carries."""
    setattr(report, ATTRIBUTE, asdict(phase))


def read(report: Any) -> PhaseReport:
    """The phase report ``report`` carries; an empty one if it carries none. One that is not a phase
    report (cut short, or changed on its way) is a verdict that the scenario judged nothing."""
    value = getattr(report, ATTRIBUTE, None)
    if value is None:
        return PhaseReport()
    try:
        return typed(value, PhaseReport, "the phase report")
    except ValueError as exc:
        return PhaseReport(Verdict(f"the worker's report of this scenario is not one the suite makes ({exc}): "
                                   "the scenario judged nothing", not_judged=True))


def with_verdict(report: Any, verdict: Verdict) -> None:
    """Set the verdict of the phase report on ``report``, keeping what else it says, and the text
    junit.xml and pytest's terminal show."""
    attach(report, replace(read(report), verdict=verdict))
    report.longrepr = verdict.text()


def add_to_verdict(report: Any, note: str) -> None:
    """Add ``note`` to a failure's message, in its verdict and in the text junit.xml shows."""
    with_verdict(report, (read(report).verdict or Verdict(report.longreprtext)).noted(note))
