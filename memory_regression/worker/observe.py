"""What a store does with the suite's parameters, observed once, before any scenario judges it.

The suite fills a store's factory by parameter name (:data:`.contract.STORE_PARAMETERS`). A window or
a TTL under a name of the store's own (``limit=20``, ``expire_seconds=3600``) keeps its default in
every scenario, and a store that takes no client or URL talks to a server of its own choosing. Judged
as they are, such stores fail scenario after scenario with explanations that are consequences, not
causes ("a lost update", "swallows the OOM error"). So a worker that binds such a store first appends
a run of messages to one session and looks at what the store kept and wrote (:func:`observe`):

- it kept only the newest K, K being the default of a parameter the suite does not fill whose name
  says it is a window (``limit``, ``max_len``, ``k``): a usage error naming that parameter and the way
  out (a contract name, or ``--store-params``); the scenarios do not run;
- it kept the newest K with no such parameter: an observation, naming the possible causes;
- its keys expire although it takes no ttl: an observation, naming the parameter that looks like
  the TTL where one does;
- it takes no client and no URL, and its append failed to connect: a usage error naming where it
  connected;
- building it or calling it as bound raised what says the suite cannot (:mod:`.binding_faults`): a
  usage error saying what to fix, once, rather than every scenario failing the same way;
- its appends left no key on the server under test (:func:`kept_elsewhere`): it keeps its history
  elsewhere, behind a service it calls, on another server or in its process. That is said in the
  run's header, and every scenario that acts on the server (:meth:`.ScenarioContext.on_server`)
  is skipped with that reason rather than judging a server the store does not use.

Stores that take the contract's client (or ``**kwargs``) and leave nothing unfilled get the short
probe only: two appends, and whether any key came of them. What the observation cannot tell (the
store raised for another reason, lost messages in the middle) is left to the scenarios, which judge it.

The probe runs in a thread of its own (:func:`observe_within`), waited half the call timeout: a
store whose first calls hang is said to, and the scenarios judge the hang as they judge any; it is
never taken for a store that cannot be bound.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import redis

from .clients import address, clients_in
from ..contract.binding import StoreBinding
from .binding_faults import binding_fault
from ..contract.rules import Message, with_aliases
from ..errors import UsageError
from ..contract.frames import exception_chain
from ..reference.conversations import numbered_messages
from ..harness.growth import append_within
from ..contract.proposals import TTL_WORDS, WINDOW_WORDS, BindingProblem, named
from ..harness.scenario_stores import Stores
from ..harness.server_view import Keyspace

if TYPE_CHECKING:   # the worker builds the context observed through
    from ..harness.context import ScenarioContext

PROBE_SESSION = "observe"
PROBE_MESSAGES = 100          # more than the windows of the stores we know keep by default (20, 50)
REACH_MESSAGES = 2            # the short probe's, of a store that takes what the suite gives it (no load)
PROBE_BUDGET_S = 2.0          # a slow store is observed on what it appended by then
TTL_MATCH_S = 5               # a default this close to the observed TTL, in seconds, is taken for it
PROBE_WAIT_SHARE = 0.5        # of the call timeout, waited for the probe: the runner cuts off a call at the timeout


def needs_probe(binding: StoreBinding) -> bool:
    """Whether the store could ignore what the suite gives it: parameters it leaves at their
    defaults, or no client and no URL to reach the server under test."""
    return bool(binding.unfilled) or not takes_a_connection(binding)


def takes_a_connection(binding: StoreBinding) -> bool:
    return binding.takes_client or binding.accepts("redis_url")


def unfilled_text(binding: StoreBinding) -> str:
    """The parameters left at their defaults, as the store declares them: ``limit=20, verbose=False``."""
    return ", ".join(f"{name}={default!r:.40}" for name, default in binding.unfilled.items())


def _numeric(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


@dataclass
class Observed:
    """What :func:`observe` saw: ``texts``, for the run's header, and ``elsewhere``, why the store's
    history is not on the server under test (None: it is, or the probe could not tell)."""

    texts: list[str] = field(default_factory=list)
    elsewhere: str | None = None


def observe(context: "ScenarioContext", binding: StoreBinding) -> Observed:
    """Append messages to one session of a store built as the scenarios not about windows build it
    (a roomy window and TTL), load it, look at its keys; return what was observed, or raise
    :class:`UsageError` when the store cannot be judged as bound. A store that could ignore what the
    suite gives it (:func:`needs_probe`) gets :data:`PROBE_MESSAGES`, one that takes it all
    :data:`REACH_MESSAGES` and no load, enough to see whether its history reaches the server."""
    appended: list[Message] = []
    store = None
    probed = needs_probe(binding)
    try:
        store = Stores(context).new()
        count = PROBE_MESSAGES if probed else REACH_MESSAGES
        appended = append_within(context, store, PROBE_SESSION, numbered_messages(count, "observed"),
                                 PROBE_BUDGET_S, control=False).messages   # no control sessions beside its keys
        kept = store.load(PROBE_SESSION) if probed else []   # the short probe leaves what a load may change alone
    except Exception as exc:   # noqa: BLE001 (the scenarios judge what else a store raises)
        if not takes_a_connection(binding) and _connection_failure(exc):
            raise UsageError(_elsewhere(binding, _instance(store), f"its append raised "
                                        f"{type(exc).__name__} ({exc})")) from None
        fault = binding_fault(binding, exc)
        if fault:
            raise UsageError(fault) from None
        return Observed()
    keyspace = Keyspace(context)
    keys = keyspace.keys()
    if not keys and appended:
        text = kept_elsewhere(binding, _instance(store), len(appended))
        return Observed([text], text)
    found = [_window(binding, appended, kept), _ttl(binding, keyspace, keys)] if probed else []
    return Observed([text for text in found if text])


def observe_within(context: "ScenarioContext", binding: StoreBinding, seconds: float) -> Observed | None:
    """:func:`observe`, in a thread of its own, waited ``seconds``; None when it did not return by then (a
    store whose first calls hang, which the scenarios judge as they judge any hang: the thread is left in the
    store, for the worker to go on without it). What it raised is raised here."""
    outcome: list[Observed | BaseException] = []

    def run() -> None:
        try:
            outcome.append(observe(context, binding))
        except BaseException as exc:   # noqa: BLE001 (handed to the waiting thread)
            outcome.append(exc)

    thread = threading.Thread(target=run, name="memory-regression-probe", daemon=True)
    thread.start()
    thread.join(seconds)
    if not outcome:
        return None
    if isinstance(outcome[0], BaseException):
        raise outcome[0]
    return outcome[0]


def probe_hung(seconds: float) -> str:
    """What the header says of a store whose probe did not return within ``seconds``."""
    return (f"the store's first calls, two appends at binding, did not return within {seconds:g} s and were left "
            "running: where its history goes was not observed, and the scenarios judge the hang")


def kept_elsewhere(binding: StoreBinding, instance: Any, appended: int) -> str:
    """What a store whose appends left no key on the server under test is told, and what follows."""
    held = _held(instance)
    own = ("" if takes_a_connection(binding) else
           f". If it should keep it there, take the client the suite passes, as a parameter named "
           f"{with_aliases('redis')}, or its URL as {with_aliases('redis_url')}")
    return (f"the store appended {appended} messages and left no key on the server under test{held}: it keeps its "
            "history elsewhere (behind a service it calls, on another server, or in its process), so the scenarios "
            "that act on the server (down, restart, killed connections, lost reply, memory pressure, keys, TTLs, "
            f"footprint) are skipped rather than judging a server it does not use: run with --redis naming the "
            f"server it keeps its history on to run them{own}")


def _window(binding: StoreBinding, appended: list[Message], kept: list[Message]) -> str | None:
    """What the store keeps of a session although it was given no window (or a roomy one)."""
    plain, kept = [m.plain() for m in appended], [m.plain() for m in kept]
    if not 0 < len(kept) < len(plain) or kept != plain[-len(kept):]:
        return None
    given = "a window of a million messages" if binding.accepts("max_messages") else "no window"
    seen = (f"the store keeps only the newest {len(kept)} of {len(plain)} messages appended to one session, "
            f"although the suite gave it {given}, as it does every scenario not about windows")
    matching = [name for name, default in binding.unfilled.items()
                if _numeric(default) and default == len(kept) and named(name, WINDOW_WORDS)]
    if matching:
        name = matching[0]
        raise BindingProblem(
            f"--store {binding.spec!r}: {seen}. Its parameter {name}={binding.unfilled[name]!r}, which the suite "
            f"does not fill, looks like that window: name it {with_aliases('max_messages')}, or map it with "
            f"--store-params {name}=max_messages (a token budget: {name}=max_tokens). No scenario was run: "
            "each would fail as a consequence of this window, not of a bug.", ("store_params", f"{name}=max_messages"))
    numeric = [f"{name}={default!r}" for name, default in binding.unfilled.items() if _numeric(default)]
    causes = (f"a parameter the suite does not fill ({', '.join(numeric)}: map a window with --store-params "
              "NAME=max_messages or NAME=max_tokens)" if numeric else "")
    own = "a cap of its own, which the scenarios report as lost messages"
    return f"{seen}: {' or '.join(filter(None, [causes, own]))}"


def _ttl(binding: StoreBinding, keyspace: Keyspace, keys: list[str]) -> str | None:
    """What TTL the store's keys have although it takes no ttl."""
    if binding.accepts("ttl"):
        return None
    ttls = [pttl / 1000 for pttl in map(keyspace.pttl_ms, keys) if pttl > 0]
    if not ttls:
        return None
    seconds = max(ttls)
    seen = f"{len(ttls)} of the store's {len(keys)} keys expire, in about {seconds:.0f} s, although it takes no ttl"
    matching = [name for name, default in binding.unfilled.items()
                if _numeric(default) and abs(default - seconds) <= TTL_MATCH_S and named(name, TTL_WORDS)]
    if matching:
        name = matching[0]
        return (f"{seen}: its parameter {name}={binding.unfilled[name]!r} looks like its TTL, which the suite does "
                f"not fill (so the ttl scenarios do not run): name it {with_aliases('ttl')}, or map it with "
                f"--store-params {name}=ttl")
    return f"{seen} (a TTL of its own: the ttl scenarios do not run)"


def _instance(store: Any) -> Any:
    """The probe's store instance, or None if building it was what failed."""
    try:
        return store.instance_for(PROBE_SESSION) if store is not None else None
    except Exception:   # noqa: BLE001
        return None


def _connection_failure(exc: BaseException) -> bool:
    return any(isinstance(link, (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, ConnectionError))
               for link in exception_chain(exc))


def _held(instance: Any) -> str:
    """The servers the store instance holds clients of, said after what it did."""
    where = sorted(set(map(address, clients_in(instance))))
    return f"; it holds a client of {', '.join(where)}" if where else ""


def _elsewhere(binding: StoreBinding, instance: Any, what: str) -> str:
    return (f"--store {binding.spec!r} takes no client and no URL of the server under test, and {what}"
            f"{_held(instance)}: it connects to a server of its own choosing. Take the client the suite passes, as a "
            f"parameter named {with_aliases('redis')}, or its URL as {with_aliases('redis_url')} (map a parameter of "
            "another name with --store-params NAME=redis).")
