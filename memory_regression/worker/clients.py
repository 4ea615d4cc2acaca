"""The redis-py clients a store holds, found among its attributes: where they connect, and whether
one of them is of a version and kind with a defect of its own, so that a failure it causes is named
as the client library's, with its fix, rather than blamed on the store."""

from __future__ import annotations

from typing import Any, Iterable, Iterator

import redis

# redis-py 8.1.0's asyncio client, maintenance notifications on (their default): a pooled connection
# the server closed while it was idle is handed out again, and its next command fails
# (redis/redis-py#4252, fixed after 8.1.0 by #4260); the suite's own clients turn them off
IDLE_CLOSE_VERSIONS = ("8.1.0",)
IDLE_CLOSE_SIGN = "Connection closed by server"


def clients_in(obj: Any, depth: int = 2) -> Iterator[Any]:
    """The redis-py clients among ``obj``'s attributes (and in lists of them), and theirs, ``depth``
    levels down: a client is what has a connection pool (or a cluster's nodes)."""
    if depth < 0 or obj is None:
        return
    if hasattr(obj, "connection_pool") or hasattr(obj, "nodes_manager"):
        yield obj
        return
    try:
        values = list(vars(obj).values())
    except TypeError:   # no __dict__
        return
    for value in values:
        for item in (value if isinstance(value, (list, tuple)) else [value]):
            if not isinstance(item, (str, bytes, int, float, bool, type(None))):
                yield from clients_in(item, depth - 1)


def address(client: Any) -> str:
    """Where ``client`` connects: ``host:port db N``, or ``unix:PATH``."""
    kwargs = getattr(getattr(client, "connection_pool", None), "connection_kwargs", {})
    if "path" in kwargs:
        return f"unix:{kwargs['path']}"
    return f"{kwargs.get('host', '?')}:{kwargs.get('port', '?')} db {kwargs.get('db', 0)}"


def idle_close_defect(instances: Iterable[Any]) -> str | None:
    """What to say when a store's ConnectionError "Connection closed by server" may come from a
    client that has redis-py 8.1.0's asyncio defect: one of the store's own (the suite builds its
    clients with maintenance notifications off); None when no client of the store has it."""
    if redis.__version__ not in IDLE_CLOSE_VERSIONS:
        return None
    for instance in instances:
        for client in clients_in(instance):
            if not isinstance(client, redis.asyncio.Redis):
                continue
            config = client.connection_pool.connection_kwargs.get("maint_notifications_config")
            if config is not None and getattr(config, "enabled", False) is not False:
                return (f"a defect of the store's client library, not of the store: redis-py {redis.__version__}'s "
                        f"asyncio client (the store's own, on {address(client)}) with maintenance notifications on, "
                        "their default, hands out a pooled connection that the server closed while it was idle, "
                        "and its next command fails (redis/redis-py#4252, fixed after 8.1.0): build it with "
                        "maint_notifications_config=MaintNotificationsConfig(enabled=False), take the client the "
                        "suite passes, or upgrade redis-py")
    return None
