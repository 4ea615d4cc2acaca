"""Stores that attack the run instead of storing badly: they end the process, hang where nothing
in-process can stop them, leave threads behind, sabotage the server, flood the output, or print
text that looks like GitHub workflow commands. Each is a class of the runner's own bugs that a
test in tests/end_to_end/test_hostile.py holds shut.

Most misbehave only in the round-trip scenario (the only one that appends the HTML content) or in
one named session, so that the rest of the run shows the worker was replaced and went on.
"""

import asyncio
import ctypes
import os
import signal
import subprocess
import threading
import time
import unittest

from tests.stores.correct import ListStore

ROUND_TRIP_MARK = "<script>"        # only the round-trip scenario appends this content


class _OnRoundTrip(ListStore):
    """Misbehaves when it is asked to append the round trip's HTML message; correct otherwise."""

    def misbehave(self):
        raise NotImplementedError

    def append(self, session_id, role, content):
        if ROUND_TRIP_MARK in content:
            self.misbehave()
        super().append(session_id, role, content)


class ExitsWithStatusZero(_OnRoundTrip):
    """Ends the process as if all was well: ``os._exit(0)``."""

    def misbehave(self):
        os._exit(0)


class Segfaults(_OnRoundTrip):
    """Dereferences a null pointer (exit by SIGSEGV)."""

    def misbehave(self):
        ctypes.string_at(0)


class KillsItself(_OnRoundTrip):
    """Sends itself SIGKILL, as the out-of-memory killer would."""

    def misbehave(self):
        os.kill(os.getpid(), signal.SIGKILL)


class SpinsInC(_OnRoundTrip):
    """Loops in C code that holds the GIL: no signal handler and no timer thread ever runs."""

    def misbehave(self):
        sum(range(10**15))


class Sleeps(_OnRoundTrip):
    """Blocks in a call without a timeout."""

    def misbehave(self):
        time.sleep(3600)


class BlocksInC(_OnRoundTrip):
    """Blocks in C code that holds the GIL, as an extension that forgets to release it does
    (libc's sleep through ctypes.PyDLL): no thread of the worker can run, so only the runner sees
    the call. A signal ends sleep() early, hence the loop."""

    def misbehave(self):
        while True:
            ctypes.PyDLL(None).sleep(3600)


class HangsInTheStatefulScenario(ListStore):
    """Hangs on a load of session ``s1:2``, which only the stateful scenario uses: every fixed
    scenario passes, and Hypothesis would retry the hang for ever if it could."""

    def get(self, session_id):
        if session_id == "s1:2":
            time.sleep(3600)
        return super().get(session_id)


class AsyncNeverResolves:
    """An async store whose append awaits a future nobody resolves, in the round trip."""

    def __init__(self, redis, namespace):
        self.redis = redis
        self.namespace = namespace

    async def append(self, session_id, role, content):
        if ROUND_TRIP_MARK in content:
            await asyncio.get_running_loop().create_future()
        await self.redis.rpush(self.namespace + session_id, f"{role}\n{content}")

    async def get(self, session_id):
        raw = await self.redis.lrange(self.namespace + session_id, 0, -1)
        return [dict(zip(("role", "content"), item.split("\n", 1))) for item in raw]


class LeavesAThread(ListStore):
    """Starts a non-daemon thread that outlives every scenario."""

    def __init__(self, redis, namespace, max_messages, ttl):
        super().__init__(redis, namespace, max_messages, ttl)
        threading.Thread(target=time.sleep, args=(3600,), name="left-behind").start()


class HangsOnItsOwnServer(ListStore):
    """Sleeps in the first append of the memory-pressure scenario that runs out of memory, which runs
    on a redis-server of the scenario's own: that server must die with the worker cut off."""

    def append(self, session_id, role, content):
        if session_id == "pressure":
            time.sleep(3600)
        super().append(session_id, role, content)


class FlushesAll(_OnRoundTrip):
    """Runs FLUSHALL (to "start clean")."""

    def misbehave(self):
        self.redis.flushall()


class KillsTheSuitesConnections(_OnRoundTrip):
    """Runs CLIENT KILL USER on the suite's own user: every connection the suite holds to the server."""

    def misbehave(self):
        self.redis.execute_command("CLIENT", "KILL", "USER", "memory-regression-suite")


