"""The process that runs the user's store: a pytest-xdist worker, or the runner itself with ``-n 0``.

:class:`ScenarioWorker` is the pytest plugin there. It imports and binds the store (telling the
runner what it found, or why it could not), parametrizes the scenarios over window sizes and model
profiles, skips those whose capability the store lacks, gives each scenario a
:class:`ScenarioContext` (fixture ``memory``) on a clean database, and turns each outcome into a
verdict in store terms. Everything it puts in a report is redacted and capped, so a store's text
can neither leak a password nor blow up the reports.
"""

from __future__ import annotations

import asyncio
import faulthandler
import hashlib
import inspect
import multiprocessing
import os
import re
import shutil
import signal
import statistics
import threading
import time
import traceback
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Awaitable, Callable
from urllib.parse import urlsplit

import _pytest
import pluggy
import pytest
import redis
import tenacity

from .backend import BackendError, Connection, Endpoint, ServerProcess, die_with_parent, find_server_binary
from .clients import IDLE_CLOSE_SIGN, idle_close_defect
from .capabilities import Capability, Guarantee, UnknownCapability, detect, lookup, lookup_guarantee, skip_reason
from .contract import (Message, StoreAdapter, StoreBinding, UsageError, bind_store, close_quietly, exception_chain,
                       load_object, user_traceback)
from .profiles import ModelProfile, TokenCounter, resolve_counter
from .redaction import Redactor, map_strings, sendable
from .reference import HistoryMismatch, summarize
from .groups import scenario_group
from .observe import needs_probe, observe, unfilled_text
from .results import LISTED_NOT_RUN, Status
from .settings import BUDGET_SHARE, ROOMY_TTL_S, WINDOWLESS, Settings
from .supervisor import CallPage, call_page_path

CAPTURE_LIMIT = 64 * 1024        # characters of captured output kept per section of a scenario's report
DETAILS_LIMIT = 3000             # characters of a traceback kept in a verdict's details
KEYS_WITHOUT_TTL_PER_SCENARIO = 50   # keys without TTL noted per scenario
GROWTH_SAMPLES = 50              # appends needed before a growth of their time is judged
GROWTH_RATIO = 3                 # the last tenth of the appends against the first: a growth from this factor
RELEASE_POLL_S = 0.002          # how often readers look whether writer processes were released
BARRIER_TIMEOUT_S = 10           # a writer or reader not started by then breaks a concurrency scenario's start
GROWTH_FLOOR_S = 0.001           # and by at least this much per append (a fast store's append takes a tenth)
# a connection's last command (CLIENT LIST's cmd, its first word) until it has run one of its own
HANDSHAKE_COMMANDS = frozenset({"NULL", "hello", "auth", "client", "select"})

# why a synchronous store on a cluster gets no client of another address (a server that is down)
CLUSTER_CLIENT_CONNECTS = ("on a Redis Cluster, redis-py's synchronous RedisCluster client asks a node for the "
                           "slot map when it is built and raises there, so a store cannot be handed a client of "
                           "a cluster that is down: run this scenario with --redis server")


@dataclass(frozen=True)
class TimedAppends:
    """What :meth:`ScenarioContext.append_within` appended, of how many, within which budget."""

    messages: list[Message]
    wanted: int
    budget_s: float

    @property
    def cut_short(self) -> bool:
        return len(self.messages) < self.wanted


@dataclass(frozen=True)
class ConsistencyWait:
    """What :meth:`ScenarioContext.until_consistent` saw: for each session whose backends came to agree,
    the seconds until consistent_state first said so; the sessions still inconsistent when the wait
    ended; how many rounds of calls it took, and how long it waited of how long it could."""

    agreed: dict[str, float]
    pending: list[str]
    polls: int
    waited_s: float
    timeout_s: float


@dataclass(frozen=True)
class StoreRecipe:
    """What :meth:`ScenarioContext.store` builds a store from, but for the client: a store loaded from
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

    def build(self, binding: StoreBinding, client: Any, counter: TokenCounter, session_id: str | None) -> Any:
        """A new store instance on ``client``."""
        __tracebackhide__ = True
        profile = self.profile or self.settings.profiles[0].unbounded()
        self.data_dir.mkdir(parents=True, exist_ok=True)
        values = {
            "redis": client, "redis_url": self.endpoint.store_url, "namespace": self.namespace,
            "max_messages": self.max_messages, "max_tokens": profile.max_tokens, "count_tokens": counter,
            "ttl": self.ttl, "profile": profile, "session_id": session_id, "data_dir": str(self.data_dir),
            "summarize": self.summarize,
        }
        return binding.factory(**binding.build_kwargs(values))


def bind(settings: Settings, probe: Any) -> StoreBinding:
    """Import the store ``settings`` names and bind it (``probe`` builds an instance to inspect, for a
    factory that is not a class): once in each worker, and again in each writer process."""
    factory, source = load_object(settings.store_spec, settings.workdir)
    return bind_store(settings.store_spec, factory, source, settings.method_overrides, probe, settings.store_params)


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
    """A writer process of :meth:`ScenarioContext.in_processes`: it dies with the worker that started
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
    """One writer of :meth:`ScenarioContext.in_processes`, in a process of its own: bind the store
    again, build it with a client of its own (on an event loop of its own for an async store), wait
    for the other writers, append ``messages`` in order, close the store and the client."""
    connection, counter, resources = Connection(recipe.endpoint), counter_for(recipe.settings, recipe.profile), []
    with asyncio.Runner() as loop:
        def adapter(binding: StoreBinding) -> StoreAdapter:
            return own_adapter(recipe, binding, connection, counter, loop, resources)

        store = adapter(bind(recipe.settings, lambda binding: adapter(binding).instance_for(session_id)))
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
        __tracebackhide__ = True
        instance = recipe.build(binding, client, counter, session_id)
        resources.insert(0, instance)
        return instance
    return StoreAdapter(binding, build, loop.run, **options)


