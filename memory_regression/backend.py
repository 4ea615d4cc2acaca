"""The Redis server under test: a private redis-server, an external URL, or fakeredis.

The runner owns the server (:class:`Backend`): ``--redis auto`` (default) starts a private server
from a binary on PATH and falls back to fakeredis only with a warning that every report repeats;
``server`` insists on a real server, ``fakeredis`` chooses the emulation, and a ``redis://`` URL
uses an external server, on a database index that must be empty at the start unless
``--allow-flush``. Each worker process reaches its own database through an :class:`Endpoint`,
handed over as a plain mapping, and opens a :class:`Connection` on it.

The private server dies with the runner, even when the runner is killed (a parent-death signal).
Its default user, which stores connect as, may not run the commands that would destroy the suite's
server (FLUSHALL, FLUSHDB, SHUTDOWN, CONFIG, DEBUG, ...): a store that tries gets Redis' NOPERM
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
from dataclasses import asdict, dataclass
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


class BackendError(Exception):
    """Redis could not be started or reached: exit status 3."""


class UnusableDatabase(Exception):
    """An external database the suite may not use as it is (it holds data, or the user may not flush
    it): a usage error."""


@dataclass(frozen=True)
class Endpoint:
    """How one worker reaches its database: stores get ``store_url``, the suite uses ``admin_url``."""

    kind: str                 # "server" (private), "url" (external) or "fakeredis"
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
        if asynchronous:   # redis-py 8.1's asyncio from_url does not reconnect when the server has closed
            # an idle connection (the sync pool does, before sending): one retry on a new connection
            return redis.asyncio.Redis.from_url(url, decode_responses=True, retry=AsyncRetry(NoBackoff(), 1))
        return redis.Redis.from_url(url, decode_responses=True)

    @property
    def admin(self) -> Any:
        """The suite's own client, for flushing and inspecting keys and TTLs."""
        if self._admin is None:
            self._admin = self._client(self.endpoint.admin_url)
        return self._admin

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
    _server: "ServerProcess | None" = None

    def endpoint(self, slot: int) -> Endpoint:
        """The database of worker ``slot`` (0 .. max_workers - 1)."""
        if self.kind != "server":
            return Endpoint(self.kind, self.url, self.admin_url or self.url)
        return Endpoint(self.kind, _with_db(self.url, slot), _with_db(self.admin_url, slot))

    def problem(self) -> str | None:
        """Why the server cannot be used right now, or None when it answers."""
        if self.kind == "fakeredis":
            return None
        gone = self._server.problem() if self._server is not None else None
        if gone:
            return gone
        try:
            with redis.Redis.from_url(self.admin_url or self.url, socket_timeout=HEALTH_TIMEOUT_S,
                                      socket_connect_timeout=HEALTH_TIMEOUT_S) as client:
                client.ping()
        except (redis.RedisError, OSError) as exc:
            return f"the server does not answer: {exc}"
        return None

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.stop()


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
    for command in FORBIDDEN_COMMANDS:
        try:
            client.execute_command("ACL", "SETUSER", "default", f"-{command}")
        except redis.ResponseError:
            pass   # a command this server version does not have
    return f"{SUITE_USER}:{password}"


# the private server's persistence: none (the suite's data is thrown away at the end of the run)
NO_PERSISTENCE = {"save": "", "appendonly": "no"}


class ServerProcess:
    """A redis-server (or valkey-server) this process started on a free loopback port, in a directory
    of its own, with the config it was given over :data:`NO_PERSISTENCE` (``{"appendonly": "yes"}``).
    It dies with the process that started it (a parent-death signal), is stopped by PID, and can be
    restarted on the same port and directory, so that an append-only file is replayed. Stores
    connect as its default user, which may not run :data:`FORBIDDEN_COMMANDS`; the suite uses
    :data:`SUITE_USER` (``admin_url``), whose password is never printed."""

    def __init__(self, binary: str, workdir: str, config: dict[str, str]):
        self.binary = binary
        self.workdir = workdir
        self.config = config
        self.port = 0
        self.process: subprocess.Popen | None = None
        self.password = secrets.token_hex(16)
        self.version = ""
        self._userinfo: str | None = None

    @classmethod
    def start(cls, binary: str, config: dict[str, str] | None = None, parent: str | None = None) -> "ServerProcess":
        """Start ``binary`` in a new directory (under ``parent``) and wait for PONG; a port taken
        between choosing and binding is chosen again."""
        server = cls(binary, tempfile.mkdtemp(prefix="memory-regression-redis-", dir=parent),
                     {**NO_PERSISTENCE, **(config or {})})
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
        return self.url.replace("://", f"://{self._userinfo}@") if self._userinfo else self.url

    def _launch(self, port: int) -> None:
        self.port = port
        options = [arg for name, value in self.config.items() for arg in (f"--{name}", value)]
        self.process = subprocess.Popen(
            [self.binary, "--port", str(port), "--bind", "127.0.0.1", *options, "--dir", self.workdir,
             "--daemonize", "no", "--protected-mode", "yes"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True,  # Ctrl-C reaches only the runner, which stops it by PID
            preexec_fn=_parent_death_signal())
        last_error: Any = None
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline and self.process.poll() is None:
            try:   # a server still loading its append-only file answers LOADING, a ConnectionError too
                with redis.Redis.from_url(self.url, decode_responses=True) as client:
                    self.version = _server_version(client)
                    self._userinfo = _restrict_default_user(client, self.password)
                return
            except redis.ConnectionError as exc:
                last_error = exc
                time.sleep(0.01)
        output = self.process.stdout.read().decode(errors="replace") if self.process.poll() is not None else ""
        self._halt(hard=True)
        raise BackendError(f"could not start {self.binary}: {output.strip()[-500:] or last_error}")

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
                   secrets=(server.password,), _server=server)


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
        raise BackendError(f"--redis {shown!r}: expected auto, server, fakeredis or a redis:// URL")
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
