"""Latency: how long an append and a load of the store take, against what Redis itself takes.

A memory read sits on the path of every model call, and a write on the path of every turn. The
scenario times the store's appends and loads on the run's server and, in the same run and
interleaved with them, the raw Redis floor: an RPUSH of one element of the message's size and an
LRANGE of as many elements as the load returned, through redis-py on the same server. The figures
(p50, p95, p99, and each as a ratio to the floor) go to every report: summary.json's ``latency``,
summary.md's table, junit.xml's properties and report.html's chart. Ratios measured in one run
hold still on a noisy CI machine, where milliseconds do not.

Without ``--latency-budget-ms`` latency is a finding, never a failure. With it, the p95 of an
operation over its budget fails the scenario: p95, because one call in twenty slower than the
budget is what a user notices, while a p99 of a few hundred samples is one or two calls a pause
of the machine decides.
"""

import statistics
import time

import pytest

from memory_regression.contract.capabilities import Capability
from memory_regression.contract.rules import Message
from memory_regression.reports.figures import LATENCY_OPERATIONS
from memory_regression.harness.growth import timed

REAL_SERVER = "round trips to a Redis server over a socket, which fakeredis, inside the process, does not make"
CONTENT_BYTES = 200       # each message's content, as the floor's elements
UNWINDOWED_HISTORY = 20   # messages in the session before sampling, for a store without a count window
MIN_SAMPLES = 20          # of each operation, however slow the store
MAX_SAMPLES = 200         # of each operation, however fast
SAMPLING_S = 0.15         # past MIN_SAMPLES, sampling stops once this much time has passed
FLOOR_COMMANDS = {"append": "RPUSH", "load": "LRANGE"}


def sized_message(index: int) -> Message:
    """A message of CONTENT_BYTES ASCII characters, numbered, user and assistant alternating."""
    head = f"latency {index + 1:05d} "
    return Message("user" if index % 2 == 0 else "assistant", head + "x" * (CONTENT_BYTES - len(head)))


def percentiles(seconds: list[float]) -> dict[str, float]:
    """p50, p95 and p99 of ``seconds``, in milliseconds."""
    cuts = statistics.quantiles(seconds, n=100, method="inclusive")
    return {"p50_ms": cuts[49] * 1000, "p95_ms": cuts[94] * 1000, "p99_ms": cuts[98] * 1000}


def figures(store: list[float], floor: list[float], budget: float | None) -> dict:
    """An operation's percentiles, the floor's, their ratios and its budget (None without one)."""
    own, raw = percentiles(store), percentiles(floor)
    found = {name: round(value, 4) for name, value in own.items()}
    found.update((f"floor_{name}", round(value, 4)) for name, value in raw.items())
    found.update((f"ratio_{name.removesuffix('_ms')}", round(own[name] / raw[name], 2) if raw[name] else None)
                 for name in own)
    found["budget_ms"] = budget
    return found


def over_budget(found: dict[str, dict], budget: dict[str, float], samples: int, where: str) -> str | None:
    """The operations whose p95 is over their ``--latency-budget-ms``, each with its figures and the
    floor's, so that the ratio says how much of the time is the store's; None if none is."""
    over = [name for name in LATENCY_OPERATIONS if name in budget and found[name]["p95_ms"] > budget[name]]
    if not over:
        return None
    return "; ".join(
        f"{name} p95 {found[name]['p95_ms']:.3f} ms is over the budget of {budget[name]:g} ms "
        f"(--latency-budget-ms {name}={budget[name]:g}): p50 {found[name]['p50_ms']:.3f} ms, p99 "
        f"{found[name]['p99_ms']:.3f} ms over {samples} {name}s of {CONTENT_BYTES}-byte messages ({where}); "
        f"the raw Redis floor ({FLOOR_COMMANDS[name]} of the same size) took {found[name]['floor_p95_ms']:.3f} ms "
        f"at p95, so the store took {found[name]['ratio_p95']}× the floor" for name in over
    ) + ": the time is the store's own (its round trips, serialisation, locks, sleeps), not Redis'"


@pytest.mark.real_server(REAL_SERVER)
def test_append_and_load_latency_against_the_redis_floor(stores, findings, window):
    """The session is filled to its window (N messages; 20 for a store without a count window), then
    appends and loads of 200-byte messages are timed in turn with an RPUSH of an element of that
    size and an LRANGE of as many elements as the load returned, on one client of the suite's: at
    least 20 and at most 200 of each, for at most 0.15 s past the first 20. p50, p95 and p99 of each,
    and their ratios to the floor, are reported; with ``--latency-budget-ms`` a p95 over its budget
    fails.

    If this fails: the store's own time, not Redis', is over the budget (the message gives the
    floor, so the ratio says how much is the store's): count its round trips per call (a
    pipeline or a MULTI sends several commands in one; a load that reads the whole history to
    return the window reads more than it needs), look for work that grows with the history
    (re-serialising, re-counting tokens of every message), and for sleeps, locks and retries on
    the path of every call."""
    history = window or UNWINDOWED_HISTORY
    store = stores.new(max_messages=window) if window else stores.new()
    session, floor_key = "latency", f"{stores.namespace}latency-floor"
    for index in range(history):
        store.add(session, sized_message(index))
    client = stores.raw_client()

    def floor(command):   # a call of the raw client, on the scenario's event loop for an async store
        return lambda: stores.run_awaitable(command()) if stores.has(Capability.ASYNC) else command()

    floor(lambda: client.rpush(floor_key, *(sized_message(i).content for i in range(history))))()
    samples = {name: ([], []) for name in LATENCY_OPERATIONS}   # operation -> (store's, floor's)
    loaded: list[int] = []
    started = time.perf_counter()
    try:
        while len(loaded) < MAX_SAMPLES and (len(loaded) < MIN_SAMPLES or time.perf_counter() - started < SAMPLING_S):
            message = sized_message(history + len(loaded))
            samples["append"][0].append(timed(lambda: store.add(session, message)))
            samples["append"][1].append(timed(floor(lambda: client.rpush(floor_key, message.content))))
            size = []
            samples["load"][0].append(timed(lambda: size.append(len(store.load(session)))))
            loaded.append(size[0])
            samples["load"][1].append(timed(floor(lambda: client.lrange(floor_key, -max(size[0], 1), -1))))
    finally:
        floor(lambda: client.delete(floor_key))()
    budget = stores.latency_budget_ms
    found = {name: figures(*samples[name], budget.get(name)) for name in LATENCY_OPERATIONS}
    where = f"N={window}" if window else f"a store without a count window, {history} messages before sampling"
    findings.measure("latency", {"window": f"N={window}" if window else "unwindowed", "samples": len(loaded),
                                 "content_bytes": CONTENT_BYTES, "history_messages": round(statistics.median(loaded)),
                                 "floor_commands": FLOOR_COMMANDS, **found})
    over = over_budget(found, budget, len(loaded), where)
    if over:
        raise AssertionError(over)
