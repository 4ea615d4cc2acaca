"""A redis-server of one scenario's own (fixture ``own_server``), for what is server-wide: memory
limits, persistence, restarts."""

from __future__ import annotations

import functools
import re
import subprocess
from typing import Any, Callable

import pytest
import redis

from ..errors import BackendError
from ..engines.servers import ServerProcess



class ScenarioServer:
    """A redis-server of one scenario's own (:func:`own_server`), for what is
    server-wide and so may not touch the run's server, which the other workers share: its memory
    limit and eviction policy, its persistence, a restart. A store is built on it with
    ``stores.new_on(server.url)``; ``admin`` is the suite's client on it (CONFIG SET, INFO), as a
    user whom the stores' restrictions do not bind."""

    def __init__(self, server: ServerProcess, idle: Callable[[], None]):
        self._server = server
        self._idle = idle   # the scenario's pause between requests (:meth:`.ScenarioContext.idle`)
        self._admin: redis.Redis | None = None

    @property
    def url(self) -> str:
        """The stores' URL (database 0)."""
        return self._server.url

    @property
    def description(self) -> str:
        """Which server it is: its version, binary and port (and a cluster of it alone)."""
        alone = ", a cluster of it alone" if self._server.cluster_mode else ""
        return f"{self._server.version} ({self._server.binary}, port {self._server.port}{alone})"

    @property
    def config(self) -> dict[str, str]:
        """The config it was started with (the scenario's, over the private server's)."""
        return dict(self._server.config)

    @property
    def admin(self) -> redis.Redis:
        if self._admin is None:
            self._admin = redis.Redis.from_url(self._server.admin_url, decode_responses=True)
        return self._admin

    def missing(self, keys: list[str]) -> int:
        """How many of ``keys`` are gone: an EXISTS each, in one pipeline (a cluster's node refuses one
        EXISTS over keys of several slots, even when it holds them all)."""
        with self.admin.pipeline(transaction=False) as pipe:
            for key in keys:
                pipe.exists(key)
            return len(keys) - sum(pipe.execute())

    def used_by_the_store(self, after: str) -> None:
        """Skip the scenario when the server's database holds no key ``after`` the store's appends (its
        first turn): built on this server's URL, the store wrote elsewhere (a service it calls, a server
        of its own choosing), so what is done to this server says nothing about it."""
        if not self.admin.info("keyspace").get("db0"):   # INFO, not DBSIZE: a scenario may count the store's DBSIZE
            pytest.skip(f"the store was built on the scenario's own server and holds no key there after {after}: "
                        "it does not keep its history on the server it is given (a service it calls, a server of "
                        "its own choosing), so what this scenario does to that server would say nothing about it")

    def memory_info(self) -> dict[str, Any]:
        """INFO memory (``used_memory``, ``maxmemory``, ...)."""
        return self.admin.info("memory")

    def restart(self, hard: bool = True) -> None:
        """Kill the server (``hard``: SIGKILL, nothing saved on the way out) or shut it down (SIGTERM),
        and start it again on the same port and directory (an append-only file is replayed). The
        stores' connections die with it; they have to reconnect. A server that cannot be started
        again skips the scenario: that is the machine's, not the store's."""
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


@functools.lru_cache(maxsize=None)
def debug_config(binary: str) -> dict[str, str]:
    """What lets the suite run DEBUG (POPULATE) on a server of ``binary``: from Redis 7 (and Valkey)
    on, DEBUG is off unless ``enable-debug-command`` allows it; earlier versions allow it."""
    try:
        version = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    match = re.search(r"v=(\d+)\.", version)
    return {"enable-debug-command": "local"} if match and int(match.group(1)) >= 7 else {}
