"""A factory whose client and URL are alternatives: given one of them, and said which.

The suite passes a store every contract parameter its factory takes, the redis client and
``redis_url`` both. Some libraries take exactly one way to reach Redis and refuse two (Microsoft
Agent Framework's ``RedisHistoryProvider``: "redis_client, redis_url, and credential_provider are
mutually exclusive"). Judged as bound, such a store would fail every scenario with its constructor's
error. So a worker that binds a factory taking both builds one instance first (:func:`choose`); if
that raises, it tries the client alone, then the URL alone, and keeps the first that builds, once
both together have been refused a second time (a refusal that does not come again was not of the two
together), with the other withheld from every build of the run (:attr:`.StoreBinding.withheld`) and
said in the run's header. When neither builds alone, both are passed as before and the scenarios
report the error.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

from .binding import StoreBinding
from .frames import exception_chain

ALTERNATIVES = ("redis", "redis_url")   # the client first: the suite's client is the one it can observe


def choose(binding: StoreBinding, builds: Callable[[StoreBinding], Any]) -> tuple[StoreBinding, str | None]:
    """``binding``, or one withholding the client or the URL where the factory refuses the two together
    (``builds(binding)`` builds one instance, raising what the factory raised); and what to say of it."""
    if not all(binding.accepts(name) for name in ALTERNATIVES):
        return binding, None
    try:
        builds(binding)
        return binding, None
    except Exception as both:   # noqa: BLE001 (the factory's, whatever it is)
        refused = _first_line(both)
    for given in ALTERNATIVES:
        withheld = frozenset(ALTERNATIVES) - {given}
        alone = dataclasses.replace(binding, withheld=binding.withheld | withheld)
        try:
            builds(alone)
        except Exception:   # noqa: BLE001
            continue
        if _builds(builds, binding):   # both refused once and built now: that refusal was not of the two together
            return binding, None
        what = "the client the suite opens" if given == "redis" else "the URL of the server under test"
        own = binding.parameters[given]   # a framework's factory takes the contract's names: its class's are its own
        named = f", as {', '.join(own)}" if own != (given,) else ""
        return alone, (f"the store refused the client and the URL together ({refused}): it is given {what} "
                       f"alone{named}, in every scenario")
    return binding, None


def _builds(builds: Callable[[StoreBinding], Any], binding: StoreBinding) -> bool:
    try:
        builds(binding)
    except Exception:   # noqa: BLE001
        return False
    return True


def _first_line(exc: BaseException) -> str:
    """The exception that refused, as its type and the first line of its message (its cause's where it has
    none)."""
    shown = next((link for link in exception_chain(exc) if str(link).strip()), exc)
    return f"{type(shown).__name__}: {str(shown).strip().splitlines()[0][:200]}" if str(shown).strip() else \
        type(shown).__name__
