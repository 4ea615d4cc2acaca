"""What a worker tells the runner over the channel (:mod:`.supervisor`): one frozen dataclass per
kind of message, and their wire form, a JSON datagram ``{"kind": ..., "worker": ..., fields}``.

:func:`decode` takes only a known kind whose fields are all there with their types: a datagram that
is not one of these (another process's, or one cut short) is refused with ``ValueError``. The
runner's :class:`~.supervisor.Supervisor` has one handler per kind, ``worker_<kind>``.
"""

from __future__ import annotations

import json
import typing
import dataclasses
from dataclasses import asdict, dataclass, field, fields
from typing import Any, ClassVar, Dict, List, Optional, Union

from ..groups import scenario_group

MESSAGE_LIMIT = 60_000           # bytes of one datagram; a longer text is cut by the sender, the JSON kept whole


@dataclass(frozen=True)
class Hello:
    """A worker started: its pid, which the runner takes only from that process itself."""

    kind: ClassVar[str] = "hello"
    pid: int


@dataclass(frozen=True)
class StoreDescription:
    """The store as a worker bound it, for the reports' header: where it is defined, what it claims
    and how it was bound, what was observed of it, and the options that would fix its binding."""

    file: Optional[str]
    line: Optional[int]
    capabilities: List[str]
    shape: str
    counters: Dict[str, str]          # model profile -> its counter, as the store is told to count
    unfilled: str                     # the parameters left at their defaults
    observations: List[str]
    proposals: List[str]
    fixes: Dict[str, str]             # option key -> value


@dataclass(frozen=True)
class ScenarioInfo:
    """What the reports say about a scenario: its name, group, matrix point, the capabilities it
    requires and the guarantees it checks, and its engine ("" with one)."""

    scenario: str
    group: str
    point: str
    requires: List[str]
    guarantees: List[str]
    engine: str


def scenario_from_nodeid(nodeid: str, engine: str = "") -> ScenarioInfo:
    """What can be said of a scenario from its id alone (no worker described it: it crashed before it
    started)."""
    path, _, name = nodeid.partition("::")
    scenario, _, point = name.partition("[")
    point = point.rstrip("]")
    if engine:
        point = point.removesuffix(engine).removesuffix("-")
    return ScenarioInfo(scenario, scenario_group(path), point, [], [], engine)


@dataclass(frozen=True)
class Bound:
    """The worker bound the store: how (the store's description, for the reports' header)."""

    kind: ClassVar[str] = "bound"
    store: StoreDescription


@dataclass(frozen=True)
class Abort:
    """The worker cannot run the store (a usage error, Redis gone, the suite's own fault): the run
    stops with ``status``, a :class:`~.results.Status` value, and ``message``; ``fixes``, the options
    that fix a binding's problems where the store's names tell them (option key -> value)."""

    kind: ClassVar[str] = "abort"
    status: str
    message: str
    fixes: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Start:
    """A scenario starts: its node id, and what it is."""

    kind: ClassVar[str] = "start"
    nodeid: str
    scenario: ScenarioInfo


@dataclass(frozen=True)
class End:
    """A scenario ended."""

    kind: ClassVar[str] = "end"
    nodeid: str


WorkerMessage = Union[Hello, Bound, Abort, Start, End]
KINDS: dict[str, type] = {cls.kind: cls for cls in typing.get_args(WorkerMessage)}


def encode(worker: str, message: WorkerMessage) -> bytes:
    """``message`` of ``worker`` as one datagram of at most MESSAGE_LIMIT bytes: a longer one has its
    longest text cut until it fits."""
    values = asdict(message)
    while True:
        data = json.dumps({"kind": message.kind, "worker": worker, **values}, ensure_ascii=False).encode()
        texts = [name for name, value in values.items() if isinstance(value, str)]
        if len(data) <= MESSAGE_LIMIT or not texts:
            return data
        longest = max(texts, key=lambda name: len(values[name]))
        values[longest] = values[longest][:len(values[longest]) // 2] + " [cut]"


def decode(data: bytes | dict[str, Any]) -> tuple[str, WorkerMessage]:
    """The worker a datagram (or its parsed form) comes from, and its message; ``ValueError`` for
    anything else."""
    parsed = json.loads(data) if isinstance(data, bytes) else data
    if not isinstance(parsed, dict) or not isinstance(parsed.get("worker"), str) or parsed.get("kind") not in KINDS:
        raise ValueError("not a worker's message")
    cls = KINDS[parsed["kind"]]
    return parsed["worker"], typed(parsed, cls, f"a {cls.kind} message")


def typed(value: Any, hint: Any, what: str) -> Any:
    """``value`` as ``hint`` says (a dataclass, str, int, bool, a list or dict of them, or Optional of one;
    Any takes any plain JSON value), checked all the way down: ``ValueError`` naming what is wrong."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any:
        return value
    if dataclasses.is_dataclass(hint):
        if not isinstance(value, dict):
            raise ValueError(f"{what}: not an object")
        hints = typing.get_type_hints(hint)
        return hint(**{member.name: typed(value.get(member.name), hints[member.name], f"{what}'s {member.name}")
                       for member in fields(hint)})
    if origin is Union:   # Optional[X]
        return None if value is None and type(None) in args else typed(value, args[0], what)
    if origin is list:
        if not isinstance(value, list):
            raise ValueError(f"{what}: not a list")
        return [typed(item, args[0], f"{what}[{i}]") for i, item in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict):
            raise ValueError(f"{what}: not an object")
        return {typed(key, args[0], what): typed(item, args[1], what) for key, item in value.items()}
    if not isinstance(value, hint) or (isinstance(value, bool) and hint is not bool):
        raise ValueError(f"{what}: not a {hint.__name__}")
    return value