class ScenarioServer:
    """A redis-server of one scenario's own (:meth:`ScenarioContext.own_server`), for what is
    server-wide and so may not touch the run's server, which the other workers share: its memory
    limit and eviction policy, its persistence, a restart. A store is built on it with
    ``memory.store_on(server.url)``; ``admin`` is the suite's client on it (CONFIG SET, INFO), as a
    user whom the stores' restrictions do not bind."""

    def __init__(self, server: ServerProcess, idle: Callable[[], None]):
        self._server = server
        self._idle = idle   # the scenario's pause between requests (ScenarioContext.idle)
        self._admin: redis.Redis | None = None

    @property
    def url(self) -> str:
        """The stores' URL (database 0)."""
        return self._server.url

    @property
    def description(self) -> str:
        """Which server it is: its version, binary and port."""
        return f"{self._server.version} ({self._server.binary}, port {self._server.port})"

    @property
    def config(self) -> dict[str, str]:
        """The config it was started with (the scenario's, over the private server's)."""
        return dict(self._server.config)

    @property
    def admin(self) -> redis.Redis:
        if self._admin is None:
            self._admin = redis.Redis.from_url(self._server.admin_url, decode_responses=True)
        return self._admin

    def memory_info(self) -> dict[str, Any]:
        """INFO memory (``used_memory``, ``maxmemory``, ...)."""
        return self.admin.info("memory")

    def restart(self, hard: bool = True) -> None:
        """Kill the server (``hard``: SIGKILL, nothing saved on the way out) or shut it down (SIGTERM),
        and start it again on the same port and directory (an append-only file is replayed). The
        stores' connections die with it; they have to reconnect. A server that cannot be started
        again skips the scenario: that is the machine's, not the store's."""
        __tracebackhide__ = True
        self._close_admin()
        try:
            self._server.restart(hard)
        except BackendError as exc:
            pytest.skip(f"the suite could not restart the scenario's own redis-server: {exc}")
        self._idle()

    def _close_admin(self) -> None:
        admin, self._admin = self._admin, None
        if admin is not None:
            admin.close()

    def stop(self) -> None:
        try:
            self._close_admin()
        finally:
            self._server.stop(hard=True)   # what it holds is the scenario's, thrown away


