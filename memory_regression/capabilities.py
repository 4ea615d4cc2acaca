"""Capabilities: what a store claims to do, derived from its factory and methods.

A scenario declares the capabilities it needs with ``@pytest.mark.requires(...)``.
When the store lacks one, the scenario is reported as skipped with that reason.
The conformance level names every capability whose scenarios all passed.
"""

from __future__ import annotations

from enum import Enum

from .contract import StoreBinding


class Capability(str, Enum):
    """Each value is also the word used in the conformance level (``core+count-window+ttl``)."""

    CORE = "core"                  # append, load; always present
    COUNT_WINDOW = "count-window"  # the factory takes max_messages: keeps the last N messages
    TOKEN_WINDOW = "token-window"  # the factory takes max_tokens: keeps the newest messages within budget
    TTL = "ttl"                    # the factory takes ttl: every key expires, appends refresh it
    NAMESPACE = "namespace"        # the factory takes namespace: every key lives under that prefix
    CLEAR = "clear"                # a clear method exists: it empties one session and no other
    ASYNC = "async"                # the methods are coroutines, run on an event loop

    def __str__(self) -> str:
        return self.value


_FROM_PARAMETER = {
    "max_messages": Capability.COUNT_WINDOW,
    "max_tokens": Capability.TOKEN_WINDOW,
    "ttl": Capability.TTL,
    "namespace": Capability.NAMESPACE,
}


def detect(binding: StoreBinding) -> frozenset[Capability]:
    """Capabilities follow from the parameters the factory names and the methods it has.

    A factory that only takes ``**kwargs`` receives every value but claims nothing beyond core.
    """
    found = {Capability.CORE}
    found.update(cap for name, cap in _FROM_PARAMETER.items() if binding.accepts(name))
    if binding.clear_method:
        found.add(Capability.CLEAR)
    if binding.is_async:
        found.add(Capability.ASYNC)
    return frozenset(found)


def conformance_level(capabilities: frozenset[Capability],
                      outcomes: list[tuple[frozenset[Capability], str]]) -> str:
    """Join the capabilities that the store has and whose scenarios all passed.

    ``outcomes`` holds, per scenario that ran, the capabilities it required and its outcome.
    A failed core scenario makes the level ``none``; a capability none of whose scenarios ran
    (deselected with -k) is not claimed. Async is proven by the other scenarios running on the
    event loop.
    """
    def verdict(cap: Capability) -> bool | None:
        relevant = [o for req, o in outcomes if cap in req or (cap is Capability.CORE and not req)]
        return all(o == "passed" for o in relevant) if relevant else None

    if verdict(Capability.CORE) is False:
        return "none"
    level = [cap for cap in Capability
             if cap is not Capability.ASYNC and cap in capabilities and verdict(cap)]
    if level and Capability.ASYNC in capabilities:
        level.append(Capability.ASYNC)
    return "+".join(c.value for c in level) or "none"


# why a scenario is skipped when the store lacks a capability: what to add to claim it
MISSING_REASON = {
    Capability.COUNT_WINDOW: "its factory takes no max_messages (or max_history, window, window_size)",
    Capability.TOKEN_WINDOW: "its factory takes no max_tokens (or token_limit, max_token_limit)",
    Capability.TTL: "its factory takes no ttl (or ttl_seconds, expire)",
    Capability.NAMESPACE: "its factory takes no namespace (or prefix, key_prefix)",
    Capability.CLEAR: "it has no clear, delete, clear_session or reset method",
    Capability.ASYNC: "its methods are not coroutines",
    Capability.CORE: "",
}
