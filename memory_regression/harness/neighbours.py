"""A database the store shares with others: :class:`SharedDatabase`, on a redis-server of the scenario's
own (fixture ``own_server``), holds tens of thousands of keys of other applications, none in the
store's namespace, a share of them with a TTL; it says what the store's life did to them, and which
commands it ran that walk or count the whole keyspace (``INFO commandstats``: on a server of the
scenario's own, every call but the suite's few is the store's).

The keys are made with ``DEBUG POPULATE`` where the server lets the suite (``own_server(debug=True)``),
else with MSET in batches. They share one hash tag, so that the suite counts them with multi-key EXISTS on a
cluster too. A store may not empty the database at all: FLUSHDB and FLUSHALL are forbidden to it on
every server the suite starts (:data:`.servers.FORBIDDEN_COMMANDS`), so that it fails with NOPERM.
"""

from __future__ import annotations

import functools
import statistics
import time
from dataclasses import dataclass
from typing import Any

import redis

from ..contract.rules import Message
from .growth import timed

FOREIGN_KEYS = 50_000
FOREIGN_PREFIX = "{neighbour}:"
TTL_EVERY = 50             # every 50th foreign key has a TTL (1,000 of 50,000), checked afterwards
FOREIGN_TTL_MS = 3_600_000
TTL_SLACK_MS = 60_000      # a foreign key's TTL may have run down by the scenario's length, not more, nor grown
CHUNK = 1_000              # keys per EXISTS
MSET_CHUNK = 5_000         # keys per MSET, where DEBUG POPULATE is not allowed
# commands that walk or count the whole keyspace, with what they do there
KEYSPACE_COMMANDS = {"scan": "walks", "keys": "walks", "randomkey": "picks from", "dbsize": "counts"}
LIFE_SAMPLES = (5, 20)   # appends and loads timed in each phase of a store's life: at least, at most
LIFE_BUDGET_S = 0.5      # past the least, a phase's sampling stops once this much time has passed


@dataclass
class Damage:
    """What the store's life did to the foreign keys."""

    missing: int            # foreign keys gone
    ttl_changed: list[str]  # foreign keys whose TTL was changed, each as "key: before -> now"

    def text(self, total: int) -> str | None:
        parts = []
        if self.missing:
            parts.append(f"{self.missing:,} of the {total:,} keys of others are gone")
        if self.ttl_changed:
            parts.append(f"{len(self.ttl_changed):,} keys of others had their TTL changed ("
                         + ", ".join(self.ttl_changed[:3]) + ")")
        return "; ".join(parts) or None


class SharedDatabase:
    """The foreign keys on a server of the scenario's own, and the store's keyspace-wide commands."""

    def __init__(self, admin: redis.Redis, count: int = FOREIGN_KEYS):
        self.admin = admin
        self.count = count
        self.made_with = ""
        self._ttl_set_at = 0.0

    def names(self, start: int = 0, stop: int | None = None) -> list[str]:
        return [f"{FOREIGN_PREFIX}{index}" for index in range(start, min(self.count, stop or self.count))]

    def populate(self) -> None:
        """Make the foreign keys (DEBUG POPULATE, else MSET), and give every
        :data:`TTL_EVERY`-th a TTL."""
        try:
            self.admin.execute_command("DEBUG", "POPULATE", self.count, FOREIGN_PREFIX.rstrip(":"))
            self.made_with = "DEBUG POPULATE"
        except redis.ResponseError:
            for start in range(0, self.count, MSET_CHUNK):
                self.admin.mset({name: f"value of {name}" for name in self.names(start, start + MSET_CHUNK)})
            self.made_with = "MSET"
        with self.admin.pipeline(transaction=False) as pipe:
            for name in self.names()[::TTL_EVERY]:
                pipe.pexpire(name, FOREIGN_TTL_MS)
            pipe.execute()
        self._ttl_set_at = time.monotonic()

    def reset_counts(self) -> None:
        """Start counting commands afresh (CONFIG RESETSTAT)."""
        self.admin.config_resetstat()

    def keyspace_commands(self) -> dict[str, int]:
        """The calls of :data:`KEYSPACE_COMMANDS` since the last call (or :meth:`reset_counts`), by command;
        the counts start afresh."""
        stats = self.admin.info("commandstats")
        self.reset_counts()
        calls = {name.removeprefix("cmdstat_"): int(value.get("calls", 0)) for name, value in stats.items()}
        return {name: calls[name] for name in KEYSPACE_COMMANDS if calls.get(name)}

    def damage(self) -> Damage:
        """How many foreign keys are gone, and which had their TTL changed (lost, or longer than set,
        or shorter than the time since allows)."""
        names = self.names()
        present = sum(self.admin.exists(*names[start:start + CHUNK]) for start in range(0, len(names), CHUNK))
        timed = names[::TTL_EVERY]
        with self.admin.pipeline(transaction=False) as pipe:
            for name in timed:
                pipe.pttl(name)
            left = pipe.execute()
        passed_ms = (time.monotonic() - self._ttl_set_at) * 1000
        changed = [f"{name}: {FOREIGN_TTL_MS:,} ms -> {'none' if ttl == -1 else f'{ttl:,} ms'}"
                   for name, ttl in zip(timed, left)
                   if ttl != -2 and not FOREIGN_TTL_MS - passed_ms - TTL_SLACK_MS <= ttl <= FOREIGN_TTL_MS]
        return Damage(self.count - present, changed)


def walked(calls: dict[str, dict[str, int]]) -> str:
    """The keyspace-wide commands a store ran, by phase, in words (empty when none):
    ``SCAN 12 times in its clear``; then what each does."""
    said = [f"{name.upper()} {count:,} time{'s' if count > 1 else ''} in {phase}"
            for phase, counts in calls.items() for name, count in counts.items()]
    if not said:
        return ""
    names = sorted({name for counts in calls.values() for name in counts}, key=list(KEYSPACE_COMMANDS).index)
    return (", ".join(said) + ": " + "; ".join(f"{name.upper()} {KEYSPACE_COMMANDS[name]} the whole keyspace"
                                                for name in names))


def timed_life(store: Any, floor: redis.Redis, session: str) -> dict[str, tuple[float, float]]:
    """Appends and loads of ``session``, each timed beside the raw Redis floor (an RPUSH and an LRANGE
    of the suite's on the same server): the medians of the store's and of the floor's, by operation."""
    samples: dict[str, tuple[list[float], list[float]]] = {"append": ([], []), "load": ([], [])}
    floor_key, started = f"floor:{session}", time.perf_counter()
    low, high = LIFE_SAMPLES
    for index in range(high):
        if index >= low and time.perf_counter() - started > LIFE_BUDGET_S:
            break
        message = Message("user" if index % 2 == 0 else "assistant", f"{session} {index + 1}")
        samples["append"][0].append(timed(functools.partial(store.add, session, message)))
        samples["append"][1].append(timed(functools.partial(floor.rpush, floor_key, message.content)))
        samples["load"][0].append(timed(functools.partial(store.load, session)))
        samples["load"][1].append(timed(functools.partial(floor.lrange, floor_key, 0, -1)))
    floor.delete(floor_key)
    return {name: (statistics.median(own), statistics.median(raw)) for name, (own, raw) in samples.items()}


def life_text(times: dict[str, tuple[float, float]]) -> str:
    """:func:`timed_life`'s medians in words, each against the floor."""
    return ", ".join(f"an {name} {own * 1000:.3f} ms ({own / raw:.1f}× the floor)" if name == "append" else
                     f"a {name} {own * 1000:.3f} ms ({own / raw:.1f}×)" for name, (own, raw) in times.items())
