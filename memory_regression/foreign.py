"""Stores in another language: a program that speaks the store protocol (docs/protocol.md),
newline-delimited JSON over its stdin and stdout, stands for the store.

``--store path/to/memory.mjs:ChatMemory`` (``.mjs``, ``.js``, ``.cjs``, ``.ts``, ``.mts``, ``.cts``) runs
the Node.js driver that ships with the suite (``drivers/node/driver.mjs``) on that module's export;
``--store 'cmd:PROGRAM ARGS...'`` runs any program that speaks the protocol. Each process of the run
(a worker, each writer process of the concurrency scenarios) starts a program of its own, as a replica
of the application would, on first use.

The program says first what the store is: its factory's parameters and, for each instance it builds,
its methods, each with its parameters' names. :func:`load_foreign` turns that into a Python factory
whose signature and instances' methods carry the same names in the contract's spelling (``maxMessages``
is ``max_messages``), so that :mod:`.binding` binds it by the same rules as a Python store, and every
call goes over the protocol. What cannot cross to another process (a Redis client, a callable) is not
offered: a store takes ``redis_url`` (``redisUrl``) and builds its own client.
"""

from __future__ import annotations

import atexit
import inspect
import itertools
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
from collections import deque
from pathlib import Path
from typing import Any, Callable

from .contract import UsageError, contract_parameter

PROTOCOL = "memory-regression-store/1"
COMMAND_PREFIX = "cmd:"
NODE_PREFIX = "node:"       # a Node.js package's export, resolved from the working directory
NODE_SUFFIXES = (".mjs", ".js", ".cjs", ".ts", ".mts", ".cts")
NODE_DRIVER = Path(__file__).resolve().parent / "drivers" / "node" / "driver.mjs"
HELLO_TIMEOUT_S = 30        # the program's first line, its start and the store module's import: at most
                            # this, and half the scenario timeout, which also bounds a Python store's import
CLOSE_WAIT_S = 2            # for the program to end once its stdin is closed
# contract parameters whose values live in this process only (a client, callables, an object)
NOT_CARRIED = {"redis": "take redis_url (redisUrl) and build the client in the store",
               "count_tokens": "the token window is not carried over the protocol yet",
               "summarize": "compaction is not carried over the protocol yet",
               "profile": "take max_tokens (maxTokens)"}
STDERR_KEPT = 40            # lines of the program's stderr kept for the message when it exits


class StoreProcessError(RuntimeError):
    """The store's program raised, exited or broke the protocol during a call: a finding about the store.
    Its frames are the program's, in its notes: the Python frames that carried the call are the
    harness's (:func:`.frames.without_harness_frames`)."""

    __module__ = "store"
    frames_in_notes = True


def is_foreign(spec: str) -> bool:
    """A command, a Node.js package's export (``node:@langchain/redis:NAME``), or a path to a Node.js
    module (``memory.mjs``; ``app/memory.js``: a dotted ``package.js`` without a slash is a Python
    module named js, unless such a file is there)."""
    module = spec.rpartition(":")[0]
    return spec.startswith((COMMAND_PREFIX, NODE_PREFIX)) or module.endswith(NODE_SUFFIXES) and (
        any(mark in module for mark in "/\\") or module.endswith((".mjs", ".cjs", ".mts", ".cts"))
        or os.path.isfile(module))


def command_of(spec: str, workdir: Path) -> list[str]:
    """The program a foreign spec runs, or a usage error saying what to fix."""
    if spec.startswith(COMMAND_PREFIX):
        try:
            argv = shlex.split(spec[len(COMMAND_PREFIX):])
        except ValueError as exc:
            raise UsageError(f"--store {spec!r}: the command cannot be read ({exc})") from None
        if not argv:
            raise UsageError(f"--store {spec!r}: no command after {COMMAND_PREFIX!r}")
    else:
        module, _, name = spec.removeprefix(NODE_PREFIX).rpartition(":")
        if not module or not name:
            raise UsageError(f"--store {spec!r} is not of the form {NODE_PREFIX}PACKAGE:NAME")
        is_package = spec.startswith(NODE_PREFIX) and not module.endswith(NODE_SUFFIXES)
        if not is_package and not (workdir / module).is_file():
            raise UsageError(f"--store {spec!r}: no file {module} under the working directory {workdir}")
        argv = ["node", str(NODE_DRIVER), module if is_package else str((workdir / module).resolve()), name]
    if shutil.which(argv[0]) is None and not (workdir / argv[0]).is_file():
        raise UsageError(f"--store {spec!r}: {argv[0]!r} is not installed or not on PATH"
                         + (" (a Node.js store needs Node.js 18 or later: apt-get install nodejs)"
                            if argv[0] == "node" else ""))
    return argv


