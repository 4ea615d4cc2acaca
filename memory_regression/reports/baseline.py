"""Comparing a run with an earlier one (``--baseline``): what got worse, and what got better.

A baseline is the ``summary.json`` of an earlier run, the base branch's. A run is compared with it
scenario by scenario (each case: a scenario at a window size or model profile, on an engine), and by
what its conformance level holds: capabilities whose scenarios all passed, and guarantees that held.

Only what both runs judged alike is compared. A baseline of another store says so and is not compared
at all; one run on another server (another Redis version, Valkey), or of other window sizes or model
profiles, says so, and the cases the two runs share are compared, the others listed as added or gone.

A capability or guarantee counts as lost only when one of its own scenarios failed (or, for a
guarantee, warned); the others a failing core takes out of the level with it are said once, as the
level's fall, not counted again.

The figures of the cases both runs measured are compared too: latency as multiples of the Redis floor
measured in the same run (p50 and p95, append and load), and bytes per message. A figure's change
counts only beyond what identical runs moved it by here (:data:`NOISE`, measured by
``bench/noise.py``). What fails the step is the user's choice (:data:`FAIL_ON`): by default,
scenarios that newly fail, so that a scenario failing on the base branch too does not block a change.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ..errors import UsageError
from .figures import LATENCY_OPERATIONS

FAILING = ("failed", "error")
# what must be alike for two runs' verdicts to be comparable at all, and what is only named where it differs
SAME_STORE = ("store", "the store")
SERVER = ("backend", "the Redis server")   # its kind and version
SERVER_NOTE = (" (latency is compared as multiples of each run's own Redis floor; bytes per message, which follows "
               "the server's encodings, is shown and not counted)")
NAMED = (SERVER, ("window_sizes", "the window sizes"), ("window_policy", "the window policy"),
         ("profiles", "the model profiles"), ("groups", "the scenario groups"))
# How far a figure moves between identical runs (now / before, either way) before its change counts: a
# third or more above the largest change identical default runs of an example store showed on the 2-core
# development machine, quiet or beside two busy processes (bench/noise.py, 60 identical runs: p50 × floor
# up to 2.16×, p95 × floor up to 23.95×, bytes per message 1.00×; docs/measured.md). Latency is compared
# as multiples of the Redis floor of the same run, which cancels a machine's speed; its p95 still moves
# with what else the machine runs (a tenth of 200 samples, each well under a scheduler's time slice),
# so only a change of its p50 says much.
NOISE = {"p50 × floor": 3.0, "p95 × floor": 32.0, "bytes per message": 1.1}
# what may fail the step when a run is compared (--fail-on-regression), and what each counts
FAIL_ON = {"new-failures": "scenarios failing now that did not fail in the baseline",
           "failures": "any failing scenario, as without a baseline",
           "lost-guarantees": "capabilities and guarantees lost from the conformance level by their own scenarios",
           "figures": "latency or bytes per message worse beyond the noise"}
DEFAULT_FAIL_ON = ("new-failures",)
# --fail-on-regression's words for all of FAIL_ON and for none of it (what a YAML user writes for a flag)
FAIL_ON_ALL, FAIL_ON_NONE = "true", "false"


@dataclass
class Comparison:
    """How a run differs from its baseline. Each list holds case ids (``test_core.py::test_x[N=5]``),
    warnings as ``case: guarantee`` or conformance words (``ttl``)."""

    baseline: str                                            # the file, as given
    differences: list[str] = field(default_factory=list)     # what of the two runs' setup differs
    compared: bool = True                                    # False: another store, nothing compared
    newly_failing: list[str] = field(default_factory=list)   # failing now; passed or skipped in the baseline
    fixed: list[str] = field(default_factory=list)           # failing in the baseline, passing now
    newly_skipped: list[str] = field(default_factory=list)   # skipped now, judged in the baseline
    gone: list[str] = field(default_factory=list)            # in the baseline, not in this run
    added: list[str] = field(default_factory=list)           # in this run, not in the baseline
    lost: list[str] = field(default_factory=list)            # level words whose own scenarios failed now
    fallen: list[str] = field(default_factory=list)          # those the level lost only with them (a failing core)
    level_fall: str = ""                                     # the level's fall, said once ("from a+b to none: ...")
    gained: list[str] = field(default_factory=list)          # ... and those it holds now
    not_judged: list[str] = field(default_factory=list)      # those it lacks now, none of their scenarios run
    warnings_new: list[str] = field(default_factory=list)
    warnings_gone: list[str] = field(default_factory=list)
    figures: list[dict[str, Any]] = field(default_factory=list)   # every figure both runs measured (FigureChange)
    figures_worse: list[str] = field(default_factory=list)        # ... those worse beyond the noise, worded
    figures_better: list[str] = field(default_factory=list)       # ... and those better beyond it
    figures_not_counted: list[str] = field(default_factory=list)  # ... changed, but measured on other servers
    fail_on: list[str] = field(default_factory=lambda: list(DEFAULT_FAIL_ON))
    fails_step: list[str] = field(default_factory=list)           # what of fail_on happened: the step fails

    @property
    def regressions(self) -> int:
        """What got worse: new failures, capabilities and guarantees lost by their own scenarios' failures,
        new warnings, figures worse beyond the noise."""
        return len(self.newly_failing) + len(self.lost) + len(self.warnings_new) + len(self.figures_worse)

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "regressions": self.regressions}


@dataclass(frozen=True)
class FigureChange:
    """One figure of one case in both runs: its change is ``now / before``, which counts when it is
    beyond ``noise`` either way (higher is worse for every figure compared)."""

    case: str
    figure: str      # "append p95 × floor", "bytes per message"
    before: float
    now: float
    noise: float
    comparable: bool = True   # False: bytes per message measured on two different servers


    @property
    def change(self) -> float:
        return self.now / self.before

    @property
    def verdict(self) -> str:
        if self.comparable or 1 / self.noise <= self.change <= self.noise:
            return ("worse" if self.change > self.noise else "better" if self.change < 1 / self.noise
                    else "within the noise")
        return OTHER_SERVER

    def text(self) -> str:
        return (f"{self.case}: {self.figure} {self.before:g} → {self.now:g} ({self.change:.2f}×; identical runs "
                f"move it by up to {self.noise:g}×)")

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "change": round(self.change, 3), "verdict": self.verdict}


FIGURE_COLUMNS = ("case", "figure", "baseline", "now", "change", "")
# the verdict of a storage figure that changed between runs on two servers: their encodings differ (a list's
# listpack and quicklist thresholds moved between Redis releases), so the change is no finding about the store
OTHER_SERVER = "not counted: the runs used different servers"


def figure_change_cells(change: dict[str, Any]) -> list[str]:
    """A compared figure (``Comparison.figures``' entry) as the reports' table shows it, one text per
    :data:`FIGURE_COLUMNS`: its verdict, and beyond the noise, the noise it is beyond."""
    verdict = change["verdict"] + ("" if change["verdict"] in ("within the noise", OTHER_SERVER)
                                   else f" (beyond {change['noise']:g}×)")
    return [change["case"], change["figure"], f"{change['before']:g}", f"{change['now']:g}", f"{change['change']:.2f}×",
            verdict]


def figure_values(summary: dict[str, Any]) -> dict[tuple[str, str], float]:
    """The figures a summary's run measured, by (case, figure): each latency operation's p50 and p95
    as multiples of the floor, and each footprint's bytes per message."""
    found = {}
    for entry in summary.get("latency", []):
        for operation in LATENCY_OPERATIONS:
            for percentile in ("p50", "p95"):
                found[(_case(entry), f"{operation} {percentile} × floor")] = (
                    (entry.get(operation) or {}).get(f"ratio_{percentile}"))
    for entry in summary.get("footprint", []):
        found[(_case(entry), "bytes per message")] = entry.get("bytes_per_message")
    return {key: value for key, value in found.items() if isinstance(value, (int, float)) and value > 0}


def _noise(figure: str) -> float:
    return next(allowed for name, allowed in NOISE.items() if figure.endswith(name))


def figure_changes(current: dict[str, Any], baseline: dict[str, Any]) -> list[FigureChange]:
    """The figures of the cases both runs measured, each with its change. Latency is a multiple of its own
    run's floor, so it compares across servers; bytes per message follows a server's encodings, so a change
    of it between two servers is shown and not counted."""
    before = figure_values(baseline)
    same_server = _setting(current, SERVER[0]) == _setting(baseline, SERVER[0])
    return [FigureChange(case, name, before[(case, name)], value, _noise(name),
                         same_server or "floor" in name)
            for (case, name), value in figure_values(current).items() if (case, name) in before]


def check_fail_on(given: str) -> tuple[str, ...]:
    """--fail-on-regression's names (``true``: all of them; ``false``: none), or a usage error saying
    which are known."""
    word = given.strip().lower()
    if word in (FAIL_ON_ALL, FAIL_ON_NONE):
        return tuple(FAIL_ON) if word == FAIL_ON_ALL else ()
    names = tuple(name.strip() for name in given.split(",") if name.strip())
    unknown = [name for name in names if name not in FAIL_ON]
    if unknown or not names:
        raise UsageError(f"--fail-on-regression {given!r}: use one or more of "
                         + ", ".join(f"{name} ({words})" for name, words in FAIL_ON.items())
                         + f", comma-separated; or {FAIL_ON_ALL} (all of them) or {FAIL_ON_NONE} (none)")
    return names


# what a committed baseline keeps of a summary (--write-baseline): what a comparison reads, and what a
# person reads a failure by; left out is what changes from run to run of the same code (durations,
# the server's port and pid, report paths, the scenarios' findings)
KEPT = ("status", "store", "backend", "engines", "window_sizes", "window_policy", "profiles", "groups",
        "conformance_level", "results", "warnings", "latency", "footprint")
RESULT_KEPT = ("nodeid", "engine", "scenario", "point", "outcome", "message", "requires", "guarantees")


def baseline_json(summary: dict[str, Any]) -> dict[str, Any]:
    """A run's summary (its summary.json) as a baseline to commit (memory-baseline.json)."""
    kept = {key: summary[key] for key in KEPT if key in summary}
    kept["backend"] = _setting(summary, "backend")
    kept["results"] = [{key: result[key] for key in RESULT_KEPT if key in result} for result in summary["results"]]
    return kept


def case_id(nodeid: str, engine: str | None) -> str:
    """A case as a comparison names it: a node id, and the engine it ran on where the run had several."""
    return nodeid + (f" on {engine}" if engine else "")


def _case(result: dict[str, Any]) -> str:
    return case_id(result["nodeid"], result.get("engine"))


def _setting(summary: dict[str, Any], key: str) -> Any:
    value = summary.get(key)
    if key == "profiles":
        return [profile.get("name") for profile in value or []]
    if key == "backend" and value:   # "redis 7.0.15 (private server ..., port 40123, pid 567)": the server, not its run
        return value.partition(" (")[0]
    return value


def _shown(value: Any) -> str:
    return ",".join(map(str, value)) if isinstance(value, list) else str(value)


def _level(summary: dict[str, Any]) -> list[str]:
    level = summary.get("conformance_level") or "none"
    return [] if level == "none" else level.split("+")


def _warnings(summary: dict[str, Any], cases: set[str]) -> list[str]:
    """The summary's warnings on ``cases``, each ``nodeid: guarantee``."""
    return [f"{warning['nodeid']}: {warning['guarantee']}" for warning in summary.get("warnings", [])
            if warning["nodeid"] in cases]


def _judges(result: dict[str, Any], word: str) -> bool:
    """Whether ``result``'s scenario judges ``word`` of the conformance level: a capability it requires,
    core for one that requires none, a guarantee it checks."""
    return (word in result.get("requires", []) or word in result.get("guarantees", [])
            or (word == "core" and not result.get("requires")))


def _judged(summary: dict[str, Any], word: str) -> bool:
    """Whether a scenario that judges ``word`` ran in ``summary``'s run; async is judged by every
    scenario that ran."""
    ran = [result for result in summary.get("results", []) if result["outcome"] != "skipped"]
    return any(word == "async" or _judges(result, word) for result in ran)


def _failed_by_its_own(summary: dict[str, Any], word: str) -> bool:
    """Whether one of ``word``'s own scenarios failed in ``summary``'s run, or warned of it (a guarantee).
    Async has no scenarios of its own: it leaves the level only with the others."""
    warned = {warning.get("guarantee") for warning in summary.get("warnings", [])}
    return word in warned or any(result["outcome"] in FAILING and _judges(result, word)
                                 for result in summary.get("results", []))


def compare(current: dict[str, Any], baseline: dict[str, Any], given: str,
            fail_on: tuple[str, ...] = DEFAULT_FAIL_ON) -> Comparison:
    """How ``current`` (a summary's JSON) differs from ``baseline`` (an earlier one, from ``given``),
    and what of ``fail_on`` fails the step."""
    comparison = Comparison(given, fail_on=list(fail_on))
    for key, words in (SAME_STORE, *NAMED):
        now, before = _setting(current, key), _setting(baseline, key)
        if now != before:
            comparison.differences.append(f"{words}: {_shown(before)} in the baseline, {_shown(now)} now"
                                          + (SERVER_NOTE if key == SERVER[0] else ""))
            comparison.compared = comparison.compared and key != SAME_STORE[0]
    if not comparison.compared:
        return comparison
    now = {_case(result): result["outcome"] for result in current.get("results", [])}
    before = {_case(result): result["outcome"] for result in baseline["results"]}
    comparison.added = [case for case in now if case not in before]
    # failing now, and passed, skipped or not run in the baseline: a failing case the baseline lacks is new too
    comparison.newly_failing = [case for case, outcome in now.items()
                                if outcome in FAILING and before.get(case) not in FAILING]
    comparison.fixed = [case for case, outcome in now.items() if outcome == "passed" and before.get(case) in FAILING]
    comparison.newly_skipped = [case for case, outcome in now.items()
                                if outcome == "skipped" and before.get(case, "skipped") != "skipped"]
    comparison.gone = [case for case in before if case not in now]
    level_now, level_before = _level(current), _level(baseline)
    missing = [word for word in level_before if word not in level_now]
    comparison.lost = [word for word in missing if _judged(current, word) and _failed_by_its_own(current, word)]
    comparison.fallen = [word for word in missing if _judged(current, word) and word not in comparison.lost]
    comparison.not_judged = [word for word in missing if not _judged(current, word)]
    comparison.gained = [word for word in level_now if word not in level_before]
    if comparison.fallen:
        because = " failed" if "core" in comparison.lost else ""
        comparison.level_fall = (f"the level falls from {'+'.join(level_before)} to {'+'.join(level_now) or 'none'}"
                                 + (f": core{because}, and with it {', '.join(comparison.fallen)}, whose own "
                                    "scenarios did not fail" if because else ""))
    shared = ({result["nodeid"] for result in current.get("results", [])}
              & {result["nodeid"] for result in baseline["results"]})
    warned_now = _warnings(current, shared)
    warned_before = _warnings(baseline, shared)
    comparison.warnings_new = [w for w in warned_now if w not in warned_before]
    comparison.warnings_gone = [w for w in warned_before if w not in warned_now]
    changes = figure_changes(current, baseline)
    comparison.figures = [change.to_json() for change in changes]
    comparison.figures_worse = [change.text() for change in changes if change.verdict == "worse"]
    comparison.figures_better = [change.text() for change in changes if change.verdict == "better"]
    comparison.figures_not_counted = [change.text() for change in changes if change.verdict == OTHER_SERVER]
    failing = sum(result["outcome"] in FAILING for result in current.get("results", []))
    counted = {"new-failures": len(comparison.newly_failing), "failures": failing,
               "lost-guarantees": len(comparison.lost), "figures": len(comparison.figures_worse)}
    comparison.fails_step = [f"{name} ({counted[name]})" for name in fail_on if counted[name]]
    return comparison


# each list of a comparison, in the order the reports show them, with its words
SECTIONS = (("newly_failing", "newly failing"), ("lost", "lost from the conformance level, their scenarios failing"),
            ("warnings_new", "new warnings"), ("figures_worse", "figures worse beyond the noise"), ("fixed", "fixed"),
            ("gained", "gained in the conformance level"), ("warnings_gone", "warnings gone"),
            ("figures_better", "figures better beyond the noise"),
            ("figures_not_counted", "storage figures changed, not counted: the runs used different servers"),
            ("newly_skipped", "newly skipped"),
            ("not_judged", "not in the conformance level, none of their scenarios run now"),
            ("gone", "in the baseline, not run now"), ("added", "run now, not in the baseline"))


def headline(comparison: dict[str, Any]) -> str:
    """One line: against what, how many regressions and whether they fail the step, or why nothing
    was compared."""
    against = f"compared with the baseline {comparison['baseline']}"
    if not comparison["compared"]:
        return f"not {against}: {'; '.join(comparison['differences'])}"
    regressions = comparison["regressions"]
    gate = (f"the step fails on {', '.join(comparison['fails_step'])}" if comparison["fails_step"] else
            f"nothing that fails the step (--fail-on-regression {','.join(comparison['fail_on']) or FAIL_ON_NONE})")
    fall = f"; {comparison['level_fall']}" if comparison.get("level_fall") else ""
    return f"{against}: {regressions} regression{'' if regressions == 1 else 's'}; {gate}{fall}" + (
        f" (what differs: {'; '.join(comparison['differences'])}; only the cases both runs have are compared)"
        if comparison["differences"] else "")


def sections(comparison: dict[str, Any]) -> list[tuple[str, list[str]]]:
    """The comparison's non-empty lists, each with its words, worst first."""
    return [(words, comparison[key]) for key, words in SECTIONS if comparison.get(key)]