class ScenarioContext:
    """What one scenario gets (fixture ``memory``): stores built afresh by the user's factory, and a
    view of the keys on the scenario's database. The database is flushed when the context is made,
    so every key seen belongs to the scenario."""

    def __init__(self, worker: "ScenarioWorker", nodeid: str, engine: str = ""):
        __tracebackhide__ = True   # a failure here is the store's or Redis', not the suite's
        self._worker = worker
        self._binding: StoreBinding = worker.binding
        self._connection: Connection = worker.connections[engine or worker.engine_names[0]]
        digest = hashlib.sha1(nodeid.encode()).hexdigest()[:8]
        self.namespace = f"mrs:{digest}:"
        # the stores' files (data_dir): under the run's scratch directory, which the runner removes in any case
        self.data_dir = worker.scratch / "stores" / f"{digest}-{os.getpid()}"
        self.capabilities: frozenset[Capability] = worker.capabilities
        self.window_sizes: tuple[int, ...] = worker.settings.window_sizes
        self.window_policy = worker.settings.window_policy
        self.profile: ModelProfile = worker.settings.profiles[0]
        self.profiles: tuple[ModelProfile, ...] = worker.settings.profiles
        self.latency_budget_ms: dict[str, float] = worker.settings.latency_budget_ms   # --latency-budget-ms
        self._loop = asyncio.Runner() if self._binding.is_async else None
        self._stores: list[Any] = []
        self._clients: list[Any] = []
        self._recipes: dict[StoreAdapter, StoreRecipe] = {}
        self._servers: list[ScenarioServer] = []
        self.findings: list[str] = []
        self.warnings: list[dict[str, str]] = []
        self.measurements: list[dict[str, Any]] = []
        self.reset()
        # see kill_connections: on each server (each node of a cluster), the last connection opened so far
        self._first_client_ids = {name: node.client_id() for name, node in self._connection.nodes().items()}

    @property
    def url(self) -> str:
        """The scenario database's URL, as stores are given it."""
        return self._connection.url

    @property
    def cluster(self) -> bool:
        """Whether the scenario runs on a Redis Cluster (stores get RedisCluster clients)."""
        return self._connection.endpoint.kind == "cluster"

    @property
    def summary_in_window(self) -> bool:
        """Whether the store's compaction summary counts toward its window (its class attribute
        ``summary_in_window``, True when it has none)."""
        return self._binding.summary_in_window

    def has(self, capability: Capability) -> bool:
        return capability in self.capabilities

    def note(self, finding: str) -> None:
        """Report something the scenario measured (what it covered, how a store's time grew), whether
        it passes or fails: it is listed under the scenario in every report."""
        self.findings.append(finding)

    def warn(self, guarantee: Guarantee, text: str) -> None:
        """Report a guarantee the store does not hold: a cost or a transient effect, not lost or wrong
        memory. The scenario still passes (but under ``--strict``), the warning is listed in every
        report, and the conformance level leaves the guarantee out."""
        self.warnings.append({"guarantee": Guarantee(guarantee).value, "text": text})

    def measure(self, kind: str, data: dict[str, Any]) -> None:
        """Record numbers the scenario measured, of a ``kind`` the reports know (``latency``,
        ``footprint``: see :mod:`.results`), whether it passes or fails: they reach summary.json,
        summary.md, junit.xml and report.html as figures, not as text. ``data`` is plain JSON."""
        self.measurements.append({"kind": kind, **data})

    def counter(self, profile: ModelProfile) -> TokenCounter:
        """What one message costs under ``profile``, as the store is told to count."""
        return self._worker.counters[profile.name]

    def run_awaitable(self, awaitable: Any) -> Any:
        __tracebackhide__ = True
        if self._loop is None:
            return asyncio.run(awaitable)
        return self._loop.run(awaitable)

    def store(self, *, max_messages: int = WINDOWLESS, profile: ModelProfile | None = None,
              ttl: int = ROOMY_TTL_S, summarize: Callable[[list], str] = summarize) -> StoreAdapter:
        """A new store instance. Arguments not about the scenario's subject are roomy and cheap: a
        window of a million messages, an unbounded token budget counted with ``approx`` (the
        profile's own counter only where ``profile`` is given), a TTL of an hour, and the suite's
        summariser (:func:`.reference.summarize`)."""
        __tracebackhide__ = True
        recipe = StoreRecipe(self._worker.settings, self._connection.endpoint, self.namespace, max_messages,
                             profile, ttl, self.data_dir, summarize)
        client = self.raw_client()
        counter = self._counter_of(recipe)

        def build(session_id: str | None) -> Any:
            __tracebackhide__ = True
            instance = recipe.build(self._binding, client, counter, session_id)
            self._stores.append(instance)
            return instance
        store = StoreAdapter(self._binding, build, self.run_awaitable, watch=self._worker.calls.watch)
        self._recipes[store] = recipe
        return store

    def _counter_of(self, recipe: StoreRecipe) -> TokenCounter:
        return self._worker.counters[recipe.profile.name] if recipe.profile else self._worker.roomy_counter

    def append_aside(self, store: StoreAdapter, session_id: str, messages: list[Message]) -> Future:
        """Append ``messages`` to ``session_id`` in order, in a thread of its own, through a new store
        instance built as ``store`` was, with a client of its own (on an event loop of its own for an
        async store), as another replica of a service appends while this one is busy: it runs while
        the scenario's thread (and loop) is held, inside a call of the store. Returns the future of
        the appends; the store instance and its client are closed when they are done."""
        recipe = self._recipes[store]
        counter = self._counter_of(recipe)

        def append() -> None:
            __tracebackhide__ = True   # a store's exception shows the store's frames, not these
            resources: list[Any] = []
            with asyncio.Runner() as loop:
                aside = own_adapter(recipe, self._binding, self._connection, counter, loop, resources,
                                    watch=self._worker.calls.watch)
                try:
                    for message in messages:
                        aside.add(session_id, message)
                finally:
                    for resource in resources:
                        close_quietly(resource, loop.run)
        pool = ThreadPoolExecutor(1)
        try:
            return pool.submit(append)
        finally:
            pool.shutdown(wait=False)

    def raw_client(self) -> Any:
        """A new redis-py client on the scenario's database, of the kind the store's is
        (``redis.asyncio`` for an async store, whose calls then go through :meth:`run_awaitable` as
        the store's do; a RedisCluster on a cluster), closed with the scenario: what each store is
        built on, and what the latency scenario measures Redis' own round trips with."""
        __tracebackhide__ = True
        client = self._connection.client(asynchronous=self._binding.is_async)
        self._clients.append(client)
        return client

    def bytes_used(self) -> dict[str, int]:
        """What each key on the scenario's database takes in the server's memory: ``MEMORY USAGE key
        SAMPLES 0``, every element counted (the default samples 5 of a list's nodes and estimates).
        A key that expired or was deleted meanwhile is left out. Needs a real server."""
        __tracebackhide__ = True
        admin = self._connection.admin
        used = {key: admin.memory_usage(key, samples=0) for key in self.keys()}
        return {key: size for key, size in used.items() if size is not None}

    def store_on(self, url: str, **options: Any) -> StoreAdapter:
        """A store built as :meth:`store` builds it (``options`` are its arguments), whose client and
        ``redis_url`` reach ``url`` instead of the scenario's database. On a cluster, ``url`` is taken
        for a cluster's (but for the scenario's own server's), and a synchronous store skips the
        scenario: see CLUSTER_CLIENT_CONNECTS."""
        __tracebackhide__ = True
        scenario_database, kind = self._connection, self._connection.endpoint.kind
        if kind == "cluster" and any(url == server.url for server in self._servers):
            kind = "server"   # a scenario's own server is a single one, whatever the engine
        elif kind == "cluster" and not self._binding.is_async:
            pytest.skip(CLUSTER_CLIENT_CONNECTS)
        self._connection = Connection(Endpoint(kind, url, url))
        try:
            return self.store(**options)
        finally:
            self._connection = scenario_database

    def own_server(self, config: dict[str, str] | None = None) -> ScenarioServer:
        """A redis-server of the scenario's own, with ``config`` (redis.conf names and values:
        ``{"maxmemory-policy": "noeviction"}``, ``{"appendonly": "yes", "appendfsync": "always"}``)
        over the private server's (no persistence): the binary of the engine under test when the
        suite started it (redis-server, valkey-server, a cluster's nodes), else the first server
        binary on PATH; on a free loopback port and in a directory of its own under the run's scratch
        directory. It dies with the worker (a parent-death signal; a store that hangs gets the worker
        killed) and is stopped by PID when the scenario ends, pass or fail. Without a server binary
        (a ``--redis`` URL on a machine without redis-server) the scenario is skipped, saying so."""
        __tracebackhide__ = True
        binary = self._connection.endpoint.binary or find_server_binary()
        if binary is None:
            pytest.skip("needs a redis-server of the scenario's own (its memory limit, its persistence and "
                        "restarts are server-wide, so the suite never changes the server under test), and "
                        "there is no redis-server or valkey-server on PATH: install one "
                        "(apt-get install redis-server)")
        try:
            server = ScenarioServer(ServerProcess.start(binary, config, parent=str(self._worker.scratch)), self.idle)
        except BackendError as exc:
            pytest.skip(f"the suite could not start a redis-server of the scenario's own: {exc}")
        self._servers.append(server)
        self.note(f"on a server of the scenario's own: {server.description}")
        return server

    def append_within(self, store: StoreAdapter, session_id: str, messages: list[Message],
                      budget_s: float) -> TimedAppends:
        """Append ``messages`` in order until all are in or ``budget_s`` has passed, for a scenario
        whose size only serves to find caps: a slow but correct store is checked on what it
        appended, instead of being cut off as a hang. The budget is at most a quarter of the
        scenario timeout, which leaves the check room. A store whose append time grows with the
        history gets a warning (steady-appends) saying by how much (:func:`growth_finding`)."""
        __tracebackhide__ = True
        budget_s = min(budget_s, self._worker.settings.scenario_timeout / BUDGET_SHARE)
        durations: list[float] = []
        started = time.perf_counter()
        for message in messages:
            before = time.perf_counter()
            if before - started >= budget_s:
                break
            store.append(session_id, message.role, message.content)
            durations.append(time.perf_counter() - before)
        growth = growth_finding(durations, time.perf_counter() - started)
        if growth:
            self.warn(Guarantee.STEADY_APPENDS, growth)
        return TimedAppends(messages[:len(durations)], len(messages), budget_s)

    def concurrently(self, store: StoreAdapter, session_id: str, writers: list[list[Message]],
                     readers: int = 0, sessions: list[str] | None = None) -> list[list[list[Message]]]:
        """Append each list in ``writers`` to ``session_id`` (or to its own of ``sessions``, one per
        writer) by a writer of its own, all released at once by a barrier, while ``readers`` readers
        load ``session_id`` over and over until every writer is done; return, for each reader, the
        histories it loaded, in order. Writers and readers share ``store``, as a server's requests share one store
        object: threads for a sync store, tasks on the scenario's event loop for an async one. A
        writer's or reader's exception is raised."""
        __tracebackhide__ = True
        sessions = sessions or [session_id] * len(writers)
        for session in {session_id, *sessions}:
            store.instance_for(session)   # a per-session store is built once, before the race
        if self._loop is not None:
            return self.run_awaitable(self._tasks(store, session_id, writers, readers, sessions))
        barrier = threading.Barrier(len(writers), timeout=BARRIER_TIMEOUT_S)

        def write(session: str, messages: list[Message]) -> None:
            __tracebackhide__ = True   # a store's exception shows the store's frames, not these
            barrier.wait()
            for message in messages:
                store.add(session, message)

        with ThreadPoolExecutor(len(writers)) as pool:
            writing = [pool.submit(write, session, messages) for session, messages in zip(sessions, writers)]

            def written() -> None:
                __tracebackhide__ = True   # a writer's exception shows the store's frames, not these
                for future in writing:
                    future.result()
            return self._reading_while(store, session_id, readers, written)

    async def _tasks(self, store: StoreAdapter, session_id: str, writers: list[list[Message]],
                     readers: int, sessions: list[str]) -> list[list[list[Message]]]:
        """:meth:`concurrently` for an async store: tasks on one loop, interleaved at every await."""
        __tracebackhide__ = True
        barrier = asyncio.Barrier(len(writers))

        async def write(session: str, messages: list[Message]) -> None:
            __tracebackhide__ = True   # a store's exception shows the store's frames, not these
            await barrier.wait()
            for message in messages:
                await store.aadd(session, message)

        return await self._areading_while(store, session_id, readers, asyncio.gather(
            *(write(session, messages) for session, messages in zip(sessions, writers))))

    def until_consistent(self, store: StoreAdapter, sessions: list[str]) -> ConsistencyWait:
        """Call the store's consistent_state for each of ``sessions`` over and over (with tenacity,
        waiting 2 ms more each round, at most 50 ms; an async store's polls and waits run on the
        scenario's event loop, so that tasks of its own go on meanwhile) until it has said True for
        every one, or ``--consistency-timeout`` has passed (at most a quarter of the scenario
        timeout). A call that raises, or returns anything but a bool, fails the scenario naming the
        call; one that hangs is cut off by the call timeout like any other call of the store."""
        __tracebackhide__ = True
        settings = self._worker.settings
        timeout = min(settings.consistency_timeout, settings.scenario_timeout / BUDGET_SHARE)
        agreed: dict[str, float] = {}
        polls = 0
        started = time.perf_counter()

        def judged(session: str, value: Any, error: Exception | None) -> None:
            __tracebackhide__ = True
            call = f"{store.binding.consistency_method}({session!r})"
            if error is not None:
                raise AssertionError(f"the store's {call} raised {type(error).__name__}: {error} (it says whether "
                                     "the store's backends agree: return False while they do not, and raise only "
                                     "when the store cannot tell)") from error
            if not isinstance(value, bool):
                raise AssertionError(f"the store's {call} returned {value!r:.80}, not True or False")
            if value:
                agreed[session] = time.perf_counter() - started

        def all_agree() -> bool:
            __tracebackhide__ = True
            nonlocal polls
            polls += 1
            for session in [s for s in sessions if s not in agreed]:
                try:
                    value, error = store.consistent(session), None
                except Exception as exc:
                    value, error = None, exc
                judged(session, value, error)
            return len(agreed) == len(sessions)

        async def all_agree_async() -> bool:
            __tracebackhide__ = True
            nonlocal polls
            polls += 1
            for session in [s for s in sessions if s not in agreed]:
                try:
                    value, error = await store.aconsistent(session), None
                except Exception as exc:
                    value, error = None, exc
                judged(session, value, error)
            return len(agreed) == len(sessions)

        policy = dict(stop=tenacity.stop_after_delay(timeout),
                      wait=tenacity.wait_incrementing(start=0.002, increment=0.002, max=0.05),
                      retry=tenacity.retry_if_result(lambda done: not done),
                      retry_error_callback=lambda state: state.outcome.result())
        if self._loop is None:
            tenacity.Retrying(**policy)(all_agree)
        else:
            self.run_awaitable(tenacity.AsyncRetrying(**policy)(all_agree_async))
        return ConsistencyWait(agreed, [s for s in sessions if s not in agreed], polls,
                               time.perf_counter() - started, timeout)

    def _reading_while(self, store: StoreAdapter, session_id: str, readers: int, writing: Callable[[], Any],
                       released: Any = None) -> list[list[list[Message]]]:
        """Call ``writing`` (it returns when the writers are done, raising a writer's exception) while
        ``readers`` readers load ``session_id`` over and over, from the moment ``released`` (an event,
        if given) is set; return what they loaded: for each reader, its loads in order. Readers are
        threads for a sync store, tasks on the scenario's event loop for an async one."""
        __tracebackhide__ = True
        if self._loop is not None:
            return self.run_awaitable(self._areading_while(store, session_id, readers, asyncio.to_thread(writing),
                                                           released))
        seen: list[list[list[Message]]] = []
        done = threading.Event()

        def read() -> None:
            __tracebackhide__ = True   # a store's exception shows the store's frames, not these
            loaded: list[list[Message]] = []
            seen.append(loaded)
            while not done.is_set():
                if released is None or released.wait(RELEASE_POLL_S):
                    loaded.append(store.load(session_id))

        with ThreadPoolExecutor(max(readers, 1)) as pool:
            reading = [pool.submit(read) for _ in range(readers)]
            try:
                writing()
            finally:
                done.set()
            for future in reading:
                future.result()
        return seen

    @staticmethod
    async def _areading_while(store: StoreAdapter, session_id: str, readers: int, writing: Awaitable[Any],
                              released: Any = None) -> list[list[list[Message]]]:
        """:meth:`_reading_while` for an async store: ``writing`` is awaited while reader tasks load."""
        __tracebackhide__ = True
        done, seen = asyncio.Event(), []

        async def read() -> None:
            __tracebackhide__ = True   # a store's exception shows the store's frames, not these
            loaded: list[list[Message]] = []
            seen.append(loaded)
            while not done.is_set():
                if released is None or released.is_set():
                    loaded.append(await store.aload(session_id))
                    await asyncio.sleep(0)   # a store whose coroutines never suspend would starve the writers
                else:
                    await asyncio.sleep(RELEASE_POLL_S)

        reading = asyncio.gather(*(read() for _ in range(readers)))
        try:
            await writing
        finally:
            done.set()
            await reading
        return seen

    def in_processes(self, store: StoreAdapter, session_id: str, writers: list[list[Message]],
                     readers: int = 0) -> list[list[list[Message]]]:
        """Append each list in ``writers`` to ``session_id`` by a writer in a process of its own
        (:func:`writer_context`), as replicas of a service append to one session: each binds the
        store again and builds it as ``store`` was built, with a client of its own (on an event loop
        of its own for an async store); a barrier releases them together. Meanwhile ``readers``
        readers of this process load the session over and over, as with :meth:`concurrently`; return
        what they loaded. A writer's exception is raised, with its traceback in the process as its
        cause."""
        __tracebackhide__ = True
        context = writer_context()
        barrier, released = context.Barrier(len(writers), timeout=BARRIER_TIMEOUT_S), context.Event()
        outcomes = context.SimpleQueue()   # written at once, before a writer's os._exit
        processes = [context.Process(target=run_writer, args=(os.getpid(), barrier, released, outcomes,
                                                                self._recipes[store], session_id, messages),
                                     daemon=True)
                     for messages in writers]
        for process in processes:
            process.start()

        def writing() -> None:
            for _ in processes:   # a writer that hangs is cut off with the worker (the scenario timeout)
                outcome = outcomes.get()
                if outcome is not None:
                    exc, text = outcome
                    raise exc from WriterFailed(text)

        try:
            return self._reading_while(store, session_id, readers, writing, released)
        except BaseException:
            barrier.abort()   # the others stop waiting for a writer that will not come
            raise
        finally:
            for process in processes:
                process.kill()
                process.join()

    def reset(self) -> None:
        """Flush the scenario's database (the stateful scenario does so before each example)."""
        __tracebackhide__ = True
        self._connection.flush()

    def keys(self) -> list[str]:
        __tracebackhide__ = True
        return sorted(self._connection.admin.scan_iter(count=1000))

    def kill_connections(self, idle: bool = True) -> int:
        """Close, server-side (CLIENT KILL), every connection of the stores' user on the scenario's
        database (on every node of a cluster), as a server's idle timeout, a proxy or a failover
        does; the suite's own connections are spared. Returns how many were killed. Then a pause
        between requests (:meth:`idle`), unless ``idle`` is False: killed inside a call of the store
        (by a summariser it calls), the store goes on at once."""
        __tracebackhide__ = True
        user = urlsplit(self._connection.url).username or "default"
        killed = 0
        for name, node in self._connection.nodes().items():
            own, db = node.client_id(), node.connection_pool.connection_kwargs.get("db", 0)
            # Redis numbers connections in order: those opened before this scenario began (the runner's
            # health check, another process's) are not its stores'. A connection still in its handshake
            # (no command yet, or only HELLO, AUTH, CLIENT SETINFO, SELECT) shows the default user and
            # database 0 whoever opened it: another worker's, or the runner's, killed there made their
            # next command fail with "Connection closed by server"; a store's connection has run a
            # command by now
            doomed = [client["id"] for client in node.client_list(_type="normal")
                      if int(client["db"]) == db and client.get("user", user) == user and int(client["id"]) != own
                      and int(client["id"]) > self._first_client_ids.get(name, 0)
                      and client.get("cmd", "NULL").split("|")[0] not in HANDSHAKE_COMMANDS]
            killed += sum(node.client_kill_filter(_id=client_id) for client_id in doomed)
        if idle:
            self.idle()
        return killed

    def idle(self) -> None:
        """A pause between requests, after the server closed the store's connections: an async
        store's event loop runs once, as a service's runs between requests and reads those closes
        then (the scenario's loop runs only during the store's calls), so that the client's pool
        replaces the closed connections before sending, as it does in a service."""
        if self._loop is not None:
            self.run_awaitable(asyncio.sleep(0))

    def pttl_ms(self, key: str) -> int:
        __tracebackhide__ = True
        return self._connection.admin.pttl(key)

    def set_pttl_ms(self, key: str, milliseconds: int) -> None:
        __tracebackhide__ = True
        self._connection.admin.pexpire(key, milliseconds)

    def close(self) -> list[str]:
        """Close the stores and their clients, stop the scenario's own servers, flush the scenario's
        database; return the keys that were left without a TTL."""
        __tracebackhide__ = True
        try:
            for instance in self._stores:
                close_quietly(instance, self.run_awaitable)
            for client in self._clients:
                try:
                    if self._binding.is_async:
                        self.run_awaitable(client.aclose())
                    else:
                        client.close()
                except Exception:
                    pass
            if self._loop is not None:
                self._loop.close()
        finally:
            for server in self._servers:
                server.stop()
            shutil.rmtree(self.data_dir, ignore_errors=True)
        left = [k for k in self.keys() if self.pttl_ms(k) == -1][:KEYS_WITHOUT_TTL_PER_SCENARIO]
        self.reset()   # an external --redis database is left as empty as the run found it
        return left