def snake(name: str) -> str:
    """``maxMessages`` as the contract spells it: ``max_messages`` (``redisURL``: ``redis_url``)."""
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)).lower()


class Channel:
    """One running program of the store, its requests answered by id: calls from several threads
    wait each on its own answer."""

    def __init__(self, spec: str, argv: list[str], workdir: Path):
        self.spec, self.argv = spec, argv
        try:
            self.process = subprocess.Popen(argv, cwd=workdir, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                            stderr=subprocess.PIPE, text=True, encoding="utf-8", bufsize=1)
        except OSError as exc:
            raise UsageError(f"--store {spec!r}: {shlex.join(argv)} cannot be started: {exc.strerror or exc}") from None
        self.stderr: deque[str] = deque(maxlen=STDERR_KEPT)
        self.lock = threading.Lock()
        self.ids = itertools.count(1)
        self.waiting: dict[int, list] = {}       # id -> [event, answer]
        self.ended: str | None = None            # why no more answers come
        self.stderr_end = ""                     # ... and the end of the program's stderr then
        self.hello: dict[str, Any] | None = None
        self.greeted = threading.Event()
        threading.Thread(target=self._read_stderr, daemon=True).start()
        threading.Thread(target=self._read, daemon=True).start()

    def _read_stderr(self) -> None:
        for line in self.process.stderr:
            self.stderr.append(line.rstrip("\n"))
            print(line, end="", file=sys.stderr, flush=True)

    def _read(self) -> None:
        for line in self.process.stdout:
            try:
                message = json.loads(line)
            except ValueError:
                message = None
            if self.hello is None:
                if not isinstance(message, dict) or message.get("protocol") != PROTOCOL:
                    self._end(f"its first line is not the protocol's greeting ({PROTOCOL}): {line.strip()[:300]!r}")
                    return
                self.hello = message
                self.greeted.set()
                continue
            waiter = self.waiting.pop(message.get("id"), None) if isinstance(message, dict) else None
            if waiter is None:
                self._end(f"it wrote a line that answers no request: {line.strip()[:300]!r}")
                return
            waiter[1] = message
            waiter[0].set()
        self.process.wait()
        self._end(f"it exited with status {self.process.returncode}")

    def _end(self, why: str) -> None:
        tail = "\n".join(f"  {line}" for line in self.stderr)
        self.ended = f"the store's program ({shlex.join(self.argv)}): {why}"
        self.stderr_end = f"its stderr ended:\n{tail}" if tail else ""
        self.greeted.set()
        for event, _answer in list(self.waiting.values()):
            event.set()
        if self.process.poll() is None:
            self.process.kill()

    def greeting(self, timeout: float) -> dict[str, Any]:
        if not self.greeted.wait(timeout):
            self._end(f"it said nothing within {timeout:g} s of starting")
        if self.hello is None:
            raise UsageError(f"--store {self.spec!r}: {self.ended}"
                             + (f"; {self.stderr_end}" if self.stderr_end else ""))
        return self.hello

    def gone(self) -> StoreProcessError:
        """The error of a call that no answer will come to, the end of the program's stderr beneath it."""
        error = StoreProcessError(self.ended)
        if self.stderr_end:
            error.add_note(self.stderr_end)
        return error

    def close(self) -> None:
        """End the program: its stdin closed, as the protocol's end; killed if it lingers."""
        try:
            self.process.stdin.close()
            self.process.wait(CLOSE_WAIT_S)
        except (OSError, ValueError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()

    def request(self, op: str, **fields: Any) -> Any:
        waiter: list = [threading.Event(), None]
        with self.lock:
            if self.ended:
                raise self.gone()
            number = next(self.ids)
            self.waiting[number] = waiter
            try:
                self.process.stdin.write(json.dumps({"id": number, "op": op, **fields}) + "\n")
                self.process.stdin.flush()
            except (OSError, ValueError):
                pass   # the reader says why it ended
        waiter[0].wait()
        answer = waiter[1]
        if answer is None:
            raise self.gone()
        if "error" in answer:
            raise raised(answer["error"])
        return answer.get("result")


_ERRORS: dict[str, type[StoreProcessError]] = {}


def raised(error: Any) -> StoreProcessError:
    """What the store's program raised, as an exception of the same name (``ReplyError: EXECABORT ...``)
    whose text is the program's own, its stack included."""
    error = error if isinstance(error, dict) else {"message": str(error)}
    name = str(error.get("name") or "Error")
    name = name if name.isidentifier() else "Error"
    message, stack = str(error.get("message", "")), str(error.get("stack") or "")
    frames = (stack.removeprefix(f"{name}: {message}") if stack.startswith(f"{name}: ") else f"\n{stack}").strip("\n")
    if name not in _ERRORS:
        _ERRORS[name] = type(name, (StoreProcessError,), {"__module__": "store"})
    found = _ERRORS[name](message)
    if frames:   # shown under the error in the reports' details, as a Python store's traceback is
        found.add_note(frames)
    return found


_channels: dict[tuple[int, str], Channel] = {}


def channel(spec: str, workdir: Path) -> Channel:
    """This process's program of the store (a forked writer process starts its own)."""
    key = (os.getpid(), spec)
    if key not in _channels or _channels[key].ended:
        _channels[key] = Channel(spec, command_of(spec, workdir), workdir)
    return _channels[key]


@atexit.register
def close_all() -> None:
    """End this process's programs, so that none outlives the run (a forked writer's end closes
    their stdin, which ends them too)."""
    for (pid, spec), link in list(_channels.items()):
        if pid == os.getpid():
            del _channels[(pid, spec)]
            link.close()


def _signature(names: list[str], optional: set[str], self_first: bool = False) -> inspect.Signature:
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)] if self_first else []
    params += [inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                 default=None if name in optional else inspect.Parameter.empty) for name in names]
    return inspect.Signature(params)


