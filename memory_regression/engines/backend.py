"""A Redis server under test as the runner holds it (:class:`Backend`), and as a worker reaches it.

One :class:`Backend` per engine of the run (:mod:`.engines` opens them; :mod:`.servers` starts the
processes of the private ones). Each worker process reaches its own database on every engine
through an :class:`Endpoint`, handed over as a plain mapping, and opens a :class:`Connection` on
it: the clients its stores are built on, and the suite's own.
"""

from __future__ import annotations

import functools
import inspect
from dataclasses import asdict, dataclass
from typing import Any
from urllib.parse import urlsplit

import redis
from redis.asyncio.connection import AbstractConnection as AsyncConnection
from redis.asyncio.retry import Retry as AsyncRetry
from redis.backoff import NoBackoff
from redis.retry import Retry

from .server_health import ANSWERS, ServerCheck, examine

HEALTH_TIMEOUT_S = 2.0


@dataclass(frozen=True)
class Kind:
    """What a kind of backend is: the one place kinds are told apart, which everything that treats
    them otherwise asks (``endpoint.traits.cluster``), never naming a kind."""

    name: str
    started: bool = False      # the suite started it: its admin user, and the stores' commands it can observe
    cluster: bool = False      # a Redis Cluster: clients follow moved slots, per-server commands go to each node
    in_process: bool = False   # fakeredis: a server in the process, which no URL a store opens reaches
    databases: bool = False    # one database per worker slot, and restarted when a failure held it


# the registered kinds: a private server (of the machine's binary, valkey's, or in a container), a private
# cluster, an external server given by URL, and fakeredis
KINDS = {kind.name: kind for kind in (Kind("server", started=True, databases=True),
                                      Kind("cluster", started=True, cluster=True),
                                      Kind("url"), Kind("fakeredis", in_process=True))}


@dataclass(frozen=True)
class Endpoint:
    """How one worker reaches its database: stores get ``store_url``, the suite uses ``admin_url``."""

    kind: str                 # one of KINDS, by name (what crosses to the workers)
    store_url: str
    admin_url: str
    binary: str | None = None   # the server binary of a private server or cluster (ServerProcess)

    @property
    def traits(self) -> Kind:
        return KINDS[self.kind]

    def to_mapping(self) -> dict[str, str]:
        return asdict(self)


class Connection:
    """A worker's clients on its database (or on its own in-process fakeredis server)."""

    def __init__(self, endpoint: Endpoint):
        self.endpoint = endpoint
        self._fake_server = None
        if endpoint.traits.in_process:
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
        options = {"decode_responses": True, **_driver_info()}
        if self.endpoint.traits.cluster:   # a command that meets a moved slot is sent again, to its node
            if asynchronous:   # redis-py 8.1's asyncio cluster client does not see that a node closed an idle
                # connection before it sends: one retry on a new connection (the lost-reply scenario, which
                # a retry would fail, does not run on a cluster: its proxy cannot sit before the nodes)
                return redis.asyncio.RedisCluster.from_url(url, retry=AsyncRetry(NoBackoff(), 1), **options)
            return redis.RedisCluster.from_url(url, retry=Retry(NoBackoff(), 0), **options)
        if asynchronous:
            return redis.asyncio.Redis.from_url(url, retry=AsyncRetry(NoBackoff(), 0), **options,
                                                **_without_maintenance_notifications())
        return redis.Redis.from_url(url, retry=Retry(NoBackoff(), 0), **options)

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
        if not self.endpoint.traits.cluster:
            return {"": admin}
        return {node.name: admin.get_redis_connection(node) for node in admin.get_primaries()}

    def flush(self) -> None:
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
    reserved: Any = None    # the suite's connection kept for the run (server_health.reserve)

    @property
    def traits(self) -> Kind:
        return KINDS[self.kind]

    def endpoint(self, slot: int) -> Endpoint:
        """The database of worker ``slot`` (0 .. max_workers - 1)."""
        if not self.traits.databases:
            return Endpoint(self.kind, self.url, self.admin_url or self.url, self.binary)
        return Endpoint(self.kind, _with_db(self.url, slot), _with_db(self.admin_url, slot), self.binary)

    def check(self) -> ServerCheck:
        """Whether the server can still be used after a scenario failed, and what held it, undone
        where the suite can (:mod:`.server_health`)."""
        if self.traits.in_process:
            return ANSWERS
        for owned in self._owned:
            gone = owned.problem()
            if gone:
                return ServerCheck(False, gone)
        restart = self._owned[0].restart if self.traits.databases else None
        return examine(self.admin_url or self.url, self.pauses_at_start, restart, reserved=self.reserved)

    def stop(self) -> None:
        if self.reserved is not None:
            self.reserved.close()
        owned, self._owned = self._owned, ()
        for each in owned:
            each.stop()


@functools.cache
def _driver_info() -> dict[str, Any]:
    """What a client reports of its library to the server (CLIENT SETINFO), made once for all of the
    suite's clients: redis-py 8.1 otherwise reads its version from the package's metadata for every
    connection it makes, 1.4 ms each here (a stateful scenario that shrinks a failure builds 800
    store instances, each with a client of its own). Earlier redis-py versions read it once."""
    try:
        from redis.driver_info import DriverInfo
    except ImportError:
        return {}
    return {"driver_info": DriverInfo()}


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


