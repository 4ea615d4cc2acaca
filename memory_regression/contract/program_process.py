"""A store program's process, held to the bounds a Python store has (:mod:`.foreign` speaks the protocol to it).

- It dies with the process that started it, however that ends (SIGKILL included): a parent-death signal,
  armed from a thread that lives as long as that process (Linux sends it when the *thread* that started
  the child ends, and a scenario's writer threads come and go).
- It leads a process group of its own, so that its end takes what it started too (:func:`end`), and the
  runner's leftovers (:mod:`.leftovers`) take the group of one that outlived its worker.
- Its stderr is read as bytes, in lines of at most :data:`LINE_BYTES`, decoded with replacement, by a
  reader that no line can stop; the first :data:`FORWARDED_BYTES` reach the run's stderr, as a Python
  store's output does, the rest is only drained; the last lines are kept for the message when it ends.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from pathlib import Path
from typing import IO, Any, Callable

from ..engines.servers import parent_death_signal

FORWARDED_BYTES = 64 * 1024   # of a program's stderr shown in the run's output, as a Python store's output is capped
LINE_BYTES = 64 * 1024        # a line of stderr longer than this is read in pieces
KEPT_LINES = 40               # of its stderr, kept for the message when it ends
KEPT_WIDTH = 500              # characters of each kept line
CUT_NOTICE = "[memory-regression: the store program's stderr is cut here, at {limit} KB; the rest is discarded]\n"

_launchers: dict[int, queue.Queue] = {}
_launching = threading.Lock()


def start(argv: list[str], cwd: Path) -> subprocess.Popen:
    """Start ``argv`` in ``cwd`` with pipes for stdin, stdout and stderr (bytes), in a process group of its
    own, dying with this process. Raises OSError when it cannot start."""
    done: queue.Queue = queue.Queue()
    _launcher().put((argv, cwd, done))
    started = done.get()
    if isinstance(started, BaseException):
        raise started
    return started


def _launcher() -> queue.Queue:
    """This process's launcher thread (a forked writer process starts its own): it lives as long as the
    process, so the parent-death signal of what it starts fires only when the process ends."""
    with _launching:
        requests = _launchers.get(os.getpid())
        if requests is None:
            requests = _launchers[os.getpid()] = queue.Queue()
            threading.Thread(target=_launch, args=(requests,), name="memory-regression-launcher", daemon=True).start()
    return requests


def _launch(requests: queue.Queue) -> None:
    arm = parent_death_signal()
    while True:
        argv, cwd, done = requests.get()
        try:
            done.put(subprocess.Popen(argv, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, process_group=0, preexec_fn=arm))
        except BaseException as exc:   # OSError, or what preexec_fn raised: the caller's to report
            done.put(exc)


class Stderr:
    """The reader of a program's stderr: the last lines kept, the first FORWARDED_BYTES shown."""

    def __init__(self, stream: IO[bytes], forward: Callable[[str], Any] | None = None):
        self.lines: deque[str] = deque(maxlen=KEPT_LINES)
        self.forwarded = 0   # bytes shown so far; past FORWARDED_BYTES once cut
        self._forward = forward or _to_stderr
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream: IO[bytes]) -> None:
        while True:
            try:
                chunk = stream.readline(LINE_BYTES)
            except (OSError, ValueError):
                return
            if not chunk:
                return
            text = chunk.decode("utf-8", "replace")
            self.lines.append(text.rstrip("\n")[:KEPT_WIDTH])
            try:
                self._show(text)
            except Exception:   # the run's stderr gone or full: the program's stderr is still drained
                pass

    def _show(self, text: str) -> None:
        """Forward ``text`` while the cap allows; where it does not, what fits and one line saying so."""
        if self.forwarded > FORWARDED_BYTES:   # cut, and said so
            return
        data = text.encode("utf-8", "replace")
        if self.forwarded + len(data) > FORWARDED_BYTES:
            fits = data[:FORWARDED_BYTES - self.forwarded].decode("utf-8", "ignore")
            text = (fits + "\n" if fits and not fits.endswith("\n") else fits) + CUT_NOTICE.format(
                limit=FORWARDED_BYTES // 1024)
            self.forwarded = FORWARDED_BYTES + 1
        else:
            self.forwarded += len(data)
        self._forward(text)


def _to_stderr(text: str) -> None:
    sys.stderr.write(text)
    sys.stderr.flush()


def end(process: subprocess.Popen, wait_s: float) -> None:
    """End the program: its stdin closed, as the protocol's end, and ``wait_s`` for it to exit; then its
    process group killed, what it started with it."""
    try:
        if process.stdin is not None:
            process.stdin.close()
    except (OSError, ValueError):
        pass
    kill(process, wait_s)


def kill(process: subprocess.Popen, wait_s: float = 0.0) -> None:
    """Kill the program's process group (it leads it) once it exited or ``wait_s`` passed, and reap it: it is
    reaped only after, so that no other process can have taken its pid as a group's id in between."""
    deadline = time.monotonic() + wait_s
    while process.returncode is None:
        try:
            if os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                break   # exited, not reaped: its pid still names its group
        except ChildProcessError:
            break       # reaped already
        if time.monotonic() >= deadline:
            break
        time.sleep(0.01)
    if process.returncode is None:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    try:
        process.kill()
    except OSError:
        pass
    process.wait()