KEYS_WITHOUT_TTL_KEY = pytest.StashKey[list]()
FINDINGS_KEY = pytest.StashKey[list]()
WARNINGS_KEY = pytest.StashKey[list]()   # ScenarioContext.warn's records
MEASUREMENTS_KEY = pytest.StashKey[list]()   # ScenarioContext.measure's records
OWN_SERVERS_KEY = pytest.StashKey[list]()   # the scenario's own servers (ScenarioContext.own_server)
STORES_KEY = pytest.StashKey[list]()   # the store instances the scenario built, whose clients a diagnosis may name
FINDINGS_PER_SCENARIO = 20


def prepare_worker_process(parent: int | None = None) -> None:
    """A worker (or a writer process it spawned, given its pid as ``parent``) dies with the process
    that started it, and leaves Ctrl-C to the runner."""
    die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class ScenarioWorker:
    """The plugin in the process that runs the scenarios."""

    def __init__(self, settings: Settings, endpoints: list[tuple[str, dict[str, str]]], channel: Any,
                 redactor: Redactor, scratch: Path, dump_path: Path | None = None, listing: bool = False):
        from hypothesis.configuration import set_hypothesis_home_dir
        set_hypothesis_home_dir(scratch / "hypothesis")   # not .hypothesis/ in the user's directory
        self.settings = settings
        self.scratch = scratch         # the run's scratch directory, which the runner removes at the end
        self.dump_path = dump_path     # None when the scenarios run in the runner itself
        self.listing = listing         # --list: every scenario is skipped, saying whether it would run
        # the run's engines, in order: (name, its database); one engine is named ""
        self.endpoints = {name: Endpoint(**endpoint) for name, endpoint in endpoints}
        self.engine_names = list(self.endpoints)
        self.channel = channel
        self.redactor = redactor
        self.connections: dict[str, Connection] = {}
        self.binding: StoreBinding | None = None
        self.capabilities: frozenset[Capability] = frozenset()
        self.counters: dict[str, TokenCounter] = {}
        self.roomy_counter: TokenCounter | None = None   # the cheap one of scenarios not about tokens
        self.scenarios: dict[str, dict[str, Any]] = {}   # nodeid -> scenario_info
        self.aborted = False
        self._dump: Any = None         # the file faulthandler writes to, kept open
        # the store call in progress, for the runner to cut off past the call timeout (in the runner
        # itself, -n 0, nothing is cut off)
        self.calls = CallPage(call_page_path(scratch, channel.worker, os.getpid()) if dump_path else None)
        self.channel.send("hello", pid=os.getpid())

    # -- binding the store ----------------------------------------------------------------------
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        if self.dump_path is not None:
            # after pytest's own faulthandler plugin, which points it at stderr: the stack of a crash,
            # or of a hang when the runner asks (SIGUSR1) before cutting it off, goes to the runner
            self._dump = open(self.dump_path, "w", encoding="utf-8")  # noqa: SIM115 (kept open)
            faulthandler.enable(file=self._dump, all_threads=True)
            faulthandler.register(signal.SIGUSR1, file=self._dump, all_threads=True)
        if session.config.option.collectonly:
            return
        try:
            self.channel.send("bound", store=self._bind())
        except UsageError as exc:
            self.abort(Status.USAGE_ERROR, str(exc))
        except (redis.RedisError, OSError) as exc:
            self.abort(Status.REDIS_ERROR, f"Redis went away while the store was being built: {exc}")
        except Exception:   # the suite's own fault: say so rather than crash the worker
            self.abort(Status.SUITE_ERROR, f"binding the store failed inside the suite:\n{traceback.format_exc()}")

    def _bind(self) -> dict[str, Any]:
        settings = self.settings
        self.connections = {name: Connection(endpoint) for name, endpoint in self.endpoints.items()}
        self.roomy_counter = counter_for(settings, None)
        self.counters = {p.name: counter_for(settings, p) for p in settings.profiles}
        self.binding = bind(settings, self._probe)
        if (any(e.kind == "fakeredis" for e in self.endpoints.values()) and self.binding.accepts("redis_url")
                and not self.binding.accepts("redis")):
            raise UsageError(f"--store {settings.store_spec!r} connects by redis_url, which fakeredis "
                             "cannot serve: use --redis server or a redis:// URL")
        self.capabilities = detect(self.binding)
        source = self.binding.source_file
        return {"file": str(source) if source else None, "line": definition_line(self.binding.factory),
                "capabilities": sorted(c.value for c in self.capabilities), "shape": self.binding.shape,
                "counters": {name: counter.description for name, counter in self.counters.items()},
                "unfilled": unfilled_text(self.binding), "observations": self._observe()}

    def _observe(self) -> list[str]:
        """What the store does with what the suite gives it (:mod:`.observe`), for a store that could
        ignore it; a UsageError when it cannot be judged as bound."""
        if not needs_probe(self.binding):
            return []
        context = ScenarioContext(self, "observe")
        try:
            return observe(context, self.binding)
        finally:
            context.close()

    def _probe(self, binding: StoreBinding) -> Any:
        """A store built only to look at its methods (factories that are not classes)."""
        self.binding = binding
        context = ScenarioContext(self, "probe")
        try:
            return context.store().instance_for("probe")
        except redis.RedisError as exc:
            missing = module_command(exc)
            if missing:
                raise UsageError(missing_module_message(*missing)) from None
            raise
        finally:
            context.close()

    def abort(self, status: Status, message: str) -> None:
        """This worker cannot run the store: the runner stops the run with ``status``."""
        self.aborted = True
        self.channel.send("abort", status=status.value, message=self.redactor.text(message))

    # -- collection -------------------------------------------------------------------------------
    def pytest_ignore_collect(self, collection_path: Path) -> bool | None:
        """Nothing more once the run was aborted; of the suite's files, only the chosen groups'."""
        if self.aborted:
            return True
        if collection_path.suffix == ".py" and collection_path.name.startswith("test_"):
            return scenario_group(collection_path.name) not in self.settings.groups or None
        return None

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        sizes, profiles = self.settings.window_sizes, self.settings.profiles
        if "window" in metafunc.fixturenames and (Capability.COUNT_WINDOW in self.capabilities
                                                  or any(metafunc.definition.iter_markers("requires"))):
            metafunc.parametrize("window", sizes, ids=[f"N={n}" for n in sizes])
        if "profile" in metafunc.fixturenames:
            metafunc.parametrize("profile", profiles, ids=[p.name for p in profiles])
        if len(self.engine_names) > 1:   # last, so that every id ends in its engine: test_x[N=5-fakeredis]
            metafunc.parametrize("memory_engine", self.engine_names, ids=self.engine_names)

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        # stable: the rest keep their order
        items.sort(key=lambda item: item.get_closest_marker("starts_first") is None)
        try:
            self.scenarios = {item.nodeid: scenario_info(item) for item in items}
        except UnknownCapability as exc:
            items.clear()
            self.abort(Status.SUITE_ERROR, str(exc))

    # -- running ---------------------------------------------------------------------------------
    def pytest_runtest_logstart(self, nodeid: str) -> None:
        self.channel.send("start", nodeid=nodeid, scenario=self.scenarios.get(nodeid, {}))

    def pytest_runtest_logfinish(self, nodeid: str) -> None:
        self.channel.send("end", nodeid=nodeid)

    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        missing = [Capability(c) for c in self.scenarios[item.nodeid]["requires"]
                   if Capability(c) not in self.capabilities]
        if missing:
            pytest.skip(skip_reason(missing))
        real_server = item.get_closest_marker("real_server")
        engine = getattr(item, "callspec", None) and item.callspec.params.get("memory_engine")
        engine = engine or self.engine_names[0]
        if real_server and self.endpoints[engine].kind == "fakeredis":
            pytest.skip(f"needs a real Redis server ({real_server.args[0]}), which fakeredis does not follow: "
                        "run with --redis server or a redis:// URL")
        if self.listing:
            pytest.skip(LISTED_NOT_RUN)

    @pytest.fixture
    def window(self) -> None:
        """The window of a core scenario that takes one (the stateful scenario), on a store without a
        count window: None, and the scenario runs once, unwindowed. Every other scenario that takes a
        window runs per window size (skipped where its capability is missing)."""
        return None

    @pytest.fixture(autouse=True)
    def memory_engine(self) -> str:
        """The engine a scenario runs on: with several (--redis server,fakeredis), every scenario is
        parametrized by it; with one, it is that one, named ""."""
        return ""

    @pytest.fixture
    def memory(self, request: pytest.FixtureRequest, memory_engine: str) -> Any:
        """The scenario's context: ``memory.store(...)`` builds a store; ``memory.keys()`` lists keys."""
        __tracebackhide__ = True
        context = ScenarioContext(self, request.node.nodeid, memory_engine)
        request.node.stash[FINDINGS_KEY] = context.findings   # kept even if closing fails
        request.node.stash[WARNINGS_KEY] = context.warnings
        request.node.stash[MEASUREMENTS_KEY] = context.measurements
        request.node.stash[OWN_SERVERS_KEY] = context._servers
        request.node.stash[STORES_KEY] = context._stores
        yield context
        request.node.stash[KEYS_WITHOUT_TTL_KEY] = context.close()

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo) -> Any:
        try:
            report = yield
        except Exception as exc:   # pytest could not render the failure: it stays the scenario's, the rest run
            report = unrendered_report(item, call, exc)
        warnings = item.stash.get(WARNINGS_KEY, [])
        if report.when == "call" and report.passed and warnings and self.settings.strict:
            text = "; ".join(warning["text"] for warning in warnings)
            report.outcome, report.longrepr = "failed", f"{text} (a warning: --strict fails it)"
        missing = module_command(call.excinfo.value) if report.failed and call.excinfo else None
        if missing and item.stash.get(OWN_SERVERS_KEY, None):   # the scenario's own server lacks it
            command, module = missing
            reason = (f"the store ran {command}, a command of the {module} module, which the redis-server the "
                      "suite started for this scenario (from PATH: memory limits, persistence and restarts are "
                      f"server-wide, so the server under test is never changed) lacks: put a server with {module} "
                      "on PATH to run it")
            report.outcome, report.longrepr = "skipped", (str(item.path), item.location[1], f"Skipped: {reason}")
        elif missing and not self.aborted:   # the run stops: every scenario would fail the same way
            self.abort(Status.USAGE_ERROR, missing_module_message(*missing))
        if report.failed or report.skipped:
            report.memory_verdict = redacted(describe_outcome(report, call.excinfo, item.stash.get(STORES_KEY, [])),
                                             self.redactor)
        if report.failed:   # pytest's own rendering stays, unless it holds a secret or is too long
            text = report.longreprtext
            safe = cap(self.redactor.text(text), CAPTURE_LIMIT, "this failure's text")
            if safe != text:
                report.longrepr = safe
        report.sections = [(title, cap(self.redactor.text(content), CAPTURE_LIMIT, title.lower()))
                           for title, content in report.sections]
        if report.when == "teardown":
            report.memory_keys_without_ttl = item.stash.get(KEYS_WITHOUT_TTL_KEY, [])
            report.memory_findings = [cap(self.redactor.text(text), DETAILS_LIMIT, "this finding")
                                      for text in item.stash.get(FINDINGS_KEY, [])[:FINDINGS_PER_SCENARIO]]
            report.memory_measurements = redacted(item.stash.get(MEASUREMENTS_KEY, [])[:FINDINGS_PER_SCENARIO],
                                                  self.redactor)
            report.memory_warnings = [{**warning, "text": cap(self.redactor.text(warning["text"]), DETAILS_LIMIT,
                                                              "this warning")}
                                      for warning in warnings[:FINDINGS_PER_SCENARIO]]
        return report

    @pytest.hookimpl(wrapper=True)
    def pytest_report_to_serializable(self, report: Any) -> Any:
        """A report as xdist sends it to the runner, its text made such that UTF-8 can carry it: a
        store's role or exception may hold an unpaired surrogate, which would otherwise stop the
        send, and with it the scenario's place in the verdict."""
        data = yield
        return map_strings(data, sendable)

    def pytest_sessionfinish(self) -> None:
        for connection in self.connections.values():
            connection.close()


