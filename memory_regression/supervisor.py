"""Supervising the worker processes that run the user's store.

pytest-xdist runs the scenarios in worker processes and replaces one that dies; this module is the
rest of the supervision, and both ends of the side channel between a worker and the runner:

- a worker tells the runner, over a Unix datagram socket (:class:`WorkerChannel`), its pid, the
  store it bound (or why it could not), and when each scenario starts and ends;
- the runner's :class:`Supervisor` keeps a deadline per worker and, when a scenario outlives the
  scenario timeout, has the worker dump its stack (faulthandler, which works even while C code holds
  the GIL) and kills it, so a hang anywhere, the stateful scenario included, ends at once;
- when a worker dies, :meth:`Supervisor.death` says what happened: its exit status or signal
  (read without reaping it), the scenario it was in, and where the store was busy.

With ``-n 0`` the scenarios run in the runner itself (for ``--pdb``): messages are delivered by a
direct call and nothing is cut off.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import socket
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MESSAGE_LIMIT = 60_000           # bytes of one datagram; longer texts are cut by the sender
DUMP_GRACE_S = 0.3               # time a worker gets to write its stack before it is killed
FINISH_GRACE_S = 1.0             # time a worker gets to exit by itself once the run is over
_TOOL_PATHS = ("/_pytest/", "/pluggy/", "/xdist/", "/execnet/", "/hypothesis/", "<frozen", "\"<string>\"",
               str(Path(__file__).resolve().parent) + os.sep)


class WorkerChannel:
    """A worker's end: sends JSON datagrams to the runner."""

    def __init__(self, address: str, worker: str):
        self.address = address
        self.worker = worker
        self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)

    def send(self, kind: str, **fields: Any) -> None:
        data = json.dumps({"kind": kind, "worker": self.worker, **fields}).encode()
        try:
            self._socket.sendto(data[:MESSAGE_LIMIT], self.address)
        except OSError:
            pass  # the runner is gone; this worker dies with it


class DirectChannel:
    """The in-process end (``-n 0``): hands messages straight to the supervisor."""

    def __init__(self, supervisor: "Supervisor", worker: str = "main"):
        self.supervisor = supervisor
        self.worker = worker

    def send(self, kind: str, **fields: Any) -> None:
        self.supervisor.receive({"kind": kind, "worker": self.worker, **fields})


@dataclass
class WorkerState:
    pid: int
    phase: str = "starting"          # starting (binding the store), idle, scenario, finishing
    nodeid: str | None = None        # the scenario it is in, or the last one it finished
    since: float = field(default_factory=time.monotonic)
    deadline: float | None = None
    cut_off: float | None = None     # seconds the scenario had run when the worker was killed for it


@dataclass
class Death:
    """How a worker process ended, in store terms."""

    worker: str
    phase: str
    nodeid: str | None
    exit_status: int | None
    signal_name: str | None
    cut_off: float | None
    where: str                       # the store's frames at the end, from the worker's dump

    @property
    def during(self) -> str:
        if self.phase == "starting":
            return "while it was being imported and built"
        if self.phase == "scenario":
            return f"during {self.nodeid}"
        if self.nodeid:
            return f"after {self.nodeid} had finished (a thread or timer the store left running?)"
        return "before any scenario started"

    def describe(self, timeout: float) -> str:
        """One line: what happened to the process."""
        if self.cut_off is not None:
            return (f"the store did not return within {timeout:g} s {self.during}: cut off by the scenario "
                    "timeout (a hang, or a blocking call without a timeout)")
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
    """The frames of a faulthandler dump that belong to the store (not to pytest or the suite)."""
    kept: list[str] = []
    for line in dump.splitlines():
        stripped = line.strip()
        if stripped.startswith(("Thread ", "Current thread ")):
            kept.append(stripped.rstrip(":") + ":")
        elif stripped.startswith("File ") and not any(part in stripped for part in _TOOL_PATHS):
            kept.append("  " + stripped)
        elif stripped.startswith("Fatal Python error"):
            kept.append(stripped)
    # drop thread headings with no store frame under them
    shown = [line for i, line in enumerate(kept)
             if line.startswith("  ") or line.startswith("Fatal")
             or (i + 1 < len(kept) and kept[i + 1].startswith("  "))]
    frames = [line for line in shown if line.startswith("  ")]
    if len(frames) > limit:
        last = shown.index(frames[limit])
        shown = shown[:last] + [f"  ... {len(frames) - limit} more frames"]
    return "\n".join(shown)


class Supervisor:
    """The runner's end: worker states, deadlines and deaths."""

    def __init__(self, timeout: float, in_process: bool = False):
        self.timeout = timeout
        self.in_process = in_process
        self.directory = Path(tempfile.mkdtemp(prefix="memory-regression-run-"))
        self.address = str(self.directory / "supervisor.sock")
        self.workers: dict[str, WorkerState] = {}
        self.bound: dict[str, Any] | None = None          # the first store description a worker sent
        self.aborts: list[dict[str, Any]] = []            # workers that could not run the store
        self.scenarios: dict[str, dict[str, Any]] = {}    # nodeid -> what a worker said about it
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
                    data = self._socket.recv(MESSAGE_LIMIT + 1024)
                except OSError:   # nothing more to read (BlockingIOError), or the socket is closed
                    return
                try:
                    self.receive(json.loads(data))
                except (ValueError, KeyError, TypeError):
                    continue

    def receive(self, message: dict[str, Any]) -> None:
        with self._lock:
            worker, kind = message["worker"], message["kind"]
            now = time.monotonic()
            if kind == "hello":
                self.workers[worker] = WorkerState(int(message["pid"]), deadline=now + self.timeout)
                return
            state = self.workers.get(worker)
            if kind == "bound":
                self.bound = self.bound or message["store"]
            elif kind == "abort":
                self.aborts.append(message)
            elif kind == "start":
                self.scenarios.setdefault(message["nodeid"], message["scenario"])
            if state is None:
                return
            if kind in ("bound", "end"):
                state.phase, state.since, state.deadline = "idle", now, None
                if kind == "end":
                    state.nodeid = message["nodeid"]
            elif kind == "start":
                state.phase, state.nodeid, state.since = "scenario", message["nodeid"], now
                state.deadline = now + self.timeout

    # -- deadlines ----------------------------------------------------------------------------------
    def _watch(self) -> None:
        while not self._stopping.is_set():
            with self._lock:
                deadlines = [s.deadline for s in self.workers.values() if s.deadline is not None]
            wait = min([0.5, *[d - time.monotonic() for d in deadlines]])
            if wait > 0:
                select.select([self._socket], [], [], wait)   # a message, or the nearest deadline
            self._enforce()

    def _enforce(self) -> None:
        self.drain()  # a scenario that ended just now is not cut off
        now = time.monotonic()
        with self._lock:
            due = [(worker, state) for worker, state in self.workers.items()
                   if state.deadline is not None and state.deadline <= now]
            for _worker, state in due:
                state.deadline = None
                if state.phase != "finishing":
                    state.cut_off = now - state.since
        for worker, state in due:
            if state.phase != "finishing":
                _signal(state.pid, signal.SIGUSR1)   # faulthandler writes the stack to the worker's dump
                time.sleep(DUMP_GRACE_S)
            _signal(state.pid, signal.SIGKILL)

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
        return Death(worker, state.phase, state.nodeid, status, signal_name, state.cut_off,
                     store_frames(dump))


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
