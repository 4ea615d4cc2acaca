"""Binding faults: what a store raised at binding (the probe of :mod:`.observe`, its first build and
calls, on a server that is up) that says the suite cannot build or call it as bound, rather than that
it misbehaves. Every scenario would fail the same way, so the run stops once with a usage error
saying what to fix, instead of failing every scenario of the store (:func:`binding_fault`).

Two kinds are told apart on evidence:

- a call the store never entered: a ``TypeError`` whose traceback holds no frame of the store's (the
  arguments did not fit its signature: a parameter missing or unexpected);
- a build that refused a value the suite passes: a ``TypeError`` or ``ValueError`` raised while
  building the store whose message names one of the parameters the suite filled (``ttl must be a
  timedelta``; ``redis_client, redis_url ... are mutually exclusive``).

Anything else the store raised (a bug in its constructor, as LlamaIndex's chat store on a cluster URL
has, a connection it cannot make) is left to the scenarios, which judge it.
"""

from __future__ import annotations

import re
import traceback

from ..contract.adapter import FACTORY, raised_in
from ..contract.binding import StoreBinding
from ..contract.frames import harness_frame, user_traceback

CONTRACT = "docs/contract.md"


def binding_fault(binding: StoreBinding, exc: BaseException) -> str | None:
    """What to tell the user of ``exc``, raised by the store's first build or call at binding, when it
    is a binding fault; None when it is for the scenarios to judge."""
    member = raised_in(exc)
    if not member:
        return None
    call = "building the store" if member == FACTORY else f"calling its {member}"
    short = f"{type(exc).__name__}: {str(exc)[:300]}"
    if isinstance(exc, TypeError) and not _entered_store(exc):
        return (f"--store {binding.spec!r}: {call} as the suite binds it raised {short}, before any code of the "
                f"store's ran: the arguments do not fit its signature. The suite passes {_passed(binding)} "
                f"({CONTRACT}); give the store those, or wrap it in a factory function that does")
    named = _named(binding, exc) if member == FACTORY and isinstance(exc, (TypeError, ValueError)) else []
    if named:
        which = ", ".join(f"{name!r} (the contract's {canonical})" for name, canonical in named)
        return (f"--store {binding.spec!r}: building the store with what the suite passes raised {short}, which "
                f"names {which}: the store takes it otherwise than the contract gives it ({CONTRACT} says what "
                f"each is). Wrap the store in a factory function that converts what the suite passes.\n"
                f"{user_traceback(exc)}")
    return None


def _entered_store(exc: BaseException) -> bool:
    """Whether ``exc`` was raised inside code that is not the harness's: the innermost frame of its
    traceback is the store's (or a library's it called); a call whose arguments did not fit is raised
    in the harness's frame that made it."""
    frames = traceback.extract_tb(exc.__traceback__)
    return bool(frames) and not harness_frame(frames[-1].filename, frames[-1].name)


def _named(binding: StoreBinding, exc: BaseException) -> list[tuple[str, str]]:
    """The parameters the suite filled (each by the factory's own name) that ``exc``'s message names."""
    text = str(exc)
    return [(own, canonical) for canonical, owns in binding.parameters.items() if binding.accepts(canonical)
            for own in owns if re.search(rf"(?<![\w.]){re.escape(own)}(?![\w(])", text)]


def _passed(binding: StoreBinding) -> str:
    return ", ".join(own for canonical, owns in binding.parameters.items() if binding.accepts(canonical)
                     for own in owns) or "no parameter"
