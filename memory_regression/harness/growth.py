"""Appends within a time budget (fixture ``append_within``), and whether a store's append time
grows with its history: the steady-appends guarantee.

:func:`timed_appends` appends a scenario's messages to one session until its budget is spent,
timing each on the wall clock and on the worker process's CPU clock, and every
:data:`CONTROL_EVERY` appends times one more to a short session of its own, the control (on a
Redis Cluster, on the session's node: :func:`control_ids`). :func:`growth_finding` then compares
the first tenth of the appends and the last, each against the control appends made at the same
time: the history grew the append time only when the last appends are slower than their controls
by far more than the first were. A machine busy at either end slows the appends and their controls
alike, so it neither makes nor hides a growth. A busy machine's delays weigh more on the short
control appends than on long ones, which can hide a growth on the wall clock: the CPU clock, which
those delays do not run, then shows it. Appends slowed together with their controls on both
clocks are no sign of the history (a busy machine, or a store slowed by all it holds), which is a
note, not a warning.
"""

from __future__ import annotations

import binascii
import functools
import itertools
import statistics
import string
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, NamedTuple

from ..contract.capabilities import Guarantee
from ..contract.rules import Message
from ..settings import BUDGET_SHARE

if TYPE_CHECKING:
    from ..contract.adapter import StoreAdapter
    from .context import ScenarioContext

GROWTH_SAMPLES = 200         # appends needed before a growth of their time is judged (5 controls in a tenth)
GROWTH_RATIO = 3             # the last tenth's appends against their controls, over the first's: a growth from this
GROWTH_FLOOR_S = 0.001       # and the last slower than their controls by this (a fast store's append takes a tenth)
GROWTH_SLOWED = 2            # and the last tenth's appends this many times slower than the first's, on their own
CONTROL_EVERY = 4            # one control append after every 4 appends to the session
CONTROL_SESSION_LENGTH = 10  # appends to a control session before the next begins: its history stays short
ID_CHARACTERS = string.ascii_letters + string.digits + "-_"   # of the control sessions' ids: no hash-tag braces


@dataclass(frozen=True)
class TimedAppends:
    """What :func:`append_within` appended, of how many, within which budget."""

    messages: list[Message]
    wanted: int
    budget_s: float

    @property
    def cut_short(self) -> bool:
        return len(self.messages) < self.wanted


def append_within(context: "ScenarioContext", store: "StoreAdapter", session_id: str, messages: list[Message],
                  budget_s: float, control: bool = True) -> TimedAppends:
    """Append ``messages`` in order until all are in or ``budget_s`` has passed, for a scenario
    whose size only serves to find caps: a slow but correct store is checked on what it
    appended, instead of being cut off as a hang. The budget is at most --append-budget, and a
    quarter of the scenario timeout, which leaves the check room. With ``control``, appends to
    short sessions of their own run between (:func:`timed_appends`), and a store whose append
    time grows with the history gets a warning (steady-appends) saying by how much
    (:func:`growth_finding`); fewer than GROWTH_SAMPLES appends leave the guarantee unjudged,
    which a note says."""
    settings = context.settings
    budget_s = min(budget_s, settings.append_budget or budget_s, settings.scenario_timeout / BUDGET_SHARE)
    started = time.perf_counter()
    times = timed_appends(store, session_id, messages, budget_s, control)
    warning, note = growth_finding(times, time.perf_counter() - started)
    if control and len(times.history) < GROWTH_SAMPLES:
        context.findings.not_judged(Guarantee.STEADY_APPENDS, (
            f"steady-appends not judged: {len(times.history):,} appends within the {budget_s:g} s budget, fewer than "
            f"the {GROWTH_SAMPLES} a growth of their time is judged on"))
    if warning:
        context.findings.warn(Guarantee.STEADY_APPENDS, warning)
    if note:
        context.findings.note(note)
    return TimedAppends(messages[:len(times.history)], len(messages), budget_s)


