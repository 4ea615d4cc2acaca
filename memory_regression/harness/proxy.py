"""A TCP proxy on loopback between a store and the Redis server that can lose one reply.

:class:`ReplyDroppingProxy` forwards every byte both ways. Once armed, it lets the next write command
that adds data (:data:`WRITE_COMMANDS`) reach the server and execute, waits for the server's whole
reply to it, drops that reply, and closes the client's connection: the store sees its connection
closed while it waits for the answer, as after a failover or a proxy's restart, although the write
was done. Inside MULTI the write executes at EXEC, so the reply dropped is EXEC's. Replies are
matched to commands in order on each connection, pipelines and transactions included; the proxy
reads enough of RESP2 and RESP3 to know where each command and each reply ends
(:func:`command_end`, :func:`reply_end`).

Standard library only: a thread accepts connections, and each connection gets one thread per
direction. Everything it starts ends when it is closed (``with``), within :data:`JOIN_TIMEOUT_S`.
"""

from __future__ import annotations

import socket
import threading
from collections import deque
from dataclasses import dataclass, field
from urllib.parse import urlsplit

# commands that add data to a key (what a store's append sends), and the scripts and functions that
# may: the proxy drops the reply of the first of them after it is armed. Housekeeping (LTRIM, EXPIRE,
# DEL) and reads are not among them.
WRITE_COMMANDS = frozenset({
    "RPUSH", "LPUSH", "RPUSHX", "LPUSHX", "LINSERT", "LSET", "XADD", "HSET", "HMSET", "HSETNX", "ZADD",
    "ZINCRBY", "SADD", "SET", "SETEX", "PSETEX", "SETNX", "MSET", "MSETNX", "APPEND", "SETRANGE", "INCR",
    "INCRBY", "DECR", "DECRBY", "HINCRBY", "EVAL", "EVALSHA", "FCALL", "JSON.SET", "JSON.MSET",
    "JSON.ARRAPPEND", "JSON.ARRINSERT", "JSON.MERGE", "TS.ADD",
})
RECEIVE_SIZE = 65536
CONNECT_TIMEOUT_S = 2.0
JOIN_TIMEOUT_S = 2.0
ACCEPT_POLL_S = 0.05   # how soon the accepting thread sees the listener closed, where shutdown does not wake it
# RESP types whose header is followed by a payload of the given length, and aggregates of N elements
# (a map or an attribute of N pairs, 2N)
_BLOBS = frozenset(b"$!=")
_AGGREGATES = {ord("*"): 1, ord("~"): 1, ord(">"): 1, ord("%"): 2, ord("|"): 2}
_SIMPLE = frozenset(b"+-:_,#(")


class ProtocolError(Exception):
    """Bytes that are not RESP."""


def _line_end(data: bytes | bytearray, pos: int) -> int | None:
    end = data.find(b"\r\n", pos)
    return None if end < 0 else end


def _length(data: bytes | bytearray, start: int, end: int) -> int:
    try:
        return int(data[start:end])
    except ValueError:
        raise ProtocolError(f"bad length {bytes(data[start:end])[:20]!r}") from None


def reply_end(data: bytes | bytearray, pos: int = 0) -> tuple[int, bool] | None:
    """Where the reply that starts at ``pos`` ends, and whether it is a RESP3 push (out of band, the
    reply to no command); None while it is incomplete. An attribute belongs to the reply it precedes."""
    pending, push = 1, None
    while pending:
        if pos >= len(data):
            return None
        kind = data[pos]
        end = _line_end(data, pos + 1)
        if end is None:
            return None
        if push is None:
            push = kind == ord(">")
        if kind in _SIMPLE:
            pos, pending = end + 2, pending - 1
        elif kind in _BLOBS:
            size = _length(data, pos + 1, end)
            pos = end + 2 + (size + 2 if size >= 0 else 0)
            pending -= 1
        elif kind in _AGGREGATES:
            count = _length(data, pos + 1, end)
            pending += max(count, 0) * _AGGREGATES[kind] - (kind != ord("|"))
            pos = end + 2
        else:
            raise ProtocolError(f"unknown RESP type {chr(kind)!r}")
    return (pos, bool(push)) if pos <= len(data) else None


