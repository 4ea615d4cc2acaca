"""What one scenario gets: :class:`ScenarioContext`, the fixture ``memory``.

It builds stores afresh from the user's factory (:meth:`~ScenarioContext.store`), on the scenario's
own database, flushed when the context is made, so every key seen belongs to the scenario; and it
gives the scenarios what they measure with: timed appends, races of writers (:mod:`.races`),
consistency polls, servers of the scenario's own, a view of the keys and their TTLs, killed
connections, and findings, warnings and figures for the reports.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import shutil
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable
from urllib.parse import urlsplit

import pytest
import tenacity

from .backend import BackendError, Connection, Endpoint
from .servers import ServerProcess, find_server_binary
from .capabilities import Capability, Guarantee
from .growth import growth_finding, timed_appends
from .adapter import StoreAdapter
from .binding import StoreBinding
from .contract import Message, close_quietly
from .profiles import ModelProfile, TokenCounter
from .races import Races
from .reference import summarize
from .scenario_server import ScenarioServer
from .settings import BUDGET_SHARE, ROOMY_TTL_S, WINDOWLESS
from .writers import StoreRecipe, own_adapter

if TYPE_CHECKING:
    from .worker import ScenarioWorker


KEYS_WITHOUT_TTL_PER_SCENARIO = 50   # keys without TTL noted per scenario
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


class ScenarioContext(Races):
    """What one scenario gets (fixture ``memory``): stores built afresh by the user's factory, and a
    view of the keys on the scenario's database. The database is flushed when the context is made,
    so every key seen belongs to the scenario."""

    def __init__(self, worker: "ScenarioWorker", nodeid: str, engine: str = ""):
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
        if self._loop is None:
            return asyncio.run(awaitable)
        return self._loop.run(awaitable)

    def store(self, *, max_messages: int = WINDOWLESS, profile: ModelProfile | None = None,
              ttl: int = ROOMY_TTL_S, summarize: Callable[[list], str] = summarize) -> StoreAdapter:
        """A new store instance. Arguments not about the scenario's subject are roomy and cheap: a
        window of a million messages, an unbounded token budget counted with ``approx`` (the
        profile's own counter only where ``profile`` is given), a TTL of an hour, and the suite's
        summariser (:func:`.reference.summarize`)."""
        recipe = StoreRecipe(self._worker.settings, self._connection.endpoint, self.namespace, max_messages,
                             profile, ttl, self.data_dir, summarize)
        client = self.raw_client()
        counter = self._counter_of(recipe)

        def build(session_id: str | None) -> Any:
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
        client = self._connection.client(asynchronous=self._binding.is_async)
        self._clients.append(client)
        return client

    def bytes_used(self) -> dict[str, int]:
        """What each key on the scenario's database takes in the server's memory: ``MEMORY USAGE key
        SAMPLES 0``, every element counted (the default samples 5 of a list's nodes and estimates).
        A key that expired or was deleted meanwhile is left out. Needs a real server."""
        admin = self._connection.admin
        used = {key: admin.memory_usage(key, samples=0) for key in self.keys()}
        return {key: size for key, size in used.items() if size is not None}

    def store_on(self, url: str, **options: Any) -> StoreAdapter:
        """A store built as :meth:`store` builds it (``options`` are its arguments), whose client and
        ``redis_url`` reach ``url`` instead of the scenario's database. On a cluster, ``url`` is taken
        for a cluster's (but for the scenario's own server's), and a synchronous store skips the
        scenario: see CLUSTER_CLIENT_CONNECTS."""
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
                      budget_s: float, control: bool = True) -> TimedAppends:
        """Append ``messages`` in order until all are in or ``budget_s`` has passed, for a scenario
        whose size only serves to find caps: a slow but correct store is checked on what it
        appended, instead of being cut off as a hang. The budget is at most a quarter of the
        scenario timeout, which leaves the check room. With ``control``, appends to short sessions
        of their own run between (:func:`.growth.timed_appends`), and a store whose append time grows
        with the history gets a warning (steady-appends) saying by how much
        (:func:`.growth.growth_finding`)."""
        budget_s = min(budget_s, self._worker.settings.scenario_timeout / BUDGET_SHARE)
        started = time.perf_counter()
        times = timed_appends(store, session_id, messages, budget_s, control)
        warning, note = growth_finding(times, time.perf_counter() - started)
        if warning:
            self.warn(Guarantee.STEADY_APPENDS, warning)
        if note:
            self.note(note)
        return TimedAppends(messages[:len(times.history)], len(messages), budget_s)

    def until_consistent(self, store: StoreAdapter, sessions: list[str]) -> ConsistencyWait:
        """Call the store's consistent_state for each of ``sessions`` over and over (with tenacity,
        waiting 2 ms more each round, at most 50 ms; an async store's polls and waits run on the
        scenario's event loop, so that tasks of its own go on meanwhile) until it has said True for
        every one, or ``--consistency-timeout`` has passed (at most a quarter of the scenario
        timeout). A call that raises, or returns anything but a bool, fails the scenario naming the
        call; one that hangs is cut off by the call timeout like any other call of the store."""
        settings = self._worker.settings
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

        self.run_awaitable(tenacity.AsyncRetrying(
            stop=tenacity.stop_after_delay(timeout),
            wait=tenacity.wait_incrementing(start=0.002, increment=0.002, max=0.05),
            retry=tenacity.retry_if_result(lambda done: not done),
            retry_error_callback=lambda state: state.outcome.result())(all_agree))
        return ConsistencyWait(agreed, [s for s in sessions if s not in agreed], polls,
                               time.perf_counter() - started, timeout)

    def reset(self) -> None:
        """Flush the scenario's database (the stateful scenario does so before each example)."""
        self._connection.flush()

    def keys(self) -> list[str]:
        return sorted(self._connection.admin.scan_iter(count=1000))

    def kill_connections(self, idle: bool = True) -> int:
        """Close, server-side (CLIENT KILL), every connection of the stores' user on the scenario's
        database (on every node of a cluster), as a server's idle timeout, a proxy or a failover
        does; the suite's own connections are spared. Returns how many were killed. Then a pause
        between requests (:meth:`idle`), unless ``idle`` is False: killed inside a call of the store
        (by a summariser it calls), the store goes on at once."""
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
        return self._connection.admin.pttl(key)

    def set_pttl_ms(self, key: str, milliseconds: int) -> None:
        self._connection.admin.pexpire(key, milliseconds)

    def close(self) -> list[str]:
        """Close the stores and their clients, stop the scenario's own servers, flush the scenario's
        database; return the keys that were left without a TTL."""
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


