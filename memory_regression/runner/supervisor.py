"""Supervising the worker processes that run the user's store.

pytest-xdist runs the scenarios in worker processes and replaces one that dies; this module is the
rest of the supervision, and both ends of the side channel between a worker and the runner:

- a worker tells the runner, over a Unix datagram socket (:class:`WorkerChannel`), its pid, the
  store it bound (or why it could not), and when each scenario starts and ends. The socket is in a
  directory only the runner's user may enter (0700, on a short path: never Linux's abstract
  namespace, where anyone could reach it), and the runner reads each datagram's sender from the
  kernel (SCM_CREDENTIALS): it takes messages only from processes of its own user, and a worker's
  pid only from that process itself, a child of the runner, so it never signals another process;
- a worker keeps the call of the store it is in (method, shortened arguments, start) in a page of
  memory the runner reads (:mod:`.call_page`), not in a message: the runner must see a call that
  hangs even when no thread of the worker can run (C code that holds the GIL);
- the runner's :class:`Supervisor` cuts off a worker whose store call outlives the call timeout, or
  whose scenario outlives the scenario timeout (the backstop, for a hang outside the store's calls
  and for a store slow throughout): it has the worker dump its stack (faulthandler, which works
  even while C code holds the GIL) and kills it, so a hang anywhere, the stateful scenario
  included, ends at once;
- when a worker dies, :meth:`Supervisor.death` says what happened: its exit status or signal
  (read without reaping it), the scenario it was in, and where the store was busy.

With ``-n 0`` the scenarios run in the runner itself (for ``--pdb``): messages are delivered by a
direct call and nothing is cut off.
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import signal
import socket
import struct
import sysconfig
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..channel.call_page import Call, call_page_path, read_call
from ..groups import PACKAGE_DIRECTORY
from .leftovers import is_child
from ..reports.results import Status
from ..channel.messages import (MESSAGE_LIMIT, Abort, Bound, End, Hello, ScenarioInfo, Start, StoreDescription,
                                WorkerMessage, decode, encode)

DUMP_GRACE_S = 0.3               # time a worker gets to write its stack before it is killed
FINISH_GRACE_S = 1.0             # time a worker gets to exit by itself once the run is over
POLL_S = 0.5                     # the longest the runner goes without reading the workers' call pages
_TOOL_PATHS = ("/_pytest/", "/pluggy/", "/xdist/", "/execnet/", "/hypothesis/", "<frozen", "\"<string>\"",
               str(PACKAGE_DIRECTORY) + os.sep)

_STANDARD_LIBRARY = os.path.join(sysconfig.get_paths()["stdlib"], "")
_INSTALLED = tuple(os.path.join(sysconfig.get_paths()[name], "") for name in ("purelib", "platlib"))

UNIX_PATH_LIMIT = 107   # bytes of a Unix socket's path (sun_path, less its terminating NUL)
SHORT_BASES = ("/tmp", "/dev/shm")   # where the run's directory goes when TMPDIR makes the socket's path too long
_CREDENTIALS = struct.Struct("3i")   # struct ucred: pid, uid, gid
# the statuses a worker stops the run with: it cannot judge the store, never a verdict on it
ABORTS = frozenset(str(status) for status in (Status.USAGE_ERROR, Status.REDIS_ERROR, Status.SUITE_ERROR))


class WorkerChannel:
    """A worker's end: sends its messages to the runner, as datagrams (:func:`.worker_messages.encode`)."""

    def __init__(self, address: str, worker: str):
        self.address = address
        self.worker = worker
        self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)

    def send(self, message: WorkerMessage) -> None:
        try:
            self._socket.sendto(encode(self.worker, message), self.address)
        except OSError:
            pass  # the runner is gone; this worker dies with it


class DirectChannel:
    """The in-process end (``-n 0``): hands messages straight to the supervisor."""

    def __init__(self, supervisor: "Supervisor", worker: str = "main"):
        self.supervisor = supervisor
        self.worker = worker

    def send(self, message: WorkerMessage) -> None:
        self.supervisor.receive(self.worker, message)


@dataclass(frozen=True)
class Cutoff:
    """Why the runner killed a worker: a store call past the call timeout (``by_call``), or the
    phase (a scenario, or binding the store) past the scenario timeout."""

    timeout: float                   # the timeout that ran out
    by_call: bool
    call: Call | None                # the call cut off; with the scenario timeout, the call in progress, if any
    call_s: float                    # how long that call had run