class ShutsDownTheServer(_OnRoundTrip):
    """Runs SHUTDOWN."""

    def misbehave(self):
        self.redis.shutdown(nosave=True)


class KillsTheServer(_OnRoundTrip):
    """Kills the Redis server's process, as a crash of the server would: Redis goes away."""

    def misbehave(self):
        os.kill(int(self.redis.info("server")["process_id"]), signal.SIGKILL)
        time.sleep(0.2)


class Floods(ListStore):
    """Prints 200 KB on every append."""

    def append(self, session_id, role, content):
        print("x" * 200_000)
        super().append(session_id, role, content)


class PrintsWorkflowCommands(_OnRoundTrip):
    """Prints GitHub workflow commands and raises with one in its message."""

    def misbehave(self):
        print("::error title=forged::the store forged this annotation")
        print("::set-output name=passed::999")
        raise ValueError("::warning::forged warning from the store's exception")


class PrintsItsUrl(_OnRoundTrip):
    """Prints the URL it was given, password and all, and fails with it in its message."""

    def __init__(self, redis, redis_url, namespace, max_messages, ttl):
        super().__init__(redis, namespace, max_messages, ttl)
        self.url = redis_url

    def misbehave(self):
        print(f"connecting to {self.url}")
        raise ConnectionError(f"could not use {self.url}")


class RaisesSystemExit(_OnRoundTrip):
    """Calls sys.exit(3) while appending (SystemExit, not os._exit)."""

    def misbehave(self):
        raise SystemExit(3)


def factory_raising_system_exit(redis):
    """A factory function that exits while the suite builds a store to look at."""
    raise SystemExit(4)


class UnrenderableFailure(_OnRoundTrip):
    """Fails the round trip from a frame whose ``__tracebackhide__`` raises when pytest renders the
    failure, as rendering some deep exception chains raises on Python 3.11 ("SystemError: AST
    constructor recursion depth mismatch"): the failure must stay the round trip's, and the rest run."""

    def misbehave(self):
        def hide(excinfo):
            raise SystemError("AST constructor recursion depth mismatch (before=48, after=47)")
        __tracebackhide__ = hide   # noqa: F841 (pytest reads it from the frame)
        raise RuntimeError("the store failed")


class NotReproducible(ListStore):
    """Drops the newest message from the first load in its process of a session holding three
    messages or more, and from no other: when the stateful scenario replays the failing sequence,
    the store behaves otherwise (Hypothesis's Flaky), however many loads a diagnosis made between.
    (Dropping from every seventh load made whether the replay repeated it a matter of how many loads
    the diagnosis made.)"""

    DROPPED = [False]

    def get(self, session_id):
        history = super().get(session_id)
        if len(history) < 3 or self.DROPPED[0]:
            return history
        self.DROPPED[0] = True
        return history[:-1]


class SurrogateRole(ListStore):
    """Loads every message with its role decoded by ``errors="surrogateescape"`` from bytes that are
    not UTF-8, so the role holds an unpaired surrogate (``"user\\udcff"``), which no UTF-8 channel
    can carry: the round trip must still fail on it, not vanish from the verdict."""

    def get(self, session_id):
        return [{**message, "role": message["role"] + b"\xff".decode("utf-8", "surrogateescape")}
                for message in super().get(session_id)]


class SkipsItsAppends(ListStore):
    """Raises ``unittest.SkipTest`` from append, as a store that wants out of a test would: it stores
    nothing, and each scenario that appends must fail saying what it raised, not skip."""

    def append(self, session_id, role, content):
        raise unittest.SkipTest("storage is not configured")


class ExitsPytest(_OnRoundTrip):
    """Calls ``pytest.exit()`` while appending the round trip's message: that scenario fails naming
    it, and the rest run."""

    def misbehave(self):
        import pytest
        pytest.exit("the store is done")


class SkipsWhenBuilt(ListStore):
    """Calls ``pytest.skip()`` in its constructor, as a store whose configuration is missing might:
    every scenario that builds it fails saying so."""

    def __init__(self, redis, namespace, max_messages, ttl):
        import pytest
        pytest.skip("no configuration")


