"""Capabilities: what a store claims to do, in one registry.

Each entry of :data:`REGISTRY` holds a capability's name, the other spellings a scenario may use
for it, how it is detected on a store, and the skip reason a store without it gets (what to add
to claim it). A scenario declares what it needs with ``@pytest.mark.requires("ttl")``; a marker
naming a capability that is not here stops the run as a suite error at collection. The scenarios
that need a capability are the ones carrying its marker (core: those with none); summary.json lists
them per capability (``capability_scenarios``). The conformance level names every capability whose
scenarios all passed.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any, Callable, Iterable

from .binding import StoreBinding
from .rules import OPTIONAL_MEMBERS, or_list, with_aliases


class Capability(str, Enum):
    """Each value is also the word used in the conformance level (``core+count-window+ttl``)."""

    CORE = "core"
    COUNT_WINDOW = "count-window"
    TOKEN_WINDOW = "token-window"
    TTL = "ttl"
    NAMESPACE = "namespace"
    CLEAR = "clear"
    TENANTS = "tenants"
    TOOL_CALLS = "tool-calls"
    COMPACTION = "compaction"
    CONSISTENCY = "consistency"
    ASYNC = "async"

    def __str__(self) -> str:
        return self.value


class Guarantee(str, Enum):
    """What a store may hold beyond keeping its users' memory right: costs and transient effects. A
    scenario that finds one broken passes with a warning (``findings.warn``), which fails it only under
    ``--strict``; the conformance level names the guarantees whose scenarios ran and warned nothing."""

    BOUNDED_STORAGE = "bounded-storage"
    STEADY_APPENDS = "steady-appends"
    ATOMIC_WINDOW = "atomic-window"
    ANY_SESSION_ID = "any-session-id"
    PREFIXED_KEYS = "prefixed-keys"

    def __str__(self) -> str:
        return self.value


GUARANTEES: dict[Guarantee, str] = {
    Guarantee.BOUNDED_STORAGE: "what a session takes in Redis grows with the messages the store keeps: a window "
                               "bounds storage, not only what is read",
    Guarantee.STEADY_APPENDS: "an append takes as long on a long history as on a short one",
    Guarantee.ATOMIC_WINDOW: "no reader ever loads more than the window, not even between a write and its trim",
    Guarantee.ANY_SESSION_ID: "every session id an application makes is taken; none is refused at the append",
    Guarantee.PREFIXED_KEYS: "every key the store writes starts with its namespace, so that SCAN by prefix and ACL "
                             "key patterns find them all",
}


class UnknownCapability(ValueError):
    """A scenario's marker names a capability (or guarantee) the registries do not have: a suite error."""


@dataclass(frozen=True)
class CapabilitySpec:
    capability: Capability
    meaning: str                                  # what a store with it does
    detect: Callable[[StoreBinding], bool]
    missing: str                                  # why a store lacks it: the skip reason, saying what to add
    aliases: tuple[str, ...] = ()                 # other spellings accepted in @pytest.mark.requires


def _takes(canonical: str) -> tuple[Callable[[StoreBinding], bool], str]:
    """Detection and skip reason of a capability claimed by taking a contract parameter."""
    return (lambda binding: binding.accepts(canonical)), f"its factory takes no {with_aliases(canonical)}"


def _has(role: str, *also: str) -> tuple[Callable[[StoreBinding], bool], str]:
    """Detection and skip reason of a capability claimed by having the optional member ``role``
    (contract.OPTIONAL_MEMBERS) and taking the contract parameters ``also``."""
    member = OPTIONAL_MEMBERS[role]
    reason = f"it has no {or_list(member.names)} method{member.lacks}"
    reason += "".join(f", or its factory takes no {with_aliases(name)}" for name in also)
    return (lambda binding: binding.members[role] is not None and all(map(binding.accepts, also))), reason


