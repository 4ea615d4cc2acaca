"""What one scenario holds, and closes when it ends: :class:`ScenarioContext`.

It is the core the scenario's fixtures (:mod:`.fixtures`) are built on, each with one concern:
``stores`` (:mod:`.scenario_stores`), ``keyspace`` and ``connections`` (:mod:`.server_view`),
``races`` (:mod:`.races`), ``own_server`` (:mod:`.scenario_server`), ``until_consistent``
(:mod:`.polling`), ``append_within`` (:mod:`.growth`) and ``findings`` (:mod:`.findings`). It
holds what they share: the scenario's database, flushed when the context is made so that every key
seen belongs to the scenario, the store's binding, the event loop of an async store, and the store
instances, clients and servers the parts made, which :meth:`ScenarioContext.close` ends.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import shutil
import threading
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

import pytest

from ..engines.backend import Connection
from ..contract.capabilities import Capability
from ..contract.binding import StoreBinding
from ..contract.rules import close_quietly
from .findings import Findings
from ..engines.servers import ServerProcess, find_server_binary, start_one_node_cluster
from ..errors import BackendError
from .scenario_server import ScenarioServer, debug_config
from .store_commands import CommandLog, command_log

if TYPE_CHECKING:
    from ..contract.adapter import StoreAdapter
    from ..channel.call_page import CallPage
    from ..contract.profiles import ModelProfile, TokenCounter
    from ..settings import Settings
    from .writers import StoreRecipe


KEYS_WITHOUT_TTL_PER_SCENARIO = 50   # keys without TTL noted per scenario


@dataclass(frozen=True)
class ScenarioSetup:
    """What every scenario of a worker is set up from, as the worker knows it when the scenario starts:
    the run's settings, the store's binding and capabilities, a connection per engine (the first is
    the default), the token counters (per profile, and the roomy one of scenarios not about tokens),
    the run's scratch directory, the call page the runner watches calls on, and why the store's
    history is not on the server under test (None: it is, or that is not known yet)."""

    settings: "Settings"
    binding: StoreBinding
    capabilities: frozenset[Capability]
    connections: dict[str, Connection]
    counters: dict[str, "TokenCounter"]
    roomy_counter: "TokenCounter | None"
    scratch: Path
    calls: "CallPage"
    elsewhere: str | None = None


class ScenarioContext:
    """One scenario's database, binding, loop and resources. The database is flushed when the
    context is made, so every key seen belongs to the scenario."""

    def __init__(self, setup: ScenarioSetup, nodeid: str, engine: str = ""):
        self.setup = setup
        self.settings = setup.settings
        self.binding: StoreBinding = setup.binding
        self.connection: Connection = setup.connections[engine or next(iter(setup.connections))]
        digest = hashlib.sha1(nodeid.encode()).hexdigest()[:8]
        self.namespace = f"mrs:{digest}:"
        # the stores' files (data_dir): under the run's scratch directory, which the runner removes in any case
        self.data_dir = setup.scratch / "stores" / f"{digest}-{os.getpid()}"
        self.capabilities: frozenset[Capability] = setup.capabilities
        self._loop = asyncio.Runner() if self.binding.is_async else None
        self.instances: list[Any] = []   # every store instance built: closed at the end; diagnoses name their clients
        self.clients: list[Any] = []
        self.recipes: dict["StoreAdapter", "StoreRecipe"] = {}   # what each store was built from
        self.servers: list[ScenarioServer] = []                  # the scenario's own
        self.findings = Findings()
        self.hung_closes = 0   # closes of the store that did not return while it was being bound (close(binding=True))
        self.commands: CommandLog | None = None   # what the stores sent, once logged (log_commands)
        self.reset()
        # see server_view.Connections.kill: on each server (each node of a cluster), the last connection opened so far
        self.first_client_ids = {name: node.client_id() for name, node in self.connection.nodes().items()}

    def log_commands(self) -> None:
        """Log the commands the stores send to the scenario's database from now on (MONITOR, on a
        server the suite started: :mod:`.store_commands`), for the diagnoses and the failure's details."""
        endpoint = self.connection.endpoint
        if endpoint.traits.started:
            self.commands = command_log(self.connection.nodes(), endpoint.admin_url, endpoint.store_url)

    @contextmanager
    def watch(self, member: str, args: tuple) -> Iterator[None]:
        """Wrap a call of the store: the runner sees it (its call page), and the command log marks it."""
        with self.setup.calls.watch(member, args), (self.commands.watch(member, args) if self.commands
                                                      else nullcontext()):
            yield

    def run_awaitable(self, awaitable: Any) -> Any:
        """Run a coroutine on the scenario's event loop (an async store's, on which its calls run),
        or on a loop of its own for a sync store."""
        if self._loop is None:
            return asyncio.run(awaitable)
        return self._loop.run(awaitable)

    def counter(self, profile: "ModelProfile | None") -> "TokenCounter":
        """What one message costs under ``profile``, as the store is told to count (None: the roomy
        ``approx`` counter stores get where tokens are not the scenario's subject)."""
        return self.setup.counters[profile.name] if profile else self.setup.roomy_counter

    def idle(self) -> None:
        """A pause between requests, after the server closed the store's connections: an async
        store's event loop runs once, as a service's runs between requests and reads those closes
        then (the scenario's loop runs only during the store's calls), so that the client's pool
        replaces the closed connections before sending, as it does in a service."""
        if self._loop is not None:
            self.run_awaitable(asyncio.sleep(0))

    def on_server(self) -> None:
        """Skip the scenario, which acts on the server under test (its keys, its connections, a server
        of its own or another URL to build the store on), when the store keeps its history elsewhere
        (:func:`.observe.kept_elsewhere`): it would judge a server the store does not use."""
        if self.setup.elsewhere:
            pytest.skip("this scenario acts on the server the store keeps its history on, and the store's appends "
                        "left no key on the server under test (see the run's header): it keeps it elsewhere. Run "
                        "with --redis naming that server to judge it")

    def own_server(self, config: dict[str, str] | None = None, debug: bool = False) -> ScenarioServer:
        """A redis-server of the scenario's own, with ``config`` (redis.conf names and values:
        ``{"maxmemory-policy": "noeviction"}``, ``{"appendonly": "yes", "appendfsync": "always"}``)
        over the private server's (no persistence): the binary of the engine under test when the
        suite started it (redis-server, valkey-server, a cluster's nodes), else the first server
        binary on PATH; on a free loopback port and in a directory of its own under the run's scratch
        directory. On a Redis Cluster it is a cluster of one node that holds every slot, so that a
        store whose client is a cluster client (built from redis_url) reaches it as it reaches the
        run's cluster; it takes 2 s more to start, and to restart. It dies with the worker (a
        parent-death signal; a store that hangs gets the worker killed) and is stopped by PID when the
        scenario ends, pass or fail. Without a server binary (a ``--redis`` URL on a machine without
        redis-server) the scenario is skipped, saying so."""
        self.on_server()
        binary = self.connection.endpoint.binary or find_server_binary()
        if binary is None:
            pytest.skip("needs a redis-server of the scenario's own (its memory limit, its persistence and "
                        "restarts are server-wide, so the suite never changes the server under test), and "
                        "there is no redis-server or valkey-server on PATH: install one "
                        "(apt-get install redis-server)")
        if debug:
            config = {**debug_config(binary), **(config or {})}
        start = start_one_node_cluster if self.connection.endpoint.traits.cluster else ServerProcess.start
        try:
            server = ScenarioServer(start(binary, config, parent=str(self.setup.scratch)), self.idle)
        except BackendError as exc:
            pytest.skip(f"the suite could not start a redis-server of the scenario's own: {exc}")
        self.servers.append(server)
        self.findings.note(f"on a server of the scenario's own: {server.description}")
        return server

    def reset(self) -> None:
        """Flush the scenario's database."""
        self.connection.flush()

    def keys(self) -> list[str]:
        return sorted(self.connection.admin.scan_iter(count=1000))

    def close(self, binding: bool = False) -> list[str]:
        """Close the stores and their clients, stop the scenario's own servers, flush the scenario's
        database; return the keys that were left without a TTL. A store's close that hangs is cut off by
        the call timeout in a scenario, as any call is, and fails it; while the store is being bound
        (``binding``) it is left to hang in a thread of its own, for the scenarios to find."""
        try:
            for instance in self.instances:
                if binding:
                    closing = threading.Thread(target=close_quietly, args=(instance, self.run_awaitable), daemon=True)
                    closing.start()
                    closing.join(self.settings.call_timeout)
                    self.hung_closes += closing.is_alive()
                    continue
                with self.watch("close", ()):
                    close_quietly(instance, self.run_awaitable)
            for client in self.clients:
                try:
                    if self.binding.is_async:
                        self.run_awaitable(client.aclose())
                    else:
                        client.close()
                except Exception:
                    pass
            if self._loop is not None:
                self._loop.close()
        finally:
            if self.commands is not None:
                self.commands.close()
            for server in self.servers:
                server.stop()
            shutil.rmtree(self.data_dir, ignore_errors=True)
        admin = self.connection.admin
        left = [k for k in self.keys() if admin.pttl(k) == -1][:KEYS_WITHOUT_TTL_PER_SCENARIO]
        self.reset()   # an external --redis database is left as empty as the run found it
        return left