# the frames of pytest's own machinery, left out of a failure the suite renders itself
PYTEST_DIRECTORIES = tuple(str(Path(module.__file__).resolve().parent) for module in (_pytest, pluggy))


def unrendered_report(item: pytest.Item, call: pytest.CallInfo, error: Exception) -> pytest.TestReport:
    """The report of a scenario whose failure pytest could not render (Python 3.11 raises "SystemError:
    AST constructor recursion depth mismatch" on some deep chains of exceptions; a store's frame may
    hold a ``__tracebackhide__`` that raises): the store's exception as the traceback module renders
    it, and what stopped pytest."""
    exc = call.excinfo.value if call.excinfo else None
    try:
        text = user_traceback(exc, PYTEST_DIRECTORIES)[-DETAILS_LIMIT:] if exc is not None else ""
    except Exception:   # noqa: BLE001 (its own rendering failing too: its type and text are left)
        text = f"{type(exc).__name__}: {exc!r:.500}"
    text += f"\n(pytest could not render this failure: {type(error).__name__}: {error})"
    return pytest.TestReport(item.nodeid, item.location, dict.fromkeys(item.keywords, 1), "failed", text, call.when,
                             [], call.duration, call.start, call.stop, user_properties=item.user_properties)


def growth_finding(durations: list[float], seconds: float) -> str | None:
    """A finding when append time grows with the history: the median of the last tenth of the
    appends at least GROWTH_RATIO times the first tenth's, and GROWTH_FLOOR_S more per append.
    Medians, so a pause of the machine does not count; a load that slows everything alike leaves
    the ratio alone."""
    tenth = len(durations) // 10
    if len(durations) < GROWTH_SAMPLES:
        return None
    first, last = statistics.median(durations[:tenth]), statistics.median(durations[-tenth:])
    if last < GROWTH_RATIO * first or last - first < GROWTH_FLOOR_S:
        return None
    return (f"append time grows with history length: {len(durations):,} appends in {seconds:.1f} s, the "
            f"first {tenth:,} at {first * 1000:.2f} ms each, the last {tenth:,} at {last * 1000:.2f} ms each "
            f"(medians, {last / first:.0f}×)")