class Took(NamedTuple):
    """How long one call took: on the wall clock, and on the worker process's CPU clock (the
    store's code and its client library, whatever thread they ran in; not the wait for Redis)."""

    wall: float
    cpu: float


@dataclass
class AppendTimes:
    """What each append to the session took, in order; and each control append's, with how many
    appends to the session had been made when it ran."""

    history: list[Took] = field(default_factory=list)
    control: list[tuple[int, Took]] = field(default_factory=list)


def timed_appends(store: Any, session_id: str, messages: Iterable[Message], budget_s: float,
                  control: bool) -> AppendTimes:
    """Append ``messages`` to ``session_id`` in order until all are in or ``budget_s`` has passed;
    with ``control``, every CONTROL_EVERY appends one more to a control session
    (:func:`control_ids`), a new one every CONTROL_SESSION_LENGTH of them."""
    times = AppendTimes()
    sessions = control_ids(session_id)
    control_session = ""
    started = time.perf_counter()
    for message in messages:
        if time.perf_counter() - started >= budget_s:
            break
        times.history.append(_timed(store.append, session_id, message.role, message.content))
        made = len(times.history)
        if control and made % CONTROL_EVERY == 0:
            controls = len(times.control)
            if controls % CONTROL_SESSION_LENGTH == 0:
                control_session = next(sessions)
            seconds = _timed(store.append, control_session, "user", f"control {controls}")
            times.control.append((made, seconds))
    return times


def control_ids(session_id: str) -> Iterator[str]:
    """Ids for control sessions of ``session_id``: as long as it in bytes and of the same CRC16, so
    that on a Redis Cluster any key that holds one of them where it holds the session id (after
    the same prefix, before the same suffix, in a hash tag or not) hashes to the session's slot, and
    so lives on its node: a node busier than the others then slows the appends and their controls
    alike instead of passing for a growth. (CRC16 with a zero start, Redis' key hash, is linear:
    keys alike but for equal-length parts of equal CRC16 have equal CRC16.) Where the id is too
    short to hold a control's number, the controls are named after it, wherever they hash to."""
    encoded = session_id.encode()
    width = len(encoded) - 2   # of a control id's stem, whose tail of two characters completes it
    target, tails = binascii.crc_hqx(encoded, 0), _crc16_tails()
    for k in itertools.count():
        head = f"c{k}-"
        if len(head) > width:
            yield from (f"{session_id} control {j}" for j in itertools.count(k))
            return
        for fill in ID_CHARACTERS:
            stem = head.ljust(width, fill)
            tail = tails.get(target ^ binascii.crc_hqx(stem.encode() + b"\0\0", 0))
            if tail is not None:
                yield stem + tail
                break


@functools.cache
def _crc16_tails() -> dict[int, str]:
    """Every two characters of ID_CHARACTERS by their CRC16 (4,096 of the 65,536 values)."""
    return {binascii.crc_hqx((a + b).encode(), 0): a + b for a in ID_CHARACTERS for b in ID_CHARACTERS}


def timed(call: Callable[[], Any]) -> float:
    """How long ``call()`` took, in seconds of the wall clock."""
    before = time.perf_counter()
    call()
    return time.perf_counter() - before


def _timed(call: Any, *args: Any) -> Took:
    wall, cpu = time.perf_counter(), time.process_time()
    call(*args)
    return Took(time.perf_counter() - wall, time.process_time() - cpu)


