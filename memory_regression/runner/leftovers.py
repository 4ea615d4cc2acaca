"""Every process the store starts ends with the run.

The runner makes itself a child subreaper (Linux's ``PR_SET_CHILD_SUBREAPER``): a process a worker
leaves behind (a store's ``sleep 1000``, a grandchild it forked, a daemon that detached itself
with ``setsid``) becomes the runner's child when its parent ends, instead of init's. Once the
workers are gone, :func:`end_leftovers` kills every such child, and its own children as they
reparent in turn, and says what each was running: a finding of the run. No process of the store
then holds the run's output open or writes to it after the run (GitHub's workflow commands resume
only after this).

Each worker leads a process group of its own, which what the store forks inherits. A chain of forks
(each generation forks its successor and exits at once) lives too briefly in any one process to be
found and killed by its pid: the group of each worker that has ended is killed as one, round after
round, until nothing is left in it.
"""

from __future__ import annotations

import ctypes
import os
import signal
import time
from pathlib import Path
from typing import Iterator

PR_SET_CHILD_SUBREAPER = 36
GRACE_S = 1.0        # an orphan that ends by itself within this is no leftover (a worker's multiprocessing helper)
ENDING_S = 5.0       # the longest the workers are waited for: past a second the supervisor kills them, but a loaded
                     # machine can take seconds more to let them exit (a wait that ends as soon as they have)
ROUNDS = 50          # of killing: a leftover's children reparent to the runner one generation at a time
COMMAND_WIDTH = 200  # characters of a leftover's command line in the finding
# the suite's own helpers, which a worker's multiprocessing starts: ended with the rest, not blamed on the store
SUITE_HELPERS = ("from multiprocessing.resource_tracker import main", "from multiprocessing.forkserver import main")
# the processes multiprocessing's forkserver start method leaves a worker (the concurrency scenarios' writer
# processes): its forkserver and resource tracker, which end with the worker, orphans of its group reaped here
MULTIPROCESSING_HELPERS = 2
# the command line of an execnet worker, which a process the store forked from its worker keeps
WORKER_COMMAND = "exec(eval(sys.stdin.readline()))"


def become_subreaper() -> bool:
    """Make this process the reaper of its descendants' orphans; False where the system cannot."""
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def process_stat(pid: int) -> tuple[str, str, int, int] | None:
    """A process's name, state, parent pid and process group, from /proc; None when it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    name, _, rest = stat.partition("(")[2].rpartition(")")
    fields = rest.split()
    if len(fields) < 3 or not fields[1].isdigit() or not fields[2].isdigit():
        return None   # not the form Linux writes
    return name, fields[0], int(fields[1]), int(fields[2])


def is_child(pid: int) -> bool:
    """Whether ``pid`` is a living child of this process."""
    stat = process_stat(pid)
    return stat is not None and stat[2] == os.getpid() and stat[1] not in ("Z", "X")


def children() -> dict[int, str]:
    """This process's living children (zombies left out), each with its command line."""
    return {pid: command for pid, (command, _group) in _processes(frozenset()).items()}


def _processes(groups: set[int]) -> dict[int, tuple[str, int]]:
    """This process's living children and the living members of process groups ``groups``, each with its
    command line and its group."""
    found = {}
    for pid, stat in _stats():
        if stat[1] in ("Z", "X") or not (stat[2] == os.getpid() or stat[3] in groups):
            continue
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
        except OSError:
            continue
        found[pid] = (command.strip() or f"[{stat[0]}]", stat[3])
    return found


def _stats() -> Iterator[tuple[int, tuple[str, str, int, int]]]:
    """Every process there is, with :func:`process_stat`'s reading of it."""
    for entry in Path("/proc").iterdir():
        stat = process_stat(int(entry.name)) if entry.name.isdigit() else None
        if stat is not None:
            yield int(entry.name), stat