def redacted(value: Any, redactor: Redactor) -> Any:
    """``value`` with every string in it, however nested in dicts and lists, redacted."""
    return map_strings(value, redactor.text)


def cap(text: str, limit: int, what: str) -> str:
    """``text`` cut to ``limit`` characters, saying how much was cut."""
    if len(text) <= limit:
        return text
    return (text[:limit] + f"\n[... {len(text) - limit:,} more characters of {what} cut: the suite keeps "
            f"the first {limit // 1024} KB of each]")


def scenario_info(item: pytest.Item) -> dict[str, Any]:
    """What the reports say about a scenario: its name, group, matrix point and capabilities."""
    requires = [lookup(c).value for mark in item.iter_markers("requires") for c in mark.args]
    guarantees = [lookup_guarantee(g).value for mark in item.iter_markers("guarantees") for g in mark.args]
    params = getattr(getattr(item, "callspec", None), "params", {})
    window, profile = params.get("window"), params.get("profile")
    point = f"N={window}" if window is not None else profile.name if profile is not None else ""
    return {"scenario": getattr(item, "originalname", item.name), "group": scenario_group(item.path.as_posix()),
            "point": point, "requires": requires, "guarantees": guarantees, "engine": params.get("memory_engine", "")}


def definition_line(factory: Any) -> int | None:
    """The line where the store is defined, for annotations that point at it."""
    try:
        return inspect.getsourcelines(factory)[1]
    except (OSError, TypeError):
        return None


