"""Stores built outside the scenario's own thread: another instance of a replica, in a thread of its
own or in a writer process, as replicas of a service build them.

A store loaded from a ``.py`` path cannot be pickled (its module's name is made up per process), so
what a scenario built a store from travels as a :class:`StoreRecipe`: a writer process binds the
store again from the settings (:func:`bind`) and builds it from the recipe with a client of its own
(:func:`own_adapter`). Writer processes fork from a fork server of the worker's
(:func:`writer_context`), and die with it (:func:`prepare_worker_process`).
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import signal
import traceback
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable

from ..engines.backend import Connection, Endpoint
from ..engines.servers import die_with_parent
from ..contract.adapter import StoreAdapter
from ..contract.binding import StoreBinding, bind_store
from ..contract.rules import Message, close_quietly
from ..contract.frames import without_harness_frames
from ..contract.specs import load_store
from ..contract.profiles import ModelProfile, TokenCounter, resolve_counter
from ..reference.model import summarize
from ..settings import DEFAULT_TENANT, Settings


@dataclass(frozen=True)
class StoreRecipe:
    """What :meth:`.Stores.new` builds a store from, but for the client: a store loaded from
    a ``.py`` path cannot be pickled (its module's name is made up per process), so a writer in a
    process of its own binds the store again from the settings and builds it from this, with a
    client of its own (:func:`write_in_process`)."""

    settings: Settings
    endpoint: Endpoint
    namespace: str
    max_messages: int
    profile: ModelProfile | None     # None: unbounded, counted with the roomy counter
    ttl: int
    data_dir: Path                   # the scenario's directory for the store's files
    summarize: Callable[[list], str] = summarize   # what a compacting store summarises with
    user_id: str | None = DEFAULT_TENANT   # the tenant; None: left out, the factory's default
    withheld: frozenset[str] = frozenset()   # what the worker's binding never passes (.connection_choice)

    def build(self, binding: StoreBinding, client: Any, counter: TokenCounter, session_id: str | None) -> Any:
        """A new store instance on ``client``."""
        profile = self.profile or self.settings.profiles[0].unbounded()
        self.data_dir.mkdir(parents=True, exist_ok=True)
        values = {
            "redis": client, "redis_url": self.endpoint.store_url, "namespace": self.namespace,
            "max_messages": self.max_messages, "max_tokens": profile.max_tokens, "count_tokens": counter,
            "ttl": self.ttl, "profile": profile, "session_id": session_id, "data_dir": str(self.data_dir),
            "summarize": self.summarize, **({"user_id": self.user_id} if self.user_id is not None else {}),
            **({"service_url": self.settings.service_url} if self.settings.service_url else {}),
        }
        store = binding.factory(**binding.build_kwargs(values))
        return binding.driver(store) if binding.driver else store


def bind(settings: Settings, probe: Any) -> StoreBinding:
    """Import the store ``settings`` names and bind it (``probe`` builds an instance to inspect, for a
    factory that is not a class): once in each worker, and again in each writer process."""
    spec = settings.store_spec
    methods, params = settings.method_overrides, settings.store_params
    loaded = load_store(spec, settings.workdir, settings.scenario_timeout / 2)
    # names in the store's own spelling (historyLimit, recordTurn), as its factory spells them
    methods = {role: name and loaded.spelling(name) for role, name in methods.items()}
    params = {loaded.spelling(name): canonical for name, canonical in params.items()}
    ungiven = {} if settings.service_url else {"service_url": "--service-url URL"}
    return bind_store(spec, loaded.factory, loaded.source, methods, probe, params, ungiven)


def counter_for(settings: Settings, profile: ModelProfile | None) -> TokenCounter:
    """The counter of ``profile`` as the store is told to count, or, for None, the cheap one of
    scenarios not about tokens."""
    if profile is None:
        return resolve_counter(settings.profiles[0].unbounded(), None, settings.workdir)
    return resolve_counter(profile, settings.token_counter, settings.workdir)


_writer_barrier: Any = None   # in a writer process: the barrier that releases the writers together
_writers_released: Any = None  # ... and the event it sets once they are released, which readers wait for


class WriterFailed(Exception):
    """The traceback of a writer process's exception, as text: the cause of the exception raised in
    the worker for it."""


def run_writer(worker: int, barrier: Any, released: Any, outcomes: Any, recipe: "StoreRecipe", session_id: str,
               messages: list[Message]) -> None:
    """A writer process of :meth:`.Races.in_processes`: it dies with the worker that started
    it, writes (:func:`write_in_process`), reports None or its exception on ``outcomes``, and ends at
    once, so that a thread the store left running cannot keep it alive."""
    global _writer_barrier, _writers_released
    prepare_worker_process()   # its parent is the worker's fork server, which ends when the worker does
    if not _alive(worker):     # the worker died before the death signal was armed
        os._exit(1)
    _writer_barrier, _writers_released = barrier, released
    try:
        write_in_process(recipe, session_id, messages)
        outcomes.put(None)
    except BaseException as exc:   # the store's, whatever it is: the worker raises it for the scenario
        without_harness_frames(exc)   # the text is shown as the scenario's failure is: the store's frames
        text = "".join(traceback.format_exception(exc))
        try:
            outcomes.put((exc, text))
        except Exception:   # an exception that does not pickle
            outcomes.put((RuntimeError(f"{type(exc).__name__}: {exc}"), text))
    finally:
        os._exit(0)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def writer_context() -> Any:
    """How writer processes start: forked from a server process of the worker's (multiprocessing's
    forkserver), which has imported this module, and so pytest and redis, once; each writer then
    binds the store anew, importing its module as a replica of a service would, without an
    interpreter and the suite's imports of its own. A fork of the worker itself would copy its
    threads and event loop half-way; the fork server holds none."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([__name__])
    return context


