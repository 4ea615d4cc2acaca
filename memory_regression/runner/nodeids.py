"""What a scenario's pytest id says (``suite/test_core.py::test_x[N=5-fakeredis]``): its engine,
what can be said of it when no worker described it, and its place in the reports."""

from __future__ import annotations

from typing import Any

from ..groups import scenario_group


def report_order(nodeids: list[str]) -> dict[str, int]:
    """Where each scenario goes in the reports: the suite's files in order (the workers run the
    ``starts_first`` scenarios first, which puts them first within their file)."""
    ordered = sorted(nodeids, key=lambda nodeid: nodeid.partition("::")[0])
    return {nodeid: index for index, nodeid in enumerate(ordered)}


def engine_of(nodeid: str, engines: list[str]) -> str:
    """The engine a scenario's id ends in (``test_x[N=5-fakeredis]``), "" with a single engine."""
    for name in engines:
        if name and (nodeid.endswith(f"-{name}]") or nodeid.endswith(f"[{name}]")):
            return name
    return ""


def scenario_from_nodeid(nodeid: str, engine: str = "") -> dict[str, Any]:
    """What can be said of a scenario no worker described (it crashed before it started)."""
    path, _, name = nodeid.partition("::")
    scenario, _, point = name.partition("[")
    point = point.rstrip("]")
    if engine:
        point = point.removesuffix(engine).removesuffix("-")
    return {"scenario": scenario, "group": scenario_group(path), "point": point, "requires": [], "engine": engine}
