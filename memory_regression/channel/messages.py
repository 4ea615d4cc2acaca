"""What a worker tells the runner over the channel (:mod:`.supervisor`): one frozen dataclass per
kind of message, and their wire form, a JSON datagram ``{"kind": ..., "worker": ..., fields}``.

:func:`decode` takes only a known kind whose fields are all there with their types: a datagram that
is not one of these (another process's, or one cut short) is refused with ``ValueError``. The
runner's :class:`~.supervisor.Supervisor` has one handler per kind, ``worker_<kind>``.
"""

from __future__ import annotations

import json
import typing
from dataclasses import asdict, dataclass, field, fields
from typing import Any, ClassVar, Union

MESSAGE_LIMIT = 60_000           # bytes of one datagram; a longer text is cut by the sender, the JSON kept whole


@dataclass(frozen=True)
class Hello:
    """A worker started: its pid, which the runner takes only from that process itself."""

    kind: ClassVar[str] = "hello"
    pid: int


@dataclass(frozen=True)
class Bound:
    """The worker bound the store: how (the store's description, for the reports' header)."""

    kind: ClassVar[str] = "bound"
    store: dict


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
    """A scenario starts: its node id, and what it is (``worker.scenario_info``)."""

    kind: ClassVar[str] = "start"
    nodeid: str
    scenario: dict


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
    hints = typing.get_type_hints(cls)
    values = {}
    for member in fields(cls):
        value = parsed.get(member.name)
        if not isinstance(value, hints[member.name]) or isinstance(value, bool):
            raise ValueError(f"a {cls.kind} message without its {member.name}")
        values[member.name] = value
    return parsed["worker"], cls(**values)
