"""What a scenario's pytest id says (``suite/test_core.py::test_x[N=5-fakeredis]``): its engine and its
place in the reports (what else can be said of it, when no worker described it:
:func:`.channel.messages.scenario_from_nodeid`)."""

from __future__ import annotations



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
