"""Polling a store until its backends agree (fixture ``until_consistent``), for the consistency
scenarios: how long a store over two backends takes to say its copies are the same."""

from __future__ import annotations

import time
from dataclasses import dataclass

import tenacity

from ..contract.adapter import StoreAdapter
from .context import ScenarioContext
from ..settings import BUDGET_SHARE


@dataclass(frozen=True)
class ConsistencyWait:
    """What :func:`until_consistent` saw: for each session whose backends came to agree, the seconds
    until consistent_state first said so; the sessions still inconsistent when the wait ended; how
    many rounds of calls it took, and how long it waited of how long it could."""

    agreed: dict[str, float]
    pending: list[str]
    polls: int
    waited_s: float
    timeout_s: float


def until_consistent(context: ScenarioContext, store: StoreAdapter, sessions: list[str]) -> ConsistencyWait:
    """Call the store's consistent_state for each of ``sessions`` over and over (with tenacity,
    waiting 2 ms more each round, at most 50 ms; an async store's polls and waits run on the
    scenario's event loop, so that tasks of its own go on meanwhile) until it has said True for
    every one, or ``--consistency-timeout`` has passed (at most a quarter of the scenario
    timeout). A call that raises, or returns anything but a bool, fails the scenario naming the
    call; one that hangs is cut off by the call timeout like any other call of the store."""
    settings = context.settings
    timeout = min(settings.consistency_timeout, settings.scenario_timeout / BUDGET_SHARE)
    agreed: dict[str, float] = {}
    polls = 0
    started = time.perf_counter()

    async def all_agree() -> bool:
        nonlocal polls
        polls += 1
        for session in [s for s in sessions if s not in agreed]:
            call = f"{store.binding.members['consistency']}({session!r})"
            try:
                value = await store.aconsistent(session)
            except Exception as error:
                raise AssertionError(f"the store's {call} raised {type(error).__name__}: {error} (it says whether "
                                     "the store's backends agree: return False while they do not, and raise "
                                     "only when the store cannot tell)") from error
            if not isinstance(value, bool):
                raise AssertionError(f"the store's {call} returned {value!r:.80}, not True or False")
            if value:
                agreed[session] = time.perf_counter() - started
        return len(agreed) == len(sessions)

    context.run_awaitable(tenacity.AsyncRetrying(
        stop=tenacity.stop_after_delay(timeout),
        wait=tenacity.wait_incrementing(start=0.002, increment=0.002, max=0.05),
        retry=tenacity.retry_if_result(lambda done: not done),
        retry_error_callback=lambda state: state.outcome.result())(all_agree))
    return ConsistencyWait(agreed, [s for s in sessions if s not in agreed], polls,
                           time.perf_counter() - started, timeout)