@dataclass(frozen=True)
class Tenths:
    """On one clock, the medians of the first tenth of the appends and of the last, and of the
    control appends made during each."""

    first: float
    last: float
    control_first: float
    control_last: float

    @classmethod
    def of(cls, times: AppendTimes, clock: str) -> "Tenths":
        history = [getattr(took, clock) for took in times.history]
        tenth = len(history) // 10
        # every CONTROL_EVERY appends one control: each tenth (GROWTH_SAMPLES // 10 or more) holds some
        return cls(statistics.median(history[:tenth]), statistics.median(history[-tenth:]),
                   statistics.median(getattr(took, clock) for made, took in times.control if made <= tenth),
                   statistics.median(getattr(took, clock) for made, took in times.control
                                     if made > len(history) - tenth))

    def grew_with_history(self) -> bool:
        """The last tenth's appends GROWTH_RATIO times slower against their controls than the
        first tenth's against theirs, GROWTH_FLOOR_S slower than their controls, and GROWTH_SLOWED
        times slower than the first tenth's on their own."""
        return (self.last * self.control_first >= GROWTH_RATIO * self.first * self.control_last
                and self.last - self.control_last >= GROWTH_FLOOR_S and self.last >= GROWTH_SLOWED * self.first)

    def slowed(self) -> bool:
        return self.last >= GROWTH_RATIO * self.first and self.last - self.first >= GROWTH_FLOOR_S

    def controls(self) -> str:
        return f"{_ms(self.control_first)} each at the start and {_ms(self.control_last)} at the end"


def growth_finding(times: AppendTimes, seconds: float) -> tuple[str | None, str | None]:
    """(a warning, a note) on how the append time grew over ``times``, which took ``seconds``.

    On each clock (:class:`Took`), medians of the first tenth of the appends and of the last, each
    set against the median of the control appends made during that tenth (sessions of at most
    CONTROL_SESSION_LENGTH messages): the warning when, on either clock, the history grew the
    appends (:meth:`Tenths.grew_with_history`). Medians, so pauses of the machine do not count; each
    tenth against its own controls, so a machine busy at the start or the end neither makes nor
    hides a growth. Appends that did not slow GROWTH_SLOWED times on their own did not grow with
    the history, however much more their controls sped up (a machine much quieter at the end,
    where a busy machine's delays weighed more on the short control appends). Those delays can as
    well slow the controls more than the appends at the end, hiding a growth on the wall clock;
    they do not run the CPU clock, which then shows it (a growth in the store's code or its
    client, not one in Redis). When the appends slowed GROWTH_RATIO times (and GROWTH_FLOOR_S) but
    their controls slowed with them on both clocks, the session's history is not the cause (the
    machine was busy, or the store slows with all it holds): a note says so. Fewer than
    GROWTH_SAMPLES appends, or appends timed without a control, are not judged; a store whose
    appends slow with all the data it holds, not with the session's, is not warned of."""
    if len(times.history) < GROWTH_SAMPLES or not times.control:   # without a control, a growth may be the machine's
        return None, None
    wall, cpu = Tenths.of(times, "wall"), Tenths.of(times, "cpu")
    tenth = len(times.history) // 10
    measured = (f"{len(times.history):,} appends in {seconds:.1f} s, the first {tenth:,} at {_ms(wall.first)} each, "
                f"the last {tenth:,} at {_ms(wall.last)} each (medians, {wall.last / wall.first:.1f}×)")
    on_cpu = (f"the worker's CPU time per append went from {_ms(cpu.first)} to {_ms(cpu.last)} (appends to short "
              f"sessions: {_ms(cpu.control_first)} and {_ms(cpu.control_last)})")
    on_wall_clock, on_cpu_clock = wall.grew_with_history(), cpu.grew_with_history()
    if on_wall_clock or on_cpu_clock:
        controls = f"while appends to short sessions made meanwhile took {wall.controls()}"
        if not on_wall_clock and wall.control_last >= GROWTH_SLOWED * wall.control_first:
            controls += " (they slowed too: a busy machine or server, whose delays weigh most on short calls)"
        where = (": the growth is in the store's code or its client library (a busy machine does not lengthen CPU "
                 "time)" if on_cpu_clock else "")
        return f"append time grows with history length: {measured}, {controls}; {on_cpu}{where}", None
    if wall.slowed():
        return None, (f"appends slowed during the run: {measured}; appends to short sessions made meanwhile slowed "
                      f"with them ({wall.controls()}), so not with the session's history: the machine was busy, "
                      f"or the store slows with all the data it holds; {on_cpu} (no warning)")
    return None, None


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"
