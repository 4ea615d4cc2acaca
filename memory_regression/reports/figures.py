"""The figures a scenario measures, typed: :class:`LatencyFigure` and :class:`FootprintFigure`.

A scenario records one as a mapping (``findings.measure(kind, {...})``), which is what crosses from
the worker and what summary.json keeps; :func:`figure` reads it back into its class, which renders
itself: its junit.xml properties, its text cells (shared by summary.md, the terminal and
report.html), its terminal line and its summary.md row. report.html draws its charts from the same
attributes.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, Union

NO_POINT = "—"   # the matrix column of scenarios that run once, not per window or profile
LATENCY_OPERATIONS = ("append", "load")
PERCENTILES = ("p50", "p95", "p99")


def size_text(size: float) -> str:
    """Bytes as a person reads them: 812 B, 12.3 KB, 4.0 MB."""
    if size < 1024:
        return f"{size:,.0f} B"
    return f"{size / 1024:,.1f} KB" if size < 1024 * 1024 else f"{size / 1024 / 1024:,.1f} MB"


def _ms(value: float | None) -> str:
    return "?" if value is None else f"{value:.3f}" if value < 10 else f"{value:,.1f}"


def _times(value: float | None) -> str:
    return "?" if value is None else f"{value:g}×"


@dataclass(frozen=True)
class Place:
    """Where a figure was measured: its scenario's run, and the engine when the run has several."""

    nodeid: str = ""
    scenario: str = ""
    point: str = ""
    outcome: str = ""
    engine: str = ""


@dataclass(frozen=True)
class OperationLatency:
    """One operation's milliseconds at each percentile, the raw Redis floor's, the ratios of the two,
    and the budget given for its p95 (None: none)."""

    p50_ms: float | None = None
    p95_ms: float | None = None
    p99_ms: float | None = None
    floor_p50_ms: float | None = None
    floor_p95_ms: float | None = None
    floor_p99_ms: float | None = None
    ratio_p50: float | None = None
    ratio_p95: float | None = None
    ratio_p99: float | None = None
    budget_ms: float | None = None

    def ms(self, percentile: str, floor: bool = False) -> float | None:
        return getattr(self, f"{'floor_' if floor else ''}{percentile}_ms")

    def ratio(self, percentile: str) -> float | None:
        return getattr(self, f"ratio_{percentile}")


def _known(cls: type, mapping: dict[str, Any]) -> dict[str, Any]:
    names = {f.name for f in fields(cls)}
    return {key: value for key, value in mapping.items() if key in names}


@dataclass(frozen=True)
class _Figure:
    place: Place = field(default_factory=Place)
    window: str = ""

    @property
    def label(self) -> str:
        """Its window or profile (``N=5``, ``small-4k``, ``unwindowed``), and its engine when the run
        has several."""
        label = self.window or self.place.point or NO_POINT
        return f"{label} on {self.place.engine}" if self.place.engine else label


@dataclass(frozen=True)
class LatencyFigure(_Figure):
    """Append and load latency against the raw Redis floor (the latency scenario)."""

    kind: ClassVar[str] = "latency"
    samples: int | None = None
    content_bytes: int | None = None
    history_messages: int | None = None
    append: OperationLatency = field(default_factory=OperationLatency)
    load: OperationLatency = field(default_factory=OperationLatency)

    @classmethod
    def read(cls, mapping: dict[str, Any], place: Place) -> LatencyFigure:
        operations = {name: OperationLatency(**_known(OperationLatency, mapping.get(name) or {}))
                      for name in LATENCY_OPERATIONS}
        return cls(place=place, **{**_known(cls, mapping), **operations})

    def operation(self, name: str) -> OperationLatency:
        return getattr(self, name)

    def properties(self) -> list[tuple[str, str]]:
        """Each operation's p95 and its ratio to the floor's."""
        return [pair for name in LATENCY_OPERATIONS for pair in (
            (f"{name}_p95_ms", str(self.operation(name).p95_ms)),
            (f"{name}_p95_floor_ratio", str(self.operation(name).ratio_p95)))]

    def cells(self) -> dict[str, str]:
        """As text: each operation's p50 / p95 / p99 in ms, the floor's, its p50 and p95 as multiples
        of the floor's, and the budgets given."""
        cells = {}
        for name in LATENCY_OPERATIONS:
            found = self.operation(name)
            cells[name] = " / ".join(_ms(found.ms(p)) for p in PERCENTILES)
            cells[f"{name}_floor"] = " / ".join(_ms(found.ms(p, floor=True)) for p in PERCENTILES)
            cells[f"{name}_ratio"] = f"{_times(found.ratio_p50)} / {_times(found.ratio_p95)}"
        budgets = [f"{name} {self.operation(name).budget_ms:g} ms" for name in LATENCY_OPERATIONS
                   if self.operation(name).budget_ms is not None]
        cells["budget"] = ", ".join(budgets) or "none"
        return cells

    MARKDOWN_HEAD: ClassVar[list[str]] = [
        "### Latency", "",
        "Milliseconds, p50 / p95 / p99, beside the raw Redis floor measured in the same run (RPUSH and LRANGE of the "
        "same sizes through redis-py on the same server); × floor: the store's p50 and p95 as multiples of the "
        "floor's.", "",
        "| where | samples | append | RPUSH floor | × floor | load | LRANGE floor | × floor | budget (p95) |",
        "|---|---|---|---|---|---|---|---|---|"]

    def markdown_cells(self) -> list[str]:
        cells = self.cells()
        return [self.label, "?" if self.samples is None else str(self.samples), cells["append"],
                cells["append_floor"], cells["append_ratio"], cells["load"], cells["load_floor"], cells["load_ratio"],
                cells["budget"]]

    def terminal_line(self) -> str:
        cells = self.cells()
        return (f"  latency {self.label}: append {cells['append']} ms ({cells['append_ratio']} the floor at p50 / "
                f"p95), load {cells['load']} ms ({cells['load_ratio']})")