class LeavesProcesses(_OnRoundTrip):
    """Starts, in the round trip, a ``sleep`` in a session of its own (as a daemon detaches) and a
    forked grandchild that holds the worker's inherited output open; both would outlive the run."""

    def misbehave(self):
        subprocess.Popen(["sleep", "1000"], start_new_session=True, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
        if os.fork() == 0:   # the grandchild: a child of its own, then gone from its parent's view
            if os.fork() == 0:
                time.sleep(1000)
            os._exit(0)


class RaisesHugeErrors(ListStore):
    """Every append raises an error whose message is 20 MB, with a 20 MB note: every scenario that appends
    fails with it."""

    def append(self, session_id, role, content):
        error = ValueError("lost " + "x" * (20 << 20))
        error.add_note("note " + "y" * (20 << 20))
        raise error


class LeaksConnections(ListStore):
    """Each append opens a connection of its own and keeps it open: the server's maxclients is reached."""

    def __init__(self, redis, namespace, max_messages, ttl):
        super().__init__(redis, namespace, max_messages, ttl)
        self.leaked = []

    def append(self, session_id, role, content):
        pool = self.redis.connection_pool
        leak = type(self.redis)(connection_pool=type(pool)(connection_class=pool.connection_class,
                                                           **pool.connection_kwargs))
        leak.ping()
        self.leaked.append(leak)
        super().append(session_id, role, content)


class ForksAChain(_OnRoundTrip):
    """Starts, in the round trip, a chain of processes in which each generation forks its successor and
    exits at once, every few milliseconds (for at most a minute): no generation lives long enough to be
    killed one pid at a time."""

    def misbehave(self):
        if os.fork() == 0:
            until = time.monotonic() + 60
            while time.monotonic() < until:
                time.sleep(0.002)
                if os.fork():
                    os._exit(0)
            os._exit(0)


class HidesItsCallAndSleeps(_OnRoundTrip):
    """Zeroes the page where its worker keeps the call it is in (found in /proc/self/maps), so no
    call timeout sees it, then sleeps: only the run's deadline, which the store cannot reach, ends it."""

    def misbehave(self):
        with open("/proc/self/maps") as maps:
            pages = {line.split()[-1] for line in maps if line.rstrip().endswith(".call")}
        for page in pages:
            with open(page, "r+b") as handle:
                handle.write(bytes(4096))
        time.sleep(1000)


class PausesTheServer(_OnRoundTrip):
    """Pauses every client of the server for 6 s (``CLIENT PAUSE 6000 ALL``), the suite's own
    included, longer than the tests' call timeout: the round trip's failure is the store's, not
    Redis going away."""

    def misbehave(self):
        self.redis.execute_command("CLIENT", "PAUSE", "6000", "ALL")


class RunsAnEndlessScript(_OnRoundTrip):
    """Runs a Lua script that never returns: the server answers nothing but BUSY until someone ends
    the script."""

    def misbehave(self):
        self.redis.eval("while true do end", 0)


class WritesThenLoopsInAScript(_OnRoundTrip):
    """Writes a key, then loops for ever in the same Lua script: SCRIPT KILL cannot end a script that
    has written (UNKILLABLE), so only a restart of the server does."""

    def misbehave(self):
        self.redis.eval("redis.call('SET', KEYS[1], 'x') while true do end", 1, self.namespace + "busy")


class ReportsCredentials(_OnRoundTrip):
    """Says which CI credential variables its own environment holds, and raises with the runner's
    GITHUB_TOKEN, read from the runner's initial environment in /proc (what a store written to find
    it can do): the variables must be gone, and the value redacted wherever the failure goes."""

    def misbehave(self):
        from memory_regression.runner.credentials import CREDENTIALS
        held = sorted(name for name in CREDENTIALS if name in os.environ)
        with open(f"/proc/{os.getppid()}/environ", "rb") as handle:
            found = dict(entry.split(b"=", 1) for entry in handle.read().split(b"\0") if b"=" in entry)
        token = found.get(b"GITHUB_TOKEN", b"").decode()
        print(f"the store printed the token {token}")
        raise RuntimeError(f"my environment holds {held or 'no credential'}; the runner's token is {token}")


class HangsFromTheStart(ListStore):
    """Blocks in every append, the first the suite ever makes included (the probe at binding)."""

    def append(self, session_id, role, content):
        time.sleep(3600)