def _emptied(group: int, keep: set[int]) -> set[int]:
    """Kill what is left in process group ``group`` (a worker's, once the worker has ended) and reap it; the
    pids reaped. A group is killed as one, so no generation of a chain of forks outlives it: once killed,
    nothing in it forks again, and a look through /proc then sees all that is left. ``keep`` (the worker,
    which leads the group and is xdist's to reap) is left alone."""
    try:
        os.killpg(group, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        return set()
    reaped: set[int] = set()
    deadline = time.monotonic() + GRACE_S
    while True:
        living = False
        for pid, stat in _stats():
            if stat[3] != group or pid in keep:
                continue
            if stat[1] != "Z":
                living = True
            elif stat[2] == os.getpid():   # an orphan of the group's, reparented here
                try:
                    if os.waitpid(pid, os.WNOHANG)[0]:
                        reaped.add(pid)
                except ChildProcessError:
                    pass
        if not living or time.monotonic() > deadline:
            return reaped
        time.sleep(0.01)


def end_leftovers(keep: set[int], ending: set[int] = frozenset(), groups: set[int] = frozenset()) -> list[str]:
    """Kill this process's children other than ``keep`` (after GRACE_S for them to end by
    themselves), and theirs as they reparent here, and every process left in ``groups`` (the workers'
    process groups) once their leader has ended; reap them. ``ending``: children about to exit (the
    workers, told to), waited for first (at most ENDING_S), so that what they leave has reparented
    here. Returns each the store left, as ``sleep 1000 (pid 4242)``, those of one command once."""
    until = time.monotonic() + ENDING_S
    while ending & set(children()) and time.monotonic() < until:
        time.sleep(0.02)
    deadline, seen, killed, emptied = time.monotonic() + GRACE_S, {}, set(), {}
    for _round in range(ROUNDS):
        found = _processes(set(groups))
        left = {pid: found[pid] for pid in found if pid not in keep}
        for pid, command in left.items():   # as first seen: a process that is ending shows none
            seen.setdefault(pid, command)
        if left and time.monotonic() < deadline:
            time.sleep(0.05)
            continue
        for group in groups - set(found):   # each group whose leader, the worker, has ended
            emptied.setdefault(group, set()).update(_emptied(group, keep))
        if not left:
            break
        for pid, (_command, group) in left.items():
            killed.add(pid)
            try:   # one that leads a group of its own (a store program) goes with what it started
                os.killpg(pid, signal.SIGKILL) if group == pid else os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        _reap(left)
    # named by its command line; one in a worker's group seen with none was ending as it was seen, a generation of a
    # chain as likely as not: its group says it
    named = [pid for pid in sorted(killed) if not any(helper in seen[pid][0] for helper in SUITE_HELPERS)
             and not (seen[pid][0].startswith("[") and seen[pid][1] in groups)]
    # a group that held processes of the store's with none of them seen: each lived less than a look through /proc.
    # More orphans than a worker's multiprocessing helpers, which end with it and are not always seen alive (a chain
    # of forks leaves hundreds: 319 to 404 in three runs of tests.stores.hostile:ForksAChain)
    helpers = {pid for pid, (command, _group) in seen.items() if any(helper in command for helper in SUITE_HELPERS)}
    unnamed = sorted(group for group, reaped in emptied.items() if len(reaped - helpers) > MULTIPROCESSING_HELPERS
                     and group not in {seen[pid][1] for pid in named})
    return _told([(seen[pid][0], pid) for pid in named]) + [
        f"processes in the process group of a worker (pgid {group}) that each lived too briefly to be named, as the "
        "generations of a chain of forks do" for group in unnamed]


def _told(named: list[tuple[str, int]]) -> list[str]:
    """Each command once: with its first pid, and how many more processes ran it."""
    pids: dict[str, list[int]] = {}
    for command, pid in named:
        pids.setdefault(_named(command, pid).rpartition(" (pid ")[0], []).append(pid)
    return [f"{command} (pid {found[0]})" + (f", and {len(found) - 1} more of it" if len(found) > 1 else "")
            for command, found in pids.items()]


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
