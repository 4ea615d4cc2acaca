"""What a scenario sees and does on the server under test, as the suite's own user: its keys and
their TTLs (fixture ``keyspace``), and the stores' connections, killed (fixture ``connections``)."""

from __future__ import annotations

from urllib.parse import urlsplit

from .context import ScenarioContext

# a connection's last command (CLIENT LIST's cmd, its first word) until it has run one of its own
HANDSHAKE_COMMANDS = frozenset({"NULL", "hello", "auth", "client", "select"})


class Keyspace:
    """The keys on the scenario's database, which are all the scenario's stores'."""

    def __init__(self, context: ScenarioContext):
        context.on_server()
        self._context = context
        self._admin = context.connection.admin
        self.namespace = context.namespace   # the prefix the stores are given

    def keys(self) -> list[str]:
        return self._context.keys()

    def pttl_ms(self, key: str) -> int:
        return self._admin.pttl(key)

    def set_pttl_ms(self, key: str, milliseconds: int) -> None:
        self._admin.pexpire(key, milliseconds)

    def bytes_used(self) -> dict[str, int]:
        """What each key on the scenario's database takes in the server's memory: ``MEMORY USAGE key
        SAMPLES 0``, every element counted (the default samples 5 of a list's nodes and estimates).
        A key that expired or was deleted meanwhile is left out. Needs a real server."""
        used = {key: self._admin.memory_usage(key, samples=0) for key in self.keys()}
        return {key: size for key, size in used.items() if size is not None}

    def flush(self) -> None:
        """Empty the scenario's database (the stateful scenario does so before each example)."""
        self._context.reset()


class Connections:
    """The stores' connections to the scenario's database."""

    def __init__(self, context: ScenarioContext):
        context.on_server()
        self._context = context

    def kill(self, idle: bool = True) -> int:
        """Close, server-side (CLIENT KILL), every connection of the stores' user on the scenario's
        database (on every node of a cluster), as a server's idle timeout, a proxy or a failover
        does; the suite's own connections are spared. Returns how many were killed. Then a pause
        between requests (:meth:`.ScenarioContext.idle`), unless ``idle`` is False: killed inside a
        call of the store (by a summariser it calls), the store goes on at once."""
        context = self._context
        user = urlsplit(context.connection.url).username or "default"
        killed = 0
        for name, node in context.connection.nodes().items():
            own, db = node.client_id(), node.connection_pool.connection_kwargs.get("db", 0)
            # Redis numbers connections in order: those opened before this scenario began (the runner's
            # health check, another process's) are not its stores'. A connection still in its handshake
            # (no command yet, or only HELLO, AUTH, CLIENT SETINFO, SELECT) shows the default user and
            # database 0 whoever opened it: another worker's, or the runner's, killed there made their
            # next command fail with "Connection closed by server"; a store's connection has run a
            # command by now
            doomed = [client["id"] for client in node.client_list(_type="normal")
                      if int(client["db"]) == db and client.get("user", user) == user and int(client["id"]) != own
                      and int(client["id"]) > context.first_client_ids.get(name, 0)
                      and client.get("cmd", "NULL").split("|")[0] not in HANDSHAKE_COMMANDS]
            killed += sum(node.client_kill_filter(_id=client_id) for client_id in doomed)
        if idle:
            context.idle()
        return killed