def command_end(data: bytes | bytearray, pos: int = 0) -> tuple[int, str | None] | None:
    """Where the client's command that starts at ``pos`` ends, and its name (upper case; None for an
    empty inline line, which the server ignores); None while it is incomplete."""
    if pos >= len(data):
        return None
    if data[pos] != ord("*"):   # an inline command, as redis-cli and telnet send them
        end = data.find(b"\n", pos)
        if end < 0:
            return None
        words = bytes(data[pos:end]).split()
        return end + 1, (words[0].decode("utf-8", "replace").upper() if words else None)
    end = _line_end(data, pos + 1)
    if end is None:
        return None
    count, pos, name = _length(data, pos + 1, end), end + 2, None
    for _ in range(max(count, 0)):
        end = _line_end(data, pos)
        if end is None:
            return None
        if data[pos] != ord("$"):
            raise ProtocolError("a command's argument is not a bulk string")
        size = _length(data, pos + 1, end)
        if len(data) < end + 2 + size + 2:
            return None
        if name is None:
            name = bytes(data[end + 2:end + 2 + size]).decode("utf-8", "replace").upper()
        pos = end + 2 + size + 2
    return pos, name


def _received(sock: socket.socket) -> bytes:
    """The next bytes from ``sock``; nothing once it is closed or broken."""
    try:
        return sock.recv(RECEIVE_SIZE)
    except OSError:
        return b""


@dataclass
class _Expected:
    """A reply the client waits for: to which command, and whether it is the one to drop."""

    command: str
    doomed: bool = False


@dataclass
class _Link:
    """One client connection and the proxy's own connection to the server for it."""

    client: socket.socket
    server: socket.socket
    expected: deque = field(default_factory=deque)
    in_multi: bool = False
    queued: list = field(default_factory=list)   # the commands of the open transaction
    doomed_exec: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)

    def close(self) -> None:
        for sock in (self.client, self.server):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()


