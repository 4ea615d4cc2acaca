"""Restart and durability: the Redis server restarts between two turns of a conversation.

Servers restart: a deploy, a crash, the out-of-memory killer, a failover. With an append-only file
fsynced on every write (``appendonly yes``, ``appendfsync always``) the server comes back with
every acknowledged write, and a store must come back with it: reconnect, find every message, and go
on appending. What a restart takes away from a store is what the server keeps only in its process:
connections, and the script cache (``SCRIPT LOAD``). Without persistence the server comes back
empty: that loss is the server's configuration, which the scenario reports as such, and the store
must still work on the empty server, never show what the server no longer holds.

A restart is server-wide, so the scenario runs on a redis-server of its own
(``own_server``), never on the run's server, which the other workers share. fakeredis has no
server to restart.
"""

import pytest

from memory_regression.worker.clients import IDLE_CLOSE_SIGN, idle_close_defect
from memory_regression.reference.conversations import numbered_messages
from memory_regression.reference.diagnosis import assert_history, lost_after

AOF = {"appendonly": "yes", "appendfsync": "always"}
PER_TURN = 2
SESSION = "restarted"
# what an exception after a restart says -> what to fix
HINTS = (
    ("NoScriptError", "the store loaded its Lua script once (SCRIPT LOAD) and calls only EVALSHA, and a restart "
                      "empties the script cache: fall back to EVAL (or SCRIPT LOAD again) on NOSCRIPT, as redis-py's "
                      "register_script does"),
    ("Function not found", "the store loaded a Redis Function once, which a server without persistence comes back "
                           "without: load it again (FUNCTION LOAD REPLACE) when FCALL says it is missing"),
    ("ConnectionError", "the store did not reconnect: a connection kept for the store's life (use the client's own "
                        "commands, whose pool replaces a connection the server closed), or a client of its own that "
                        "does not replace one"),
)
# between the turns of the persistent server: killed (no shutdown to rely on), then shut down
RESTARTS = ("killed (SIGKILL) and restarted", "shut down (SIGTERM) and restarted")


def working(what: str | None, call, store):
    """``call()``, whose exception says that the store does not keep working after ``what`` (None:
    before any restart, where an exception is the store's own); a client of the store's own with a
    known defect is named as the cause where it has one."""
    if what is None:
        return call()
    try:
        return call()
    except Exception as exc:
        text = f"{type(exc).__name__}: {exc}"
        hint = ((IDLE_CLOSE_SIGN in text and idle_close_defect(store.instances()))
                or next((fix for sign, fix in HINTS if sign in text), "see the error"))
        raise AssertionError(f"after the server was {what}, the store raised {text}: it does not keep working after "
                             f"a restart; {hint}") from exc


@pytest.mark.real_server("a server restarted between turns")
def test_a_restart_between_turns_loses_nothing(stores, own_server, findings):
    """On a server with an append-only file fsynced at every write, a session gets 2 messages per turn;
    between turns the server is killed (SIGKILL, so nothing relies on a graceful shutdown) and
    restarted, then shut down (SIGTERM) and restarted: after each restart the store appends and loads
    again, and the history holds every message once, in order. Then, on a server without
    persistence, killed and restarted between two turns: the first turn is gone with the server's
    data (reported as the server's configuration), and the store appends and loads the second turn
    as on a new server.

    If an append or load raises after a restart: see the error (NOSCRIPT: a script called only by
    EVALSHA; a connection error: no reconnect; Function not found: a Redis Function loaded once).
    If messages are missing while the server kept every key: the store lost track of them (state in
    its process that the restart made stale). If the history after the restart without persistence
    still holds the first turn: the store answers loads from state kept outside this server (in its
    process, or a backend of its own), which no longer matches Redis. A store that holds no key on
    the server it is built on is not judged here: the scenario is skipped, saying so."""
    server = own_server(AOF)
    store = stores.new_on(server.url)
    appended, expected, firsts = [], [], []
    for turn, restart in enumerate((None, *RESTARTS)):
        if restart:
            keys = sorted(server.admin.keys())
            server.restart(hard=restart.startswith("killed"))
            if sorted(server.admin.keys()) != keys:
                pytest.skip(f"the scenario's server, with {AOF}, came back without the keys it held "
                            f"({len(keys)} before the restart): it has no working persistence, so a loss here "
                            "would be the server's configuration, not the store's")
        after = f"after turn {turn + 1}" + (f", the server {restart} before it" if restart else "") + ": "
        for message in numbered_messages(PER_TURN, f"turn {turn + 1}"):
            expected.append(working(restart, lambda: store.add(SESSION, message), store))
            appended.append(message)
        if not restart:   # before the load, which may change what the server holds
            server.used_by_the_store("its first turn")
        firsts += expected[-PER_TURN:][:1] if restart else []
        assert_history(expected, working(restart, lambda: store.load(SESSION), store), appended, context=after,
                       hint=lambda history: lost_after(expected, history, firsts, "a restart of the server"))

    bare = own_server()   # no persistence, as the run's private server
    store = stores.new_on(bare.url)
    first = numbered_messages(PER_TURN, "before")
    lost = [store.add(SESSION, message) for message in first]
    bare.used_by_the_store("its first turn")
    bare.restart(hard=True)
    left = bare.admin.dbsize()
    second = numbered_messages(PER_TURN, "after")
    kept = [working("restarted without persistence", lambda: store.add(SESSION, message), store) for message in second]
    history = working("restarted without persistence", lambda: store.load(SESSION), store)
    stale = [message for message in lost if message in history]
    if stale:
        raise AssertionError(
            f"after the server was restarted without persistence (it came back with {left} keys), the history still "
            f"holds {stale[0].describe()}, which the server lost: the store answers loads from state kept outside "
            "this server (in its process, or a backend of its own), which no longer matches Redis; read the history "
            "from Redis")
    assert_history(kept, history, first + second,
                   context="after the server was restarted without persistence and 2 more appends: ")
    findings.note(f"with appendonly yes and appendfsync always, {len(RESTARTS)} restarts (a kill, a shutdown) lost "
                  f"none of {len(expected)} messages; without persistence (appendonly no, no save points) the restart "
                  f"lost the {len(lost)} messages before it, as it loses every session: that is the server's "
                  "configuration (run Redis that holds conversations with appendonly yes), not the store")
