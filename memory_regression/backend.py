"""The Redis server under test: a private redis-server, a private Redis Cluster, an external URL, or
fakeredis.

The runner owns the server (:class:`Backend`): ``--redis auto`` (default) starts a private server
from a binary on PATH and falls back to fakeredis only with a warning that every report repeats;
``server`` insists on a real server, ``cluster`` starts a private cluster of three masters (stores
get ``RedisCluster`` clients), ``fakeredis`` chooses the emulation, and a ``redis://`` URL uses an
external server, on a database index that must be empty at the start unless ``--allow-flush``.
Each worker process reaches its own database through an :class:`Endpoint`, handed over as a plain
mapping, and opens a :class:`Connection` on it.

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
import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import asdict, dataclass, field
from typing import Any
from urllib.parse import urlsplit

import redis
from redis.asyncio.retry import Retry as AsyncRetry
from redis.backoff import NoBackoff

from .redaction import redact_url, url_secrets

SERVER_BINARIES = ("redis-server", "valkey-server")
START_TIMEOUT_S = 10.0
HEALTH_TIMEOUT_S = 2.0
SUITE_USER = "memory-regression-suite"
# what a store may not run on the private server: each would destroy the suite's server or data
FORBIDDEN_COMMANDS = ("flushall", "flushdb", "shutdown", "debug", "config", "swapdb", "save", "bgsave",
                      "bgrewriteaof", "replicaof", "slaveof", "failover", "acl", "module")
# and on a cluster's nodes, what would take the cluster apart (a store's RedisCluster client needs the
# rest of CLUSTER: SLOTS, SHARDS, NODES, to find which node holds which slot)
FORBIDDEN_CLUSTER_COMMANDS = tuple(f"cluster|{name}" for name in (
    "reset", "failover", "forget", "meet", "replicate", "addslots", "addslotsrange", "delslots",
    "delslotsrange", "flushslots", "setslot", "set-config-epoch", "bumpepoch", "saveconfig"))
CLUSTER_MASTERS = 3
CLUSTER_SLOTS = 16384


class BackendError(Exception):
    """Redis could not be started or reached: exit status 3."""


class UnusableDatabase(Exception):
    """An external database the suite may not use as it is (it holds data, or the user may not flush
    it): a usage error."""


@dataclass(frozen=True)
class Endpoint:
    """How one worker reaches its database: stores get ``store_url``, the suite uses ``admin_url``."""

    kind: str                 # "server" (private), "cluster" (private), "url" (external) or "fakeredis"
    store_url: str
    admin_url: str

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
        if self.endpoint.kind == "cluster":   # it retries on a new connection, and finds the slots anew
            cls = redis.asyncio.RedisCluster if asynchronous else redis.RedisCluster
            return cls.from_url(url, decode_responses=True)
        if asynchronous:   # redis-py 8.1's asyncio from_url does not reconnect when the server has closed
            # an idle connection (the sync pool does, before sending): one retry on a new connection
            return redis.asyncio.Redis.from_url(url, decode_responses=True, retry=AsyncRetry(NoBackoff(), 1))
        return redis.Redis.from_url(url, decode_responses=True)

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
    _process: subprocess.Popen | None = None
    _workdir: str | None = None
    _nodes: list["Backend"] = field(default_factory=list)   # a cluster's: each a private server

    def endpoint(self, slot: int) -> Endpoint:
        """The database of worker ``slot`` (0 .. max_workers - 1)."""
        if self.kind != "server":
            return Endpoint(self.kind, self.url, self.admin_url or self.url)
        return Endpoint(self.kind, _with_db(self.url, slot), _with_db(self.admin_url, slot))

    def problem(self) -> str | None:
        """Why the server cannot be used right now, or None when it answers."""
        if self.kind == "fakeredis":
            return None
        for node in self._nodes:
            gone = node.problem()
            if gone:
                return gone
        if self._process is not None and self._process.poll() is not None:
            code = self._process.returncode
            how = f"was killed by {signal.Signals(-code).name}" if code < 0 else f"exited with status {code}"
            return f"the private redis-server (pid {self._process.pid}) {how}"
        try:
            with redis.Redis.from_url(self.admin_url or self.url, socket_timeout=HEALTH_TIMEOUT_S,
                                      socket_connect_timeout=HEALTH_TIMEOUT_S) as client:
                client.ping()
        except (redis.RedisError, OSError) as exc:
            return f"the server does not answer: {exc}"
        return None

    def stop(self) -> None:
        nodes, self._nodes = self._nodes, []
        for node in nodes:
            node.stop()
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if self._workdir:
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._workdir = None


def _with_db(url: str, db: int) -> str:
    parts = urlsplit(url)
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


def find_server_binary() -> str | None:
    for name in SERVER_BINARIES:
        path = shutil.which(name)
        if path:
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
    for command in commands:
        try:
            client.execute_command("ACL", "SETUSER", "default", f"-{command}")
        except redis.ResponseError:
            pass   # a command this server version does not have


def start_private_server(binary: str, config: dict[str, str] | None = None,
                         password: str | None = None) -> Backend:
    """Start ``binary`` on a free loopback port with no persistence and ``config`` (``{"name":
    "value"}``, as redis.conf's directives); wait for PONG. The suite's user gets ``password``, or a
    random one."""
    workdir = tempfile.mkdtemp(prefix="memory-regression-redis-")
    options = [arg for name, value in (config or {}).items() for arg in (f"--{name}", value)]
    last_error: Any = None
    for _attempt in range(3):  # a port taken between choosing and binding: choose again
        port = _free_port()
        process = subprocess.Popen(
            [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             *options, "--dir", workdir, "--daemonize", "no", "--protected-mode", "yes"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True,  # Ctrl-C reaches only the runner, which stops it by PID
            preexec_fn=_parent_death_signal())
        url = f"redis://127.0.0.1:{port}/0"
        backend = Backend("server", url, "", _process=process, _workdir=workdir, max_workers=16)
        atexit.register(backend.stop)
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline and process.poll() is None:
            try:
                with redis.Redis.from_url(url, decode_responses=True) as client:
                    version = _server_version(client)
                    password = password or secrets.token_hex(16)
                    userinfo = _restrict_default_user(client, password)
                backend.admin_url = url.replace("://", f"://{userinfo}@") if userinfo else url
                backend.secrets = (password,)
                backend.description = f"{version} (private server {binary}, port {port}, pid {process.pid})"
                return backend
            except redis.ConnectionError as exc:
                last_error = exc
                time.sleep(0.01)
        output = process.stdout.read().decode(errors="replace") if process.poll() is not None else ""
        backend._workdir = None
        backend.stop()
        last_error = output.strip()[-500:] or last_error
    shutil.rmtree(workdir, ignore_errors=True)
    raise BackendError(f"could not start {binary}: {last_error}")


def start_cluster(binary: str) -> Backend:
    """A Redis Cluster of CLUSTER_MASTERS masters, each a private server of its own (with a cluster
    bus on a free port too) sharing the suite's password, the slots split evenly among them; ready
    once every node says ``cluster_state:ok`` (about 2 s: a node takes no writes in its first 2 s).

    One worker: a cluster has only database 0, which the suite flushes between scenarios, so two
    workers would flush each other's keys mid-scenario."""
    password = secrets.token_hex(16)
    backend = Backend("cluster", "", "", secrets=(password,))
    atexit.register(backend.stop)
    try:
        for _node in range(CLUSTER_MASTERS):
            backend._nodes.append(_start_cluster_node(binary, password))
        clients = [redis.Redis.from_url(node.admin_url, decode_responses=True) for node in backend._nodes]
        try:
            _join(clients)
            for client in clients:
                _forbid_default_user(client, FORBIDDEN_CLUSTER_COMMANDS)
            version = _server_version(clients[0])
        except redis.RedisError as exc:
            raise BackendError(f"could not form a cluster of {binary}: {exc}") from None
        finally:
            for client in clients:
                client.close()
    except BaseException:
        backend.stop()
        raise
    first = backend._nodes[0]
    backend.url, backend.admin_url = first.url, first.admin_url
    ports = ", ".join(str(urlsplit(node.url).port) for node in backend._nodes)
    pids = ", ".join(str(node._process.pid) for node in backend._nodes)
    backend.description = (f"{version} cluster of {CLUSTER_MASTERS} masters (private servers {binary}, "
                           f"ports {ports}, pids {pids})")
    return backend


def _start_cluster_node(binary: str, password: str) -> Backend:
    """One node: a private server with cluster mode on (needs Redis 7 or Valkey, which let the bus
    port be chosen: by default it is the port + 10000, past 65535 for most free ports)."""
    last_error: Exception | None = None
    for _attempt in range(3):   # a bus port taken between choosing and binding: choose again
        config = {"cluster-enabled": "yes", "cluster-port": str(_free_port()),
                  "cluster-config-file": "nodes.conf", "cluster-node-timeout": "2000"}
        try:
            return start_private_server(binary, config, password)
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
    if parsed.scheme not in ("redis", "rediss", "unix"):
        raise BackendError(f"--redis {shown!r}: expected auto, server, cluster, fakeredis or a redis:// URL")
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


def open_backend(choice: str, allow_flush: bool) -> Backend:
    """Resolve ``--redis`` to a running backend."""
    if choice == "fakeredis":
        return fake_backend(None)
    if choice == "cluster":
        binary = find_server_binary()
        if not binary:
            raise BackendError("--redis cluster: no redis-server or valkey-server on PATH "
                               "(install one, e.g. apt-get install redis-server)")
        return start_cluster(binary)
    if choice in ("auto", "server"):
        binary = find_server_binary()
        if binary:
            return start_private_server(binary)
        if choice == "server":
            raise BackendError("--redis server: no redis-server or valkey-server on PATH "
                               "(install one, e.g. apt-get install redis-server)")
        return fake_backend("no redis-server or valkey-server on PATH: this run used fakeredis, an "
                            "in-process emulation that lacks eviction, cluster and some expiry "
                            "behaviour. Install redis-server for a real check.")
    return connect_url(choice, allow_flush)
