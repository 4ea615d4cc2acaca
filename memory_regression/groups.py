"""Scenario groups: one file of ``suite/`` each, selected with ``--groups``.

A group's name comes from its file (``suite/test_count_window.py`` is ``count-window``). The default
run leaves out the groups in :data:`LEFT_OUT_BY_DEFAULT`, so that it stays under 10 s: docs/measured.md
gives each group's cost, and today every group together keeps under it, so none is
left out (a group that would break the budget goes there). ``--groups`` names groups to run, or
starts from the default set (``default``) or from every group (``all``) and leaves some out
(``-name``): ``--groups default,-concurrency``, ``--groups all``, ``--groups core,count-window``.
Nothing here needs pytest, so that a misspelt group stops a run before anything starts.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from .errors import UsageError

DEFAULT = "default"
ALL = "all"
LEFT_OUT_BY_DEFAULT: frozenset[str] = frozenset()


PACKAGE_DIRECTORY = Path(__file__).resolve().parent   # the package's own files, every layer's, are under it


def suite_directory() -> Path:
    """Where the scenario files are: installed as ``memory_regression.suite`` (found, not imported: the
    scenarios import the package, not the other way round), or ``suite/`` of a checkout."""
    spec = importlib.util.find_spec(f"{__package__}.suite")
    if spec is not None and spec.origin:
        return Path(spec.origin).resolve().parent
    return PACKAGE_DIRECTORY.parent / "suite"


def suite_files() -> list[Path]:
    """The suite's scenario files, one per group, in name order."""
    return sorted(suite_directory().glob("test_*.py"))


def scenario_group(path: str) -> str:
    """A scenario's group, from its file: ``suite/test_count_window.py`` is ``count-window``."""
    return path.rsplit("/", 1)[-1].removesuffix(".py").removeprefix("test_").replace("_", "-")


def known_groups() -> tuple[str, ...]:
    """Every group of the suite, by name, in the order of its files."""
    return tuple(scenario_group(path.name) for path in sorted(suite_directory().glob("test_*.py")))


def parse_groups(spec: object) -> tuple[str, ...]:
    """``--groups``: the groups to run, in the suite's order. Each comma-separated entry is a group
    name (run it), ``-name`` (leave it out), ``default`` or ``all`` (start from that set). A spec
    that only leaves groups out starts from the default set."""
    known = known_groups()
    entries = [part.strip() for part in str(spec).split(",")]
    named = [entry for entry in entries if entry and not entry.startswith("-") and entry not in (DEFAULT, ALL)]
    if ALL in entries:
        chosen = set(known)
    elif DEFAULT in entries or not named:
        chosen = set(known) - LEFT_OUT_BY_DEFAULT
    else:
        chosen = set()
    example = "(example: --groups default,-concurrency, or --groups core,count-window)"
    for entry in entries:
        name = entry.removeprefix("-")
        if name in (DEFAULT, ALL) and entry.startswith("-") or not name:
            raise UsageError(f"--groups {spec!r}: {entry!r} is not a group or a set of them {example}")
        if name in (DEFAULT, ALL):
            continue
        if name not in known:
            raise UsageError(f"--groups {spec!r}: there is no group {name!r}; the groups are "
                             f"{', '.join(known)} {example}")
        if entry.startswith("-"):
            chosen.discard(name)
        else:
            chosen.add(name)
    if not chosen:
        raise UsageError(f"--groups {spec!r} leaves no group to run {example}")
    return tuple(group for group in known if group in chosen)


def describe_groups(chosen: list[str] | tuple[str, ...]) -> str:
    """The groups of a run, as the reports say it: ``all``, or the ones run and the ones left out."""
    left_out = [group for group in known_groups() if group not in chosen]
    if not left_out:
        return ALL
    return f"{', '.join(chosen)} (left out: {', '.join(left_out)})"