def describe_outcome(report: pytest.TestReport, excinfo: Any, stores: list[Any] = ()) -> dict[str, Any]:
    """The verdict: ``message``, one line saying what happened, and ``details``, the text worth reading
    (expected against actual); for a history mismatch also its ``listing`` (a :class:`.Listing` as a
    mapping) and ``notes`` (the steps Hypothesis adds), which report.html shows as a table and text.
    ``stores``: the instances the scenario built, whose own clients may be the cause."""
    if report.skipped:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        return _verdict(reason.removeprefix("Skipped: "))
    if excinfo is None:   # a scenario that passed with warnings, failed by --strict, says them
        return _verdict(str(report.longrepr or ""))
    exc, replayed = unwrap_flaky(excinfo.value)
    verdict = _describe(report, exc, stores)
    if replayed:   # the store's own failure, if Hypothesis kept it, and that a replay went otherwise
        found = verdict["message"] if exc is not excinfo.value else ""
        verdict["message"] = f"{found}; {UNREPRODUCIBLE}" if found else UNREPRODUCIBLE
    return verdict


# what Hypothesis's Flaky errors mean, in store terms
UNREPRODUCIBLE = ("not reproducible: when the same steps ran again, the store behaved differently (its results "
                  "depend on something the steps do not set: time, randomness, a counter or cache of its process, "
                  "another process)")