@dataclass
class WorkerState:
    pid: int
    page: Path                       # its call page
    phase: str = "starting"          # starting (binding the store), idle, scenario, finishing
    nodeid: str | None = None        # the scenario it is in, or the last one it finished
    since: float = field(default_factory=time.monotonic)
    deadline: float | None = None
    cutoff: Cutoff | None = None     # set when the runner killed it for a timeout


@dataclass
class Death:
    """How a worker process ended, in store terms."""

    worker: str
    phase: str
    nodeid: str | None
    exit_status: int | None
    signal_name: str | None
    cutoff: Cutoff | None
    where: str                       # the store's frames at the end, from the worker's dump
    ran_s: float = 0.0               # how long its last phase (the scenario it died in) had run

    @property
    def during(self) -> str:
        if self.phase == "starting":
            return "while it was being imported and built"
        if self.phase == "scenario":
            return f"during {self.nodeid}"
        if self.nodeid:
            return f"after {self.nodeid} had finished (a thread or timer the store left running?)"
        return "before any scenario started"

    def describe(self) -> str:
        """One line: what happened to the process."""
        cutoff = self.cutoff
        if cutoff is not None and cutoff.by_call:
            return (f"the store's {cutoff.call.text} did not return within {cutoff.timeout:g} s {self.during}: "
                    "cut off (a hang, a blocking call without a timeout, or retries that outlast it)")
        if cutoff is not None and self.phase == "starting":
            return (f"the store did not return within {cutoff.timeout:g} s {self.during}: cut off by the "
                    "scenario timeout (a hang, a blocking call without a timeout, or retries that outlast it)")
        if cutoff is not None:
            running = f"; it was in {cutoff.call.text} for {cutoff.call_s:.1f} s" if cutoff.call else ""
            return (f"the scenario did not finish within {cutoff.timeout:g} s {self.during}: cut off by the "
                    "scenario timeout, with no call of the store past the call timeout (many slow calls, or a "
                    f"hang outside them: closing the store, a thread it started){running}")
        if self.signal_name == "SIGKILL":
            how = "the store's process was killed by SIGKILL (the out-of-memory killer, or a kill -9)"
        elif self.signal_name:
            how = f"the store's process was killed by {self.signal_name}"
        elif self.exit_status is not None:
            how = f"the store ended the process with status {self.exit_status}"
        else:
            how = "the store's process ended"
        return f"{how} {self.during}"


def dump_path(directory: Path, worker: str) -> Path:
    """Where a worker's faulthandler writes its stack, for the runner to read after its death."""
    return directory / f"{worker}.dump"


def store_frames(dump: str, limit: int = 8) -> str:
    """The frames of a faulthandler dump that belong to the store (not to pytest or the suite), by thread:
    a thread whose frames left are all the standard library's (a thread of the suite's, waiting on an
    event) is left out, as is one with none left."""
    entries: list[list[str]] = []   # a fatal error's line, or a thread's heading and the frames kept under it
    for line in dump.splitlines():
        stripped = line.strip()
        if stripped.startswith(("Thread ", "Current thread ")):
            entries.append([stripped.rstrip(":") + ":"])
        elif stripped.startswith("File ") and entries and not any(part in stripped for part in _TOOL_PATHS):
            entries[-1].append("  " + stripped)
        elif stripped.startswith("Fatal Python error"):
            entries.append([stripped])
    shown = [line for lines in entries if lines[0].startswith("Fatal") or not all(map(_standard_library, lines[1:]))
             for line in lines]
    frames = [line for line in shown if line.startswith("  ")]
    if len(frames) > limit:
        last = shown.index(frames[limit])
        shown = shown[:last] + [f"  ... {len(frames) - limit} more frames"]
    return "\n".join(shown)


def _standard_library(frame: str) -> bool:
    """Whether a dump's ``File "...", line N in f`` is a frame of Python's standard library."""
    path = frame.strip().removeprefix('File "').split('"', 1)[0]
    return path.startswith(_STANDARD_LIBRARY) and not path.startswith(_INSTALLED)