@dataclass(frozen=True)
class FootprintFigure(_Figure):
    """What a session takes in Redis after its first messages, and (with a window) after the rest
    (the footprint scenarios)."""

    kind: ClassVar[str] = "footprint"
    messages: int | None = None
    keys: int | None = None
    bytes: int = 0
    bytes_per_message: float = 0
    content_bytes_per_message: float = 0
    overhead_ratio: float | None = None
    appends_after: int | None = None     # with a window: the appends made in all, and what they took
    bytes_after: int | None = None
    growth: float | None = None
    bound: float | None = None
    bounded: bool | None = None

    @classmethod
    def read(cls, mapping: dict[str, Any], place: Place) -> FootprintFigure:
        return cls(place=place, **_known(cls, mapping))

    def properties(self) -> list[tuple[str, str]]:
        """Bytes per message, and the growth of a window's footprint (the per-message figure has none)."""
        found = [("bytes_per_message", str(self.bytes_per_message))]
        return found + ([("footprint_growth", str(self.growth))] if self.growth is not None else [])

    def cells(self) -> dict[str, str]:
        """As text: what the first messages took, per message against their content, and the growth
        after the rest (none without a window)."""
        cells = {"messages": "?" if self.messages is None else str(self.messages), "bytes": size_text(self.bytes),
                 "per_message": f"{self.bytes_per_message:,.0f} B",
                 "content": f"{self.content_bytes_per_message:,.0f} B", "overhead": _times(self.overhead_ratio),
                 "growth": "no window, not judged"}
        if self.bytes_after is not None:
            cells["growth"] = (f"{size_text(self.bytes_after)} after {self.appends_after} appends: "
                               f"{_times(self.growth)} (at most {self.bound}×)")
        return cells

    COLUMNS: ClassVar[tuple[str, ...]] = ("messages", "bytes", "per_message", "content", "overhead", "growth")
    MARKDOWN_HEAD: ClassVar[list[str]] = [
        "### Storage footprint", "",
        "MEMORY USAGE (SAMPLES 0) of the session's keys after its first messages (a full window; 10 under a roomy "
        "one), per message against the content's size, and after the rest (ten windows' worth; twice the "
        "messages).", "",
        "| where | messages | bytes | per message | content per message | overhead | growth |",
        "|---|---|---|---|---|---|---|"]

    def markdown_cells(self) -> list[str]:
        cells = self.cells()
        return [self.label, *(cells[name] for name in self.COLUMNS)]

    def terminal_line(self) -> str:
        cells = self.cells()
        return (f"  footprint {self.label}: {cells['per_message']} per message ({cells['content']} of content, "
                f"{cells['overhead']}); {cells['growth']}")


Figure = Union[LatencyFigure, FootprintFigure]
KINDS: dict[str, Any] = {cls.kind: cls for cls in (LatencyFigure, FootprintFigure)}   # the order reports list them


def figure(mapping: dict[str, Any], place: Place = Place()) -> Figure:
    """A recorded figure (a mapping with its ``kind``), typed."""
    return KINDS[mapping["kind"]].read(mapping, place)
