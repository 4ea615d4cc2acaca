"""The commands a store sent to the server while a scenario ran, read from ``MONITOR``: evidence.

A diagnosis that names a mechanism ("RPUSH, then LTRIM in a second round trip", "a lost update")
says it only when the store's own commands show it (:mod:`.command_evidence`), and a failure's
details list the commands of the store's last calls. :class:`CommandLog` receives MONITOR on each
server of the scenario's database, in a thread per server that only receives, from the scenario's
start to its end, and when it is read parses the commands of the stores' connections on that
database: those whose user is not the suite's (the servers the suite starts give it a user of its
own), the commands a script ran counted as its caller's. Each call of the store is marked
(:meth:`CommandLog.watch`), so that the commands sent during it are known when it ran alone.

Where the suite cannot tell its own connections from the stores' (a server reached as one user,
fakeredis), there is no log (:func:`command_log` returns None), and diagnoses list the possible
causes instead of naming one. Standard library only for the stream: MONITOR's lines are read from
a socket of the log's own, which :meth:`CommandLog.close` shuts.
"""

from __future__ import annotations

import re
import socket
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Iterator
from urllib.parse import unquote, urlsplit

MAX_BYTES = 16 << 20        # of MONITOR's stream kept per server and scenario; past it only counted
MAX_ARGUMENT = 200          # characters of an argument kept
READ_SIZE = 65536
RECEIVE_EVERY_S = 0.05      # how often the receiving thread takes what MONITOR sent
CONNECT_TIMEOUT_S = 2.0
SYNC_S = 2.0                # how long MONITOR's stream is waited for to catch up with the server
SCRIPT_COMMANDS = frozenset({"EVAL", "EVALSHA", "EVAL_RO", "EVALSHA_RO", "FCALL", "FCALL_RO"})
_LINE = re.compile(r"^\+?(?P<time>\d+\.\d+) \[(?P<db>\d+) (?P<client>[^\]]+)\] (?P<args>.*)$")
_ARGUMENT = re.compile(r'"((?:[^"\\]|\\.)*)"')
_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{2}|.)")
_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "a": "\a", "b": "\b"}


@dataclass(frozen=True)
class Command:
    """One command a store's connection sent (``client``: its address), or a script it called ran
    (``scripted``), at the server's ``time``."""

    time: float
    client: str
    args: tuple[str, ...]
    scripted: bool = False

    @property
    def name(self) -> str:
        return self.args[0].upper() if self.args else ""


@dataclass
class Call:
    """A call of the store the scenario made: its method, session and span (time.time())."""

    member: str
    session: str
    start: float
    end: float = 0.0
    alone: bool = True   # no other call of the store ran meanwhile (in this process)
    raised: str = ""     # the exception it raised, by name

    def text(self) -> str:
        return f"{self.member}({self.session!r})" if self.session else f"{self.member}()"


def _unescape(text: str) -> str:
    return _ESCAPE.sub(lambda m: chr(int(m.group(1)[1:], 16)) if m.group(1)[0] == "x" and len(m.group(1)) == 3
                       else _ESCAPES.get(m.group(1), m.group(1)), text)


def parse(line: str) -> tuple[float, int, str, tuple[str, ...]] | None:
    """A MONITOR line as (time, database, client, arguments); None for what is no command."""
    match = _LINE.match(line)
    if match is None:
        return None
    args = tuple(_unescape(arg)[:MAX_ARGUMENT] for arg in _ARGUMENT.findall(match["args"]))
    return float(match["time"]), int(match["db"]), match["client"], args