class Supervisor:
    """The runner's end: worker states, deadlines and deaths."""

    def __init__(self, timeout: float, call_timeout: float, in_process: bool = False):
        self.timeout = timeout
        self.call_timeout = call_timeout
        self.in_process = in_process
        self.directory = run_directory()
        self.address = str(self.directory / "supervisor.sock")
        self.workers: dict[str, WorkerState] = {}
        self.groups: set[int] = set()   # every worker's process group, the one it leads: its pid (leftovers)
        self.bound: StoreDescription | None = None        # the first store description a worker sent
        self.aborts: list[Abort] = []                     # workers that could not run the store
        self.scenarios: dict[str, ScenarioInfo] = {}      # nodeid -> what a worker said about it
        self._lock = threading.RLock()
        self._socket: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()

    # -- the channel --------------------------------------------------------------------------------
    def start(self) -> None:
        if self.in_process:
            return
        self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self._socket.bind(self.address)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)   # each datagram's sender, from the kernel
        self._socket.setblocking(False)
        self._thread = threading.Thread(target=self._watch, name="memory-regression-watchdog", daemon=True)
        self._thread.start()

    def worker_input(self) -> dict[str, str]:
        return {"channel": self.address, "scratch": str(self.directory)}

    def drain(self) -> None:
        """Read every message that has arrived (the workers send them before the events they precede)."""
        if self._socket is None:
            return
        with self._lock:
            while True:
                try:
                    data, ancillary, _flags, _address = self._socket.recvmsg(
                        MESSAGE_LIMIT + 1024, socket.CMSG_SPACE(_CREDENTIALS.size))
                except OSError:   # nothing more to read (BlockingIOError), or the socket is closed
                    return
                sender = _sender(ancillary)
                if sender is None:
                    continue   # another user's process, or no credentials: not the run's
                try:
                    worker, message = decode(data)
                except ValueError:   # JSON's errors are ValueErrors too
                    continue
                self.receive(worker, message, sender)

    def receive(self, worker: str, message: WorkerMessage, sender: int | None = None) -> None:
        """One message of ``worker``, handed to its kind's handler (``worker_<kind>``); ``sender``: the
        pid that sent it, as the kernel says (None when the scenarios run in this process and the
        message comes by a direct call)."""
        with self._lock:
            if isinstance(message, Hello):
                self.worker_hello(worker, message, sender)
                return
            state = self.workers.get(worker)
            if sender is not None and (state is None or state.pid != sender):
                return   # only a worker that said hello speaks for itself, from its own process
            getattr(self, f"worker_{message.kind}")(state, message)

    def worker_hello(self, worker: str, message: Hello, sender: int | None) -> None:
        if sender is not None and (message.pid != sender or not is_child(message.pid)):
            return   # a worker names itself; any other pid is not the runner's to signal
        self.workers[worker] = WorkerState(message.pid, call_page_path(self.directory, worker, message.pid),
                                           deadline=time.monotonic() + self.timeout)
        self.groups.add(message.pid)

    def worker_bound(self, state: WorkerState | None, message: Bound) -> None:
        self.bound = self.bound or message.store
        if state is not None:
            state.phase, state.since, state.deadline = "idle", time.monotonic(), None

    def worker_abort(self, state: WorkerState | None, message: Abort) -> None:
        if message.status in ABORTS:
            self.aborts.append(message)

    def worker_start(self, state: WorkerState | None, message: Start) -> None:
        self.scenarios.setdefault(message.nodeid, message.scenario)
        if state is not None:
            now = time.monotonic()
            state.phase, state.nodeid, state.since, state.deadline = "scenario", message.nodeid, now, now + self.timeout

    def worker_end(self, state: WorkerState | None, message: End) -> None:
        if state is not None:
            state.phase, state.nodeid, state.since, state.deadline = "idle", message.nodeid, time.monotonic(), None

    # -- deadlines ----------------------------------------------------------------------------------
    def _watch(self) -> None:
        while not self._stopping.is_set():
            wait = self._enforce() - time.monotonic()
            if wait > 0:
                select.select([self._socket], [], [], wait)   # a message, or the nearest deadline

    def _enforce(self) -> float:
        """Cut off the workers past a deadline; return when to look again: at the nearest deadline,
        a call's included, and within POLL_S (or the call timeout, if shorter) to see new calls."""
        self.drain()  # a scenario that ended just now is not cut off
        now = time.monotonic()
        due: list[WorkerState] = []
        upcoming = [now + min(POLL_S, self.call_timeout)]
        with self._lock:
            for state in self.workers.values():
                if state.cutoff is not None:
                    continue   # killed already
                call = read_call(state.page) if state.phase != "finishing" else None
                if call is not None and now - call.started >= self.call_timeout:
                    state.cutoff = Cutoff(self.call_timeout, True, call, now - call.started)
                elif state.deadline is not None and state.deadline <= now:
                    if state.phase != "finishing":
                        state.cutoff = Cutoff(self.timeout, False, call, now - call.started if call else 0.0)
                else:
                    if state.deadline is not None:
                        upcoming.append(state.deadline)
                    if call is not None:
                        upcoming.append(call.started + self.call_timeout)
                    continue
                state.deadline = None
                due.append(state)
        for state in due:
            if state.cutoff is not None:
                _signal(state.pid, signal.SIGUSR1)   # faulthandler writes the stack to the worker's dump
                time.sleep(DUMP_GRACE_S)
            _signal(state.pid, signal.SIGKILL)
        return min(upcoming)

    def worker_pids(self) -> set[int]:
        """Every worker's pid: its own children, which xdist and this supervisor end and reap."""
        with self._lock:
            return {state.pid for state in self.workers.values()}

    def finish(self) -> None:
        """The run is over: a worker that has not exited shortly (threads the store left) is killed."""
        deadline = time.monotonic() + FINISH_GRACE_S
        with self._lock:
            for state in self.workers.values():
                state.phase, state.deadline = "finishing", deadline

    def kill_all(self) -> None:
        """Stop every worker now (the run was interrupted or aborted)."""
        with self._lock:
            states = list(self.workers.values())
            for state in states:
                state.phase, state.deadline = "finishing", None
        for state in states:
            _signal(state.pid, signal.SIGKILL)

    def stop(self) -> None:
        self._stopping.set()
        if self._socket is not None:   # wake the watchdog from its wait (up to POLL_S) at once
            with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as waker, contextlib.suppress(OSError):
                waker.sendto(b"", self.address)
        if self._thread is not None:
            self._thread.join(timeout=2)
        if self._socket is not None:
            self._socket.close()
        shutil.rmtree(self.directory, ignore_errors=True)

    # -- deaths -------------------------------------------------------------------------------------
    def death(self, worker: str) -> Death:
        """What became of a worker that went down; its process has ended or is ending."""
        self.drain()
        with self._lock:
            state = self.workers.get(worker)
        if state is None:
            return Death(worker, "starting", None, None, None, None, "")
        status, signal_name = _exit_status(state.pid)
        try:
            dump = dump_path(self.directory, worker).read_text(encoding="utf-8", errors="replace")
        except OSError:
            dump = ""
        return Death(worker, state.phase, state.nodeid, status, signal_name, state.cutoff,
                     store_frames(dump), time.monotonic() - state.since)