def unwrap_flaky(exc: BaseException) -> tuple[BaseException, bool]:
    """The store's own failure inside a Hypothesis ``Flaky`` error (raised when a replay of the same
    steps behaved otherwise), and whether there was one; ``exc`` itself otherwise."""
    from hypothesis.errors import Flaky
    if not isinstance(exc, Flaky):
        return exc, False
    inner = next(iter(getattr(exc, "exceptions", ())), None) or exc.__context__ or exc.__cause__
    return (inner if inner is not None else exc), True


def _describe(report: pytest.TestReport, exc: BaseException, stores: list[Any]) -> dict[str, Any]:
    steps = "\n".join(getattr(exc, "__notes__", []))  # Hypothesis lists the steps of a failing sequence here
    if isinstance(exc, HistoryMismatch):
        return {**_verdict(exc.diagnosis, "\n".join(filter(None, [exc.listing.text(), steps]))),
                "listing": asdict(exc.listing), "notes": steps}
    if isinstance(exc, AssertionError):
        text = str(exc).split("\nassert ")[0]
        first, _, rest = text.partition("\n")
        return _verdict(first, rest)
    forbidden = forbidden_command(exc)
    if forbidden:
        return _verdict(f"the store ran {forbidden} on the suite's Redis server, which the suite forbids: a "
                        "memory store must never flush, pause, reconfigure or shut down the server (it would destroy "
                        "or hold every other session's history)", report.longreprtext[-DETAILS_LIMIT:])
    origin = "the store raised" if report.when == "call" else f"{report.when} failed:"
    short = exception_line(exc)
    if isinstance(exc, AttributeError) and "'str' object has no attribute 'decode'" in str(exc):
        short = short.split(". Did you mean")[0]   # Python 3.12+ suggests encode: the hint below says what to do
        short += (" (the store decodes bytes, but the suite's redis client is built with "
                  "decode_responses=True and returns str: decode only bytes, or build your own client "
                  "from the redis_url parameter)")
    hint = cluster_hint(exc) or (idle_close_defect(stores) if IDLE_CLOSE_SIGN in str(exc) else None)
    if hint:
        short += f" ({hint})"
    return _verdict(f"{origin} {short}", report.longreprtext[-DETAILS_LIMIT:])


def exception_line(exc: BaseException) -> str:
    """The line naming ``exc`` and its message (the last of what the traceback module prints of it, a
    SyntaxError's included), without the notes Hypothesis adds (the steps of a stateful run)."""
    notes = {line for note in getattr(exc, "__notes__", None) or [] for line in str(note).splitlines()}
    lines = [line for line in "".join(traceback.format_exception_only(type(exc), exc)).strip().splitlines()
             if line not in notes]
    return lines[-1] if lines else type(exc).__name__


def _verdict(message: str, details: str = "") -> dict[str, Any]:
    return {"message": message, "details": details}


def forbidden_command(exc: BaseException) -> str | None:
    """The command named by Redis' NOPERM error, where the store ran one the suite forbids."""
    for link in exception_chain(exc):
        text = str(link)
        if "no permissions to run the" in text:  # Redis' NOPERM error, as redis-py words it
            name = text.split("'")[1] if text.count("'") >= 2 else "a forbidden command"
            return name.upper().replace("|", " ")   # client|pause: CLIENT PAUSE
    return None


# what a Redis Cluster answers, or redis-py's cluster client raises, when one transaction or script
# touches keys of several hash slots (a script's undeclared key on another node: "non local key")
CROSS_SLOT = re.compile(r"CROSSSLOT|hash to the same slot|must map to the same (key )?slot|non local key")
CROSS_SLOT_HINT = (
    "CROSSSLOT: a Redis Cluster runs one transaction (MULTI/EXEC) or script only on keys of one hash slot; "
    "give all keys of a session one hash tag, the session id in braces, as in chat:{<session>}:messages "
    "and chat:{<session>}:meta (only the part in braces is hashed), and declare every key a script "
    "touches in KEYS")
MOVED_HINT = (
    "MOVED: on a Redis Cluster the key lives on another node, and the store's client is not "
    "cluster-aware: use the client the suite passes, or build a redis.cluster.RedisCluster from redis_url "
    "(RedisCluster.from_url; redis.asyncio.RedisCluster for an async store)")


def cluster_hint(exc: BaseException) -> str | None:
    """What to say when a store written for one server fails on a Redis Cluster: keys of one
    transaction or script in several slots (CROSSSLOT), or a client that is not cluster-aware."""
    for link in exception_chain(exc):
        if CROSS_SLOT.search(f"{type(link).__name__}: {link}"):
            return CROSS_SLOT_HINT
        if isinstance(link, redis.exceptions.MovedError):
            return MOVED_HINT
    return None


# the prefix of a module's commands -> the Redis module that provides them
MODULE_COMMANDS = {"FT.": "RediSearch", "JSON.": "RedisJSON", "TS.": "RedisTimeSeries", "BF.": "RedisBloom",
                   "CF.": "RedisBloom", "CMS.": "RedisBloom", "TOPK.": "RedisBloom", "TDIGEST.": "RedisBloom"}


def module_command(exc: BaseException) -> tuple[str, str] | None:
    """The command of a Redis module the store ran and the server lacked (Redis answers "unknown
    command 'FT._LIST'"), and that module: a configuration to fix, not a finding."""
    for link in exception_chain(exc):
        found = re.search(r"unknown command '([^']+)'", str(link), re.IGNORECASE)
        command = found.group(1).upper() if found else ""
        module = next((name for prefix, name in MODULE_COMMANDS.items() if command.startswith(prefix)), None)
        if module:
            return command, module
    return None


def missing_module_message(command: str, module: str) -> str:
    return (f"the store ran {command}, a command of the {module} module, which the Redis server under "
            f"test lacks: run the suite against a server with {module} (Redis Stack, or Redis 8 with "
            "its modules) with --redis redis://HOST:PORT/DB; in GitHub Actions, start one as a "
            "services: container and pass its URL as the redis input")
