"""The Redis server under test: a private redis-server, an external URL, or fakeredis.

``--redis auto`` (default) starts a private server from a binary on PATH and falls back to
fakeredis only with a warning that every report repeats. ``server`` insists on a real server,
``fakeredis`` chooses the emulation, and a ``redis://`` URL uses an external server, on a
database index that must be empty at the start unless ``--allow-flush``.
"""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

import redis

SERVER_BINARIES = ("redis-server", "valkey-server")
START_TIMEOUT_S = 10.0


class BackendError(Exception):
    """Redis could not be started or reached: exit status 3."""


@dataclass
class Backend:
    kind: str                 # "server" (private), "url" (external) or "fakeredis"
    url: str
    description: str          # names the server and its version
    warning: str | None = None
    _process: subprocess.Popen | None = None
    _workdir: str | None = None
    _fake_server: Any = None
    _admin: Any = field(default=None, repr=False)

    def client(self, asynchronous: bool = False) -> Any:
        """A new client (decode_responses=True) on the server under test."""
        if self._fake_server is not None:
            import fakeredis
            cls = fakeredis.FakeAsyncRedis if asynchronous else fakeredis.FakeRedis
            return cls(server=self._fake_server, decode_responses=True)
        cls = redis.asyncio.Redis if asynchronous else redis.Redis
        return cls.from_url(self.url, decode_responses=True)

    @property
    def admin(self) -> Any:
        """The suite's own client for inspecting keys and TTLs."""
        if self._admin is None:
            self._admin = self.client()
        return self._admin

    def flush(self) -> None:
        self.admin.flushdb()

    def stop(self) -> None:
        if self._admin is not None:
            self._admin.close()
            self._admin = None
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


def start_private_server(binary: str) -> Backend:
    """Start ``binary`` on a free loopback port with no persistence; wait for PONG."""
    workdir = tempfile.mkdtemp(prefix="memory-regression-redis-")
    last_error = None
    for _attempt in range(3):  # a port taken between choosing and binding: choose again
        port = _free_port()
        process = subprocess.Popen(
            [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", workdir, "--daemonize", "no", "--protected-mode", "yes"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True)  # Ctrl-C reaches us, and we stop it by PID
        backend = Backend("server", f"redis://127.0.0.1:{port}/0", "", _process=process,
                          _workdir=workdir)
        atexit.register(backend.stop)
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline and process.poll() is None:
            try:
                backend.description = (f"{_server_version(backend.admin)} "
                                       f"(private server {binary}, port {port}, pid {process.pid})")
                return backend
            except redis.ConnectionError as exc:
                last_error = exc
                backend._admin = None
                time.sleep(0.01)
        output = process.stdout.read().decode(errors="replace") if process.poll() is not None else ""
        backend._workdir = None
        backend.stop()
        last_error = output.strip()[-500:] or last_error
    shutil.rmtree(workdir, ignore_errors=True)
    raise BackendError(f"could not start {binary}: {last_error}")


def fake_backend(warning: str | None) -> Backend:
    import fakeredis
    return Backend("fakeredis", "redis://fakeredis.invalid/0",
                   f"fakeredis {fakeredis.__version__} (in-process emulation, not a real server)",
                   warning=warning, _fake_server=fakeredis.FakeServer())


def connect_url(url: str, allow_flush: bool) -> Backend:
    parsed = urlparse(url)
    if parsed.scheme not in ("redis", "rediss", "unix"):
        raise BackendError(f"--redis {url!r}: expected auto, server, fakeredis or a redis:// URL")
    backend = Backend("url", url, "")
    try:
        client = backend.admin
        client.ping()
        backend.description = f"{_server_version(client)} (external server {parsed.hostname}:{parsed.port})"
        keys = client.dbsize()
    except (redis.RedisError, OSError, ValueError) as exc:
        raise BackendError(f"--redis {url!r}: cannot reach the server: {exc}") from None
    if keys and not allow_flush:
        backend.stop()
        raise EmptyDatabaseRequired(
            f"--redis {url!r}: database {client.connection_pool.connection_kwargs.get('db', 0)} holds "
            f"{keys} keys, and the suite flushes its database between scenarios. Point it at an empty "
            "database index (e.g. redis://host:6379/15) or pass --allow-flush.")
    return backend


class EmptyDatabaseRequired(Exception):
    """An external database holds data and --allow-flush was not given: a usage error."""


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


def install_signal_handlers() -> None:
    """Turn SIGINT and SIGTERM into KeyboardInterrupt, so a stopped run still stops its server and
    writes its reports (SIGINT included where a shell started us with it ignored)."""
    if os.name == "posix":
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, signal.default_int_handler)