class ForeignStore:
    """One instance the program built; its methods are the instance's, by the contract's names."""

    def __init__(self, link: Channel, built: dict[str, Any]):
        self._link, self._instance = link, built["instance"]
        for method in built.get("methods", []):
            name = snake(method["name"])
            if name != "close":
                setattr(self, name, self._method(method["name"], [snake(p) for p in method.get("parameters", [])]))

    def _method(self, own: str, parameters: list[str]) -> Callable[..., Any]:
        def call(*args: Any) -> Any:
            return self._link.request("call", instance=self._instance, method=own, args=list(args))
        call.__name__ = snake(own)
        call.__signature__ = _signature(parameters, set())   # type: ignore[attr-defined]
        return call

    def close(self) -> None:
        """Let the program forget the instance (and close it, if the store has close, quit or disconnect)."""
        if not self._link.ended:
            self._link.request("close", instance=self._instance)


def load_foreign(spec: str, workdir: Path, timeout: float) -> tuple[Callable[..., ForeignStore], Path | None]:
    """The factory that stands for the store: its signature the store's parameters the protocol can
    carry, in the contract's spelling; each call builds an instance in the program. ``timeout``: how
    long the program may take to say what the store is."""
    try:
        return _factory(spec, workdir, channel(spec, workdir).greeting(min(HELLO_TIMEOUT_S, timeout)))
    except UsageError:
        close_all()
        raise


def _factory(spec: str, workdir: Path, hello: dict[str, Any]) -> tuple[Callable[..., ForeignStore], Path | None]:
    if "error" in hello:   # the program could not load the store
        error = hello["error"] if isinstance(hello["error"], dict) else {"message": str(hello["error"])}
        raise UsageError(f"--store {spec!r}: loading it failed:\n{error.get('stack') or error.get('message')}")
    factory = hello.get("factory") or {}
    own: dict[str, str] = {}          # the contract's spelling -> the store's
    optional: set[str] = set()
    for parameter in factory.get("parameters", []):
        name = snake(parameter["name"])
        canonical = contract_parameter(name)
        if canonical in NOT_CARRIED:
            if not parameter.get("optional"):
                raise UsageError(f"--store {spec!r} requires {parameter['name']!r}, which would be the contract's "
                                 f"{canonical!r}: it cannot cross to the store's process ({NOT_CARRIED[canonical]})")
            continue
        own[name] = parameter["name"]
        if parameter.get("optional"):
            optional.add(name)

    def build(**values: Any) -> ForeignStore:
        link = channel(spec, workdir)
        return ForeignStore(link, link.request("build", args={own[name]: value for name, value in values.items()}))

    build.__name__ = str(hello.get("store") or "store")
    build.__signature__ = _signature(list(own), optional)   # type: ignore[attr-defined]
    build.defined_at_line = hello.get("line")   # type: ignore[attr-defined]  (worker.definition_line)
    source = hello.get("source")
    return build, Path(source) if source else None