def write_in_process(recipe: StoreRecipe, session_id: str, messages: list[Message]) -> None:
    """One writer of :meth:`.Races.in_processes`, in a process of its own: bind the store
    again, build it with a client of its own (on an event loop of its own for an async store), wait
    for the other writers, append ``messages`` in order, close the store and the client."""
    connection, counter, resources = Connection(recipe.endpoint), counter_for(recipe.settings, recipe.profile), []
    with asyncio.Runner() as loop:
        def adapter(binding: StoreBinding) -> StoreAdapter:
            return own_adapter(recipe, binding, connection, counter, loop, resources)

        bound = bind(recipe.settings, lambda binding: adapter(binding).instance_for(session_id))
        store = adapter(replace(bound, withheld=recipe.withheld))
        store.instance_for(session_id)
        _writer_barrier.wait()
        _writers_released.set()
        for message in messages:
            store.add(session_id, message)
        for resource in resources:
            close_quietly(resource, loop.run)


def own_adapter(recipe: StoreRecipe, binding: StoreBinding, connection: Connection, counter: TokenCounter,
                loop: asyncio.Runner, resources: list[Any], **options: Any) -> StoreAdapter:
    """A store built from ``recipe`` with a client of its own, whose calls run on ``loop``, as another
    replica of a service builds it; the client and the instances built are put in ``resources``, the
    instances before the client, to be closed in that order. ``options`` go to the adapter."""
    client = connection.client(asynchronous=binding.is_async)
    resources.append(client)

    def build(session_id: str | None) -> Any:
        instance = recipe.build(binding, client, counter, session_id)
        resources.insert(0, instance)
        return instance
    return StoreAdapter(binding, build, loop.run, user_id=recipe.user_id, **options)


def prepare_worker_process(parent: int | None = None) -> None:
    """A worker (or a writer process it spawned, given its pid as ``parent``) dies with the process
    that started it, and leaves Ctrl-C to the runner."""
    die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