class _Monitor:
    """One server's MONITOR stream, kept as it comes (bytes, read in a thread, up to
    :data:`MAX_BYTES`) and parsed when it is read (:meth:`commands`): each command of the database
    ``db`` from a connection that is not the suite's. ``node`` is the suite's client on that server.
    The thread does nothing but receive, so the worker's calls of the store barely share its time."""

    def __init__(self, node: Any, suite_user: str):
        kwargs = node.connection_pool.connection_kwargs
        self._node, self._db, self._suite_user = node, kwargs.get("db", 0), suite_user
        self._stream = bytearray()
        self._parsed = 0               # where the next parse starts in the stream
        self._caller = ""              # the connection whose script runs (the commands it runs come from "lua")
        self._whose: dict[str, str] = {}
        self._lock = threading.Lock()
        self.overflow = 0              # lines past MAX_BYTES, counted only
        self._closed = threading.Event()
        self._sock = socket.create_connection((kwargs.get("host", "127.0.0.1"), kwargs.get("port", 6379)),
                                              timeout=CONNECT_TIMEOUT_S)
        try:
            self._keep(self._start(kwargs.get("username"), kwargs.get("password")))
            self._sock.setblocking(False)   # here: the log may be closed before its thread runs
        except OSError:
            self._sock.close()
            raise
        self._thread = threading.Thread(target=self._receive, name="command-log", daemon=True)
        self._thread.start()

    def _start(self, username: str | None, password: str | None) -> bytes:
        """Authenticate as the suite and start MONITOR; what came after its OK."""
        commands = [("AUTH", *filter(None, (username, password)))] if password else []
        commands.append(("MONITOR",))
        self._sock.sendall(b"".join(_resp(args) for args in commands))
        received = b""
        while received.count(b"\r\n") < len(commands):
            data = self._sock.recv(READ_SIZE)
            if not data:
                raise OSError("the server closed the connection")
            received += data
        *answers, rest = received.split(b"\r\n", len(commands))
        if any(not answer.startswith(b"+OK") for answer in answers):
            raise OSError(f"MONITOR was refused: {answers!r:.200}")
        return rest

    def _receive(self) -> None:
        """Take what came every :data:`RECEIVE_EVERY_S`, not each line as it comes: the thread wakes
        20 times a second, not once per command of the store (the server holds what waits)."""
        while not self._closed.wait(RECEIVE_EVERY_S):
            while True:
                try:
                    data = self._sock.recv(READ_SIZE)
                except BlockingIOError:
                    break
                except OSError:
                    return
                if not data:
                    return
                self._keep(data)

    def _keep(self, data: bytes) -> None:
        with self._lock:
            if len(self._stream) < MAX_BYTES:
                self._stream += data
            else:
                self.overflow += data.count(b"\r\n")

    def commands(self) -> list[Command]:
        """The stores' commands that came since the last call, once the stream has caught up with
        the server (an ECHO of a mark of the suite's, which MONITOR shows after what ran before it)."""
        mark = f"command-log-{id(self)}-{time.monotonic_ns()}".encode()
        try:
            self._node.echo(mark.decode())
            deadline = time.monotonic() + SYNC_S
            # past MAX_BYTES nothing more is kept, the mark neither
            while (not self.overflow and self._stream.find(mark, self._parsed) < 0 and time.monotonic() < deadline
                   and self._thread.is_alive()):
                time.sleep(RECEIVE_EVERY_S / 5)
            self._whose.update((c["addr"], c.get("user", "")) for c in self._node.client_list())
        except Exception:   # noqa: BLE001 (the server went away: what was read is what there is)
            pass
        with self._lock:
            end = max(self._stream.rfind(b"\r\n") + 2, self._parsed)   # whole lines only
            text, self._parsed = bytes(self._stream[self._parsed:end]).decode("utf-8", "replace"), end
        found = []
        for line in text.split("\r\n"):
            command = self._command(line)
            if command is not None:
                found.append(command)
        return found

    def _command(self, line: str) -> Command | None:
        parsed = parse(line)
        if parsed is None:
            return None
        at, db, client, args = parsed
        if db != self._db or not args:
            return None
        scripted = client == "lua"
        if scripted:
            client = self._caller
        elif args[0].upper() in SCRIPT_COMMANDS:
            self._caller = client
        if not client or self._whose.get(client, "") == self._suite_user:   # one gone by now counts as a store's
            return None
        return Command(at, client, args, scripted)

    def close(self) -> None:
        self._closed.set()
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._sock.close()
        self._thread.join(RECEIVE_EVERY_S * 20)


def _resp(args: tuple[str, ...]) -> bytes:
    return (f"*{len(args)}\r\n" + "".join(f"${len(a.encode())}\r\n{a}\r\n" for a in args)).encode()


@dataclass
class CommandLog:
    """The commands the stores sent to one scenario's database, and the calls of the store made."""

    calls: list[Call] = field(default_factory=list)
    _commands: list[Command] = field(default_factory=list)
    _monitors: list[_Monitor] = field(default_factory=list)
    _running: list[Call] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @contextmanager
    def watch(self, member: str, args: tuple) -> Iterator[None]:
        """Mark a call of the store (its method and arguments, the session first) while it runs."""
        call = Call(member, args[0] if args and isinstance(args[0], str) else "", time.time())
        with self._lock:
            for other in self._running:
                other.alone = call.alone = False
            self._running.append(call)
            self.calls.append(call)
        try:
            yield
        except BaseException as exc:
            call.raised = type(exc).__name__
            raise
        finally:
            with self._lock:
                call.end = time.time()
                self._running.remove(call)

    def read(self) -> list[Command]:
        """Every command of the stores so far, in the order the server ran them."""
        for monitor in self._monitors:
            self._commands += monitor.commands()
        if len(self._monitors) > 1:
            self._commands.sort(key=lambda command: command.time)
        return list(self._commands)

    @property
    def overflow(self) -> int:
        """Lines of MONITOR past :data:`MAX_BYTES`, not kept."""
        return sum(monitor.overflow for monitor in self._monitors)

    def close(self) -> None:
        monitors, self._monitors = self._monitors, []
        for monitor in monitors:
            monitor.close()


def command_log(nodes: dict[str, Any], admin_url: str, store_url: str) -> CommandLog | None:
    """A log of the stores' commands on the database the suite's ``nodes`` (redis-py clients, one per
    server) reach, or None where the stores' connections cannot be told from the suite's (they share
    a user) or MONITOR is refused."""
    suite_user, store_user = urlsplit(admin_url).username, urlsplit(store_url).username or "default"
    if not suite_user or unquote(suite_user) == store_user:
        return None
    log = CommandLog()
    try:
        for node in nodes.values():
            log._monitors.append(_Monitor(node, unquote(suite_user)))
    except OSError:
        log.close()
        return None
    return log