REGISTRY: dict[Capability, CapabilitySpec] = {spec.capability: spec for spec in (
    CapabilitySpec(Capability.CORE, "append and load keep every message, in order, per session",
                   lambda binding: True, ""),
    CapabilitySpec(Capability.COUNT_WINDOW, "keeps the last N messages of a session",
                   *_takes("max_messages"), aliases=("count_window",)),
    CapabilitySpec(Capability.TOKEN_WINDOW, "keeps the newest messages that fit a token budget",
                   *_takes("max_tokens"), aliases=("token_window",)),
    CapabilitySpec(Capability.TTL, "every key expires, and appends refresh it", *_takes("ttl")),
    CapabilitySpec(Capability.NAMESPACE, "every key lives under the prefix it is given",
                   *_takes("namespace")),
    CapabilitySpec(Capability.CLEAR, "clear empties one session and no other",
                   *_has("clear")),
    CapabilitySpec(Capability.TENANTS, "keeps sessions per tenant: the same session id under two user ids is two "
                   "conversations",
                   lambda binding: binding.accepts("user_id") or bool(binding.tenant_arguments),
                   f"its factory takes no {with_aliases('user_id')}, nor do its methods beside the session id"),
    CapabilitySpec(Capability.TOOL_CALLS, "whole messages: tool calls, tool results and metadata come back as "
                   "appended, and no window leaves a tool result without its call",
                   lambda binding: binding.takes_whole_messages and binding.codec.carries_fields,
                   "its append takes role and content, not whole messages (or its message type has no "
                   "tool_calls and tool_call_id)", aliases=("tool_calls",)),
    CapabilitySpec(Capability.COMPACTION, "compact replaces the oldest messages with one summary message, "
                   "atomically, losing and duplicating nothing",
                   *_has("compact", "summarize")),
    CapabilitySpec(Capability.CONSISTENCY, "it writes more than one backend (Redis and a mirror), and "
                   "consistent_state(session_id) says when they agree",
                   *_has("consistency")),
    CapabilitySpec(Capability.ASYNC, "its methods are coroutines, run on an event loop",
                   lambda binding: binding.is_async, "its methods are not coroutines"),
)}

_BY_NAME = {name: spec.capability for spec in REGISTRY.values()
            for name in (spec.capability.value, *spec.aliases)}


def lookup(name: str) -> Capability:
    """The capability a marker argument names; :class:`UnknownCapability` if none."""
    try:
        return _BY_NAME[str(name)]
    except KeyError:
        raise UnknownCapability(
            f"@pytest.mark.requires({name!r}) names no capability; known: {', '.join(_BY_NAME)}") from None


def lookup_guarantee(name: str) -> Guarantee:
    """The guarantee a ``@pytest.mark.guarantees`` argument names; :class:`UnknownCapability` if none."""
    try:
        return Guarantee(str(name))
    except ValueError:
        raise UnknownCapability(f"@pytest.mark.guarantees({name!r}) names no guarantee; known: "
                                f"{', '.join(g.value for g in Guarantee)}") from None


def detect(binding: StoreBinding) -> frozenset[Capability]:
    """Capabilities follow from the parameters the factory names and the methods it has.

    A factory that only takes ``**kwargs`` receives every value but claims nothing beyond core.
    """
    return frozenset(cap for cap, spec in REGISTRY.items() if spec.detect(binding))


def skip_reason(missing: Iterable[Capability]) -> str:
    return "; ".join(f"store lacks {cap}: {REGISTRY[cap].missing}" for cap in missing)


def conformance_level(capabilities: Iterable[Capability], outcomes: list[tuple[frozenset[Capability], bool]],
                      guarantees: list[tuple[frozenset[Guarantee], frozenset[Guarantee]]] = ()) -> str:
    """Join the capabilities that the store has and whose scenarios all passed, then the guarantees
    that held.

    ``outcomes`` holds, per scenario that ran (was not skipped), the capabilities it required and
    whether it passed. A failed core scenario makes the level ``none``; a capability none of whose
    scenarios ran (deselected with -k) is not claimed. Async is proven by the other scenarios
    running on the event loop. ``guarantees`` holds, per scenario that ran, the guarantees it checks
    and those it warned of: a guarantee holds when a scenario that checks it ran and none warned of
    it or failed.
    """
    capabilities = frozenset(capabilities)

    def verdict(cap: Capability) -> bool | None:
        relevant = [passed for req, passed in outcomes if cap in req or (cap is Capability.CORE and not req)]
        return all(relevant) if relevant else None

    if verdict(Capability.CORE) is False:
        return "none"
    level = [cap for cap in Capability if cap is not Capability.ASYNC and cap in capabilities and verdict(cap)]
    if level and Capability.ASYNC in capabilities:
        level.append(Capability.ASYNC)
    checked = [g for g in Guarantee if any(g in checks for checks, _warned in guarantees)]
    level += [g for g in checked if not any(g in warned for _checks, warned in guarantees)] if level else []
    return "+".join(c.value for c in level) or "none"


def level_of_results(capabilities: Iterable[str], results: Iterable[Any]) -> str:
    """:func:`conformance_level` of a run's results (:class:`~.results.ScenarioResult`): of the scenarios
    that ran, the capabilities each required and whether it passed, the guarantees each checks and those
    it warned of (every one it checks, when it failed)."""
    ran = [result for result in results if str(result.outcome) != "skipped"]
    return conformance_level(
        (Capability(name) for name in capabilities),
        [(frozenset(Capability(name) for name in result.requires), str(result.outcome) == "passed") for result in ran],
        [(frozenset(map(Guarantee, result.guarantees)),
          frozenset(map(Guarantee, result.guarantees if result.failed
                        else [warning["guarantee"] for warning in result.warnings]))) for result in ran])