class ReplyDroppingProxy:
    """A proxy on ``127.0.0.1`` to the server at ``host:port``; ``url_for`` gives a store's URL through it."""

    def __init__(self, host: str, port: int):
        self._target = (host, port)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(ACCEPT_POLL_S)
        self.port = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        self._armed = False
        self._dropped: str | None = None
        self._links: list[_Link] = []
        self._threads: list[threading.Thread] = []
        self._closing = False
        self.error: str | None = None   # why a connection was cut that the proxy meant to keep

    @classmethod
    def to(cls, url: str) -> "ReplyDroppingProxy":
        parts = urlsplit(url)
        return cls(parts.hostname or "127.0.0.1", parts.port or 6379)

    def url_for(self, url: str) -> str:
        """``url`` with its host and port replaced by the proxy's (credentials, database and options kept)."""
        parts = urlsplit(url)
        userinfo = parts.netloc.rpartition("@")[0]
        return parts._replace(netloc=f"{userinfo}@127.0.0.1:{self.port}" if userinfo else
                              f"127.0.0.1:{self.port}").geturl()

    def __enter__(self) -> "ReplyDroppingProxy":
        self._start(self._accept, "accept")
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def connected(self) -> int:
        """How many connections came through the proxy so far."""
        with self._lock:
            return len(self._links)

    def arm(self) -> None:
        """Drop the reply to the next write command, on whichever connection it comes."""
        with self._lock:
            self._armed, self._dropped = True, None

    def disarm(self) -> str | None:
        """Stop waiting for a write; return the command whose reply was dropped since :meth:`arm`
        (``"EXEC (MULTI: RPUSH, LTRIM)"``), or None when no write came."""
        with self._lock:
            self._armed = False
            return self._dropped

    def close(self) -> None:
        with self._lock:
            self._closing = True
            links, threads = list(self._links), list(self._threads)
        try:
            self._listener.shutdown(socket.SHUT_RDWR)   # wakes the accepting thread at once (Linux)
        except OSError:
            pass
        self._listener.close()
        for link in links:
            link.close()
        for thread in threads:
            thread.join(JOIN_TIMEOUT_S)

    def _start(self, target, name: str, *args) -> None:
        thread = threading.Thread(target=target, args=args, name=f"reply-dropping-proxy-{name}", daemon=True)
        self._threads.append(thread)
        thread.start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:   # the listener was closed
                return
            try:
                server = socket.create_connection(self._target, timeout=CONNECT_TIMEOUT_S)
            except OSError:
                client.close()   # the store sees its connection refused, as it would without the proxy
                continue
            for sock in (client, server):
                sock.settimeout(None)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            link = _Link(client, server)
            with self._lock:   # close() sees every link and thread, or none of this one
                if self._closing:
                    link.close()
                    return
                self._links.append(link)
                self._start(self._commands, "commands", link)
                self._start(self._replies, "replies", link)

    def _doom(self, command: str) -> bool:
        """Whether ``command`` is the armed write (which disarms the proxy)."""
        with self._lock:
            if self._armed and command in WRITE_COMMANDS:
                self._armed = False
                return True
            return False

    def _rearm(self) -> None:
        with self._lock:
            self._armed = True

    def _note(self, link: _Link, name: str) -> None:
        """Record the reply the client will wait for after sending command ``name``."""
        if name == "MULTI" and not link.in_multi:
            link.in_multi, link.queued, link.doomed_exec = True, [], False
            link.expected.append(_Expected(name))
        elif link.in_multi and name == "EXEC":
            link.expected.append(_Expected(f"EXEC (MULTI: {', '.join(link.queued)})", link.doomed_exec))
            link.in_multi = False
        elif link.in_multi and name == "DISCARD":
            if link.doomed_exec:
                self._rearm()
            link.expected.append(_Expected(name))
            link.in_multi = False
        elif link.in_multi:
            link.queued.append(name)
            link.doomed_exec = self._doom(name) or link.doomed_exec
            link.expected.append(_Expected(name))
        else:
            link.expected.append(_Expected(name, self._doom(name)))

    def _commands(self, link: _Link) -> None:
        """Client to server: note each complete command before its last byte reaches the server, so
        its reply is always expected before it comes."""
        buffer, pos = bytearray(), 0
        while True:
            data = _received(link.client)
            if not data:
                link.close()
                return
            buffer += data
            try:
                with link.lock:
                    while (found := command_end(buffer, pos)) is not None:
                        pos, name = found
                        if name is not None:
                            self._note(link, name)
            except ProtocolError as exc:
                self._fail(link, f"a store sent what is not a Redis command: {exc}")
                return
            del buffer[:pos]
            pos = 0
            if not self._send(link, link.server, data):
                return

    def _replies(self, link: _Link) -> None:
        """Server to client: forward each complete reply, or drop the doomed one and close."""
        buffer = bytearray()
        while True:
            data = _received(link.server)
            if not data:
                link.close()
                return
            buffer += data
            pos, doomed = 0, None
            try:
                with link.lock:
                    while (found := reply_end(buffer, pos)) is not None:
                        end, push = found
                        if not push:
                            if not link.expected:
                                raise ProtocolError("the server sent a reply to no command")
                            expected = link.expected.popleft()
                            if expected.doomed:
                                doomed = expected.command
                                break
                        pos = end
            except ProtocolError as exc:
                self._fail(link, f"the server sent what the proxy cannot read: {exc}")
                return
            if pos and not self._send(link, link.client, bytes(buffer[:pos])):
                return
            del buffer[:pos]
            if doomed is not None:
                with self._lock:
                    self._dropped = doomed
                link.close()
                return

    def _send(self, link: _Link, sock: socket.socket, data: bytes) -> bool:
        try:   # blocks while the peer reads nothing, until the link or the proxy is closed
            sock.sendall(data)
            return True
        except OSError:
            link.close()
            return False

    def _fail(self, link: _Link, error: str) -> None:
        with self._lock:
            self.error = self.error or error
        link.close()