def run_directory() -> Path:
    """The run's own directory (mode 0700: the supervisor's socket, the call pages, the dumps),
    under TMPDIR, or under a short base when TMPDIR would make the socket's path too long."""
    directory = Path(tempfile.mkdtemp(prefix="memory-regression-run-"))
    for base in SHORT_BASES:
        if len(os.fsencode(directory / "supervisor.sock")) <= UNIX_PATH_LIMIT:
            break
        directory.rmdir()
        directory = Path(tempfile.mkdtemp(prefix="memory-regression-run-", dir=base))
    return directory


def _sender(ancillary: list[tuple[int, int, bytes]]) -> int | None:
    """The pid of a datagram's sender, from its SCM_CREDENTIALS; None unless it runs as our user."""
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS and len(data) >= _CREDENTIALS.size:
            pid, uid, _gid = _CREDENTIALS.unpack(data[:_CREDENTIALS.size])
            return pid if uid == os.getuid() else None
    return None


def _signal(pid: int, signum: int) -> None:
    if pid == os.getpid():  # scenarios run in this process (-n 0): nothing to cut off
        return
    try:
        os.kill(pid, signum)
    except (ProcessLookupError, PermissionError):
        pass


def _exit_status(pid: int, wait_s: float = 2.0) -> tuple[int | None, str | None]:
    """A child's exit status or killing signal, read without reaping it (execnet reaps it later)."""
    if not hasattr(os, "waitid"):
        return None, None
    deadline = time.monotonic() + wait_s
    while True:
        try:
            result = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT | os.WNOHANG)
        except ChildProcessError:
            return None, None
        if result is not None:
            if result.si_code == os.CLD_EXITED:
                return result.si_status, None
            try:
                return None, signal.Signals(result.si_status).name
            except ValueError:
                return None, f"signal {result.si_status}"
        if time.monotonic() > deadline:
            return None, None
        time.sleep(0.01)
