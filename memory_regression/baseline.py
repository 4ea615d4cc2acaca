"""Comparing a run with an earlier one (``--baseline``): what got worse, and what got better.

A baseline is the ``summary.json`` of an earlier run, the base branch's. A run is compared with it
scenario by scenario (each case: a scenario at a window size or model profile, on an engine), and by
what its conformance level holds: capabilities whose scenarios all passed, and guarantees that held.

Only what both runs judged alike is compared. A baseline of another store, or run on another kind of
server, says so and is not compared at all; one of other window sizes or model profiles says so, and
the cases the two runs share are compared, the others listed as added or gone.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .contract import UsageError

FAILING = ("failed", "error")
# what must be alike for two runs' verdicts to be comparable at all, and what only narrows the cases compared
SAME_STORE = (("store", "the store"), ("backend", "the Redis server"))   # the server: its kind and version
SAME_CASES = (("window_sizes", "the window sizes"), ("window_policy", "the window policy"),
              ("profiles", "the model profiles"), ("groups", "the scenario groups"))


@dataclass
class Comparison:
    """How a run differs from its baseline. Each list holds case ids (``test_core.py::test_x[N=5]``),
    warnings as ``case: guarantee`` or conformance words (``ttl``)."""

    baseline: str                                            # the file, as given
    differences: list[str] = field(default_factory=list)     # what of the two runs' setup differs
    compared: bool = True                                    # False: another store or server, nothing compared
    newly_failing: list[str] = field(default_factory=list)   # failing now; passed or skipped in the baseline
    fixed: list[str] = field(default_factory=list)           # failing in the baseline, passing now
    newly_skipped: list[str] = field(default_factory=list)   # skipped now, judged in the baseline
    gone: list[str] = field(default_factory=list)            # in the baseline, not in this run
    added: list[str] = field(default_factory=list)           # in this run, not in the baseline
    lost: list[str] = field(default_factory=list)            # capabilities and guarantees the level no longer holds
    gained: list[str] = field(default_factory=list)          # ... and those it holds now
    not_judged: list[str] = field(default_factory=list)      # those it lacks now, none of their scenarios run
    warnings_new: list[str] = field(default_factory=list)
    warnings_gone: list[str] = field(default_factory=list)

    @property
    def regressions(self) -> int:
        """What got worse: new failures, capabilities and guarantees lost, new warnings."""
        return len(self.newly_failing) + len(self.lost) + len(self.warnings_new)

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "regressions": self.regressions}


def load_baseline(path: Path, given: str) -> dict[str, Any]:
    """The summary.json at ``path``, or a usage error saying what is wrong with it (``given``: the
    path as the user gave it)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"--baseline {given!r}: no such file (give the summary.json of an earlier run)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"--baseline {given!r}: cannot be read: {exc}") from None
    except ValueError as exc:
        raise UsageError(f"--baseline {given!r}: not JSON ({exc}): give the summary.json of an earlier run") from None
    if not isinstance(data, dict) or not isinstance(data.get("results"), list) or not all(
            isinstance(result, dict) and "nodeid" in result and "outcome" in result for result in data["results"]):
        raise UsageError(f"--baseline {given!r}: not a summary.json of a run (it has no results with nodeid and "
                         "outcome): give the summary.json an earlier run wrote")
    if not data["results"]:
        raise UsageError(f"--baseline {given!r}: a run that judged nothing (status {data.get('status')!r}): give the "
                         "summary.json of a run whose scenarios ran")
    return data


def _case(result: dict[str, Any]) -> str:
    """A result's case: its node id, and the engine it ran on where the run had several."""
    return result["nodeid"] + (f" on {result['engine']}" if result.get("engine") else "")


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


def _judged(summary: dict[str, Any], word: str) -> bool:
    """Whether a scenario that judges ``word`` of the conformance level (a capability it requires,
    core for one that requires none, a guarantee it checks) ran in ``summary``'s run; async is
    judged by every scenario that ran."""
    ran = [result for result in summary.get("results", []) if result["outcome"] != "skipped"]
    return any(word == "async" or word in result.get("requires", []) or word in result.get("guarantees", [])
               or (word == "core" and not result.get("requires")) for result in ran)


def compare(current: dict[str, Any], baseline: dict[str, Any], given: str) -> Comparison:
    """How ``current`` (a summary's JSON) differs from ``baseline`` (an earlier one, from ``given``)."""
    comparison = Comparison(given)
    for key, words in (*SAME_STORE, *SAME_CASES):
        now, before = _setting(current, key), _setting(baseline, key)
        if now != before:
            comparison.differences.append(f"{words}: {_shown(before)} in the baseline, {_shown(now)} now")
            comparison.compared = comparison.compared and (key, words) not in SAME_STORE
    if not comparison.compared:
        return comparison
    now = {_case(result): result["outcome"] for result in current.get("results", [])}
    before = {_case(result): result["outcome"] for result in baseline["results"]}
    for case, outcome in now.items():
        if case not in before:
            comparison.added.append(case)
        elif outcome in FAILING and before[case] not in FAILING:
            comparison.newly_failing.append(case)
        elif outcome == "passed" and before[case] in FAILING:
            comparison.fixed.append(case)
        elif outcome == "skipped" and before[case] != "skipped":
            comparison.newly_skipped.append(case)
    comparison.gone = [case for case in before if case not in now]
    level_now, level_before = _level(current), _level(baseline)
    missing = [word for word in level_before if word not in level_now]
    comparison.lost = [word for word in missing if _judged(current, word)]
    comparison.not_judged = [word for word in missing if not _judged(current, word)]
    comparison.gained = [word for word in level_now if word not in level_before]
    shared = ({result["nodeid"] for result in current.get("results", [])}
              & {result["nodeid"] for result in baseline["results"]})
    warned_now = _warnings(current, shared)
    warned_before = _warnings(baseline, shared)
    comparison.warnings_new = [w for w in warned_now if w not in warned_before]
    comparison.warnings_gone = [w for w in warned_before if w not in warned_now]
    return comparison


# each list of a comparison, in the order the reports show them, with its words
SECTIONS = (("newly_failing", "newly failing"), ("lost", "lost from the conformance level"),
            ("warnings_new", "new warnings"), ("fixed", "fixed"), ("gained", "gained in the conformance level"),
            ("warnings_gone", "warnings gone"), ("newly_skipped", "newly skipped"),
            ("not_judged", "not in the conformance level, none of their scenarios run now"),
            ("gone", "in the baseline, not run now"), ("added", "run now, not in the baseline"))


def headline(comparison: dict[str, Any]) -> str:
    """One line: against what, and how many regressions, or why nothing was compared."""
    against = f"compared with the baseline {comparison['baseline']}"
    if not comparison["compared"]:
        return f"not {against}: {'; '.join(comparison['differences'])}"
    regressions = comparison["regressions"]
    return f"{against}: {regressions} regression{'' if regressions == 1 else 's'}" + (
        f" (what differs: {'; '.join(comparison['differences'])}; only the cases both runs have are compared)"
        if comparison["differences"] else "")


def sections(comparison: dict[str, Any]) -> list[tuple[str, list[str]]]:
    """The comparison's non-empty lists, each with its words, worst first."""
    return [(words, comparison[key]) for key, words in SECTIONS if comparison.get(key)]
