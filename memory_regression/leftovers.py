"""Every process the store starts ends with the run.

The runner makes itself a child subreaper (Linux's ``PR_SET_CHILD_SUBREAPER``): a process a worker
leaves behind (a store's ``sleep 1000``, a grandchild it forked, a daemon that detached itself
with ``setsid``) becomes the runner's child when its parent ends, instead of init's. Once the
workers are gone, :func:`end_leftovers` kills every such child, and its own children as they
reparent in turn, and says what each was running: a finding of the run. No process of the store
then holds the run's output open or writes to it after the run (GitHub's workflow commands resume
only after this).
"""

from __future__ import annotations

import ctypes
import os
import signal
import time
from pathlib import Path

PR_SET_CHILD_SUBREAPER = 36
GRACE_S = 1.0        # an orphan that ends by itself within this is no leftover (a worker's multiprocessing helper)
ENDING_S = 5.0       # the longest the workers are waited for: past a second the supervisor kills them, but a loaded
                     # machine can take seconds more to let them exit (a wait that ends as soon as they have)
ROUNDS = 50          # of killing: a leftover's children reparent to the runner one generation at a time
COMMAND_WIDTH = 200  # characters of a leftover's command line in the finding
# the suite's own helpers, which a worker's multiprocessing starts: ended with the rest, not blamed on the store
SUITE_HELPERS = ("from multiprocessing.resource_tracker import main", "from multiprocessing.forkserver import main")
# the command line of an execnet worker, which a process the store forked from its worker keeps
WORKER_COMMAND = "exec(eval(sys.stdin.readline()))"


def become_subreaper() -> bool:
    """Make this process the reaper of its descendants' orphans; False where the system cannot."""
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def process_stat(pid: int) -> tuple[str, str, int] | None:
    """A process's name, state and parent pid, from /proc; None when it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    name, _, rest = stat.partition("(")[2].rpartition(")")
    fields = rest.split()
    if len(fields) < 2 or not fields[1].isdigit():
        return None   # not the form Linux writes
    return name, fields[0], int(fields[1])


def is_child(pid: int) -> bool:
    """Whether ``pid`` is a living child of this process."""
    stat = process_stat(pid)
    return stat is not None and stat[2] == os.getpid() and stat[1] not in ("Z", "X")


def children() -> dict[int, str]:
    """This process's living children (zombies left out), each with its command line."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or not is_child(int(entry.name)):
            continue
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace").strip()
        except OSError:
            continue
        found[int(entry.name)] = command or f"[{(process_stat(int(entry.name)) or ('?',))[0]}]"
    return found


def end_leftovers(keep: set[int], ending: set[int] = frozenset()) -> list[str]:
    """Kill this process's children other than ``keep`` (after GRACE_S for them to end by
    themselves), and theirs as they reparent here; reap them. ``ending``: children about to exit (the
    workers, told to), waited for first (at most ENDING_S), so that what they leave has reparented
    here. Returns each the store left, as ``sleep 1000 (pid 4242)``."""
    until = time.monotonic() + ENDING_S
    while ending & set(children()) and time.monotonic() < until:
        time.sleep(0.02)
    deadline, seen, killed = time.monotonic() + GRACE_S, {}, set()
    for _round in range(ROUNDS):
        left = {pid: command for pid, command in children().items() if pid not in keep}
        if not left:
            break
        for pid, command in left.items():   # as first seen: a process that is ending shows none
            seen.setdefault(pid, command)
        if time.monotonic() < deadline:
            time.sleep(0.05)
            continue
        for pid in left:
            killed.add(pid)
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        _reap(left)
    return [_named(seen[pid], pid) for pid in sorted(killed)
            if not any(helper in seen[pid] for helper in SUITE_HELPERS)]


def _named(command: str, pid: int) -> str:
    if WORKER_COMMAND in command:
        return f"a process the store forked from its worker, without exec (pid {pid})"
    return f"{command[:COMMAND_WIDTH]} (pid {pid})"


def _reap(pids: dict[int, str], within_s: float = 2.0) -> None:
    deadline = time.monotonic() + within_s
    for pid in pids:
        while True:
            try:
                done, _status = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                break
            if done or time.monotonic() > deadline:
                break
            time.sleep(0.01)
