"""Whether the server under test still answers after a scenario failed, and what held it if not.

A store can hold the whole server without breaking it: a Lua script that never returns makes the
server answer every other client with BUSY, and ``CLIENT PAUSE`` holds every client, the suite's
own included. That is a failure of the store, not Redis going away, and the run can go on once it
is undone. :func:`examine` tells the cases apart on evidence:

- the server answers: nothing to say;
- it answers BUSY: a script (or a function) is running; the suite ends it (SCRIPT KILL, FUNCTION
  KILL), or, when the script has written and cannot be killed, restarts the private server (the
  run's data is thrown away between scenarios anyway); a server of the user's cannot be restarted,
  and the run stops with the store's failure;
- it answers nothing: it is waited for, up to :data:`RECOVERY_S`; when it answers again, the
  server's command statistics say whether CLIENT PAUSE ran since the run began (the private servers
  forbid it to the stores; a server of the user's cannot), else the possible causes are listed;
- it refuses new clients because its connections are exhausted (``maxclients``): the store opened
  them, as the suite holds a few; the suite's reserved connection (:func:`reserve`, opened before
  any store runs) reads how many, and the run stops with the store's failure;
- its process is gone, or it never answers again: Redis went away.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

POLL_TIMEOUT_S = 1.0    # one PING's wait while the server is examined
RECOVERY_S = 30.0       # how long a server that answers nothing is waited for (a pause ends, a script turns BUSY)
PAUSE_STAT = "cmdstat_client|pause"


@dataclass(frozen=True)
class ServerCheck:
    """What :func:`examine` found: ``usable`` (the run can go on), ``note`` (what happened to the
    server, for the failed scenario's verdict, or why it cannot be used) and ``by_store`` (the
    evidence shows the store did it)."""

    usable: bool = True
    note: str | None = None
    by_store: bool = False


ANSWERS = ServerCheck()


EXHAUSTED = "max number of clients reached"   # what Redis answers a new client past maxclients


def client(url: str, timeout: float = POLL_TIMEOUT_S, single: bool = False) -> redis.Redis:
    """The suite's client for examining a server: one try per command, short timeouts (``single``: one
    connection, kept)."""
    return redis.Redis.from_url(url, decode_responses=True, socket_timeout=timeout, socket_connect_timeout=timeout,
                                retry=Retry(NoBackoff(), 0), single_connection_client=single)


def reserve(url: str) -> redis.Redis | None:
    """A connection of the suite's own, opened before any store runs and kept for the run: when a store
    exhausts the server's connections, no new one can be opened, and this one still reads the server.
    None when it cannot be opened."""
    reserved = client(url, single=True)
    try:
        reserved.ping()
    except (redis.RedisError, OSError):
        reserved.close()
        return None
    return reserved


def _exhausted(reserved: redis.Redis | None) -> ServerCheck:
    """The server refuses new clients: how many it holds, read over the reserved connection."""
    counts = ""
    if reserved is not None:
        try:
            info = reserved.info("clients")
            counts = f" ({info['connected_clients']} connected, of maxclients {info['maxclients']})"
        except (redis.RedisError, OSError, KeyError):
            pass
    return ServerCheck(False, f"the server's connections are exhausted{counts}: it refused every new client, the "
                              "suite's included. The suite holds a few connections a worker, so the rest are the "
                              "store's: connections it opened and did not close, or a pool larger than the server "
                              "allows", by_store=True)


def pauses(url: str) -> int | None:
    """How many times CLIENT PAUSE has run on the server (INFO commandstats), None when it cannot say."""
    try:
        with client(url) as admin:
            return int(admin.info("commandstats").get(PAUSE_STAT, {}).get("calls", 0))
    except (redis.RedisError, OSError, ValueError, AttributeError):
        return None


def examine(url: str, pauses_before: int | None, restart: Callable[[], None] | None,
            recovery_s: float = RECOVERY_S, reserved: redis.Redis | None = None) -> ServerCheck:
    """Examine the server at ``url`` (the suite's user) after a scenario failed; ``restart``
    restarts it where the suite owns it (None: a server of the user's, or a cluster); ``reserved``: the
    suite's kept connection (:func:`reserve`)."""
    started = time.monotonic()
    last_error: Exception | None = None
    while True:
        try:
            with client(url) as admin:
                admin.ping()
            break
        except redis.ResponseError as exc:
            if str(exc).startswith("BUSY"):
                return _end_script(url, restart)
            last_error = exc
            break   # it answers, with an error of its own (NOAUTH, ...): not held
        except redis.TimeoutError as exc:   # held, or slow: wait
            last_error = exc
        except (redis.ConnectionError, OSError) as exc:   # refused, reset: it is gone, or full
            if EXHAUSTED in str(exc):
                return _exhausted(reserved)
            return ServerCheck(False, f"the server does not answer: {exc}")
        if time.monotonic() - started >= recovery_s:
            return ServerCheck(False, f"the server answered nothing for {recovery_s:g} s ({last_error}); possible "
                                      "causes: a command or script of the store's that runs that long, CLIENT PAUSE, "
                                      "a server starved of CPU or memory")
        time.sleep(0.05)
    silent = time.monotonic() - started
    if silent < POLL_TIMEOUT_S:
        return ANSWERS
    now = pauses(url)
    if now is not None and pauses_before is not None and now > pauses_before:
        return ServerCheck(True, f"the store paused the server's clients (CLIENT PAUSE, seen in INFO commandstats): "
                                 f"it answered no client, the suite's own included, for {silent:.1f} s", by_store=True)
    return ServerCheck(True, f"the server answered nothing for {silent:.1f} s after the scenario failed; possible "
                             "causes: a command or script of the store's that ran that long, a server starved of CPU "
                             "or memory")


HELD = "a Lua script of the store's ran on and held the server, which answered every other client BUSY"


def _end_script(url: str, restart: Callable[[], None] | None) -> ServerCheck:
    """A script holds the server: end it, or restart the server, or say that nothing can."""
    unkillable = ""
    for command in ("SCRIPT", "FUNCTION"):   # an EVAL's script, or a function (FCALL)
        try:
            with client(url) as admin:
                admin.execute_command(command, "KILL")
            return ServerCheck(True, f"{HELD}: the suite ended it with {command} KILL", by_store=True)
        except redis.ResponseError as exc:
            if str(exc).startswith("UNKILLABLE"):
                unkillable = str(exc)
                break
            continue   # NOTBUSY: not this kind of script
        except (redis.RedisError, OSError):
            continue
    if not unkillable:
        return ServerCheck(True, f"{HELD}; it had ended by the time the suite looked", by_store=True)
    if restart is None:
        return ServerCheck(False, f"{HELD}, and had written, so SCRIPT KILL cannot end it (UNKILLABLE): only "
                                  "SHUTDOWN NOSAVE on the server can, which the suite does not do to a server it "
                                  "did not start", by_store=True)
    restart()
    return ServerCheck(True, f"{HELD}, and had written, so SCRIPT KILL could not end it: the suite restarted its "
                             "private server", by_store=True)
