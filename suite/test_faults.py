"""Connection faults: the server closes the store's connections between turns, a connection closes
after a write executed and before its reply came, or the server is not there at all.

In production a connection dies without the store being told: the server's idle timeout, a proxy,
a failover or CLIENT KILL close it between two requests of a conversation, or while a request waits
for its reply. A store must reconnect and go on, losing nothing and storing nothing twice; and when
the server cannot be reached, it must say so by raising, never carry on as if the message were
stored or the conversation were empty. These scenarios need a real server: fakeredis has no
connections to kill.
"""

import socket
from collections import Counter
from contextlib import contextmanager
from urllib.parse import urlsplit

import pytest

from memory_regression.contract.adapter import StoreAdapter
from memory_regression.contract.rules import Message
from memory_regression.reference.conversations import numbered_messages
from memory_regression.harness.proxy import WRITE_COMMANDS, ReplyDroppingProxy
from memory_regression.harness.command_evidence import writes_of
from memory_regression.reference.diagnosis import assert_history, fresh_instance_loads, lost_after

# appended in turns; the store's connections are killed before each turn after the first, and before
# each load
TURNS = 3
PER_TURN = 2
CONNECT_TIMEOUT_S = 1
# (turn, index) of the append whose reply the proxy drops
LOSSY_APPEND = (1, 0)


@contextmanager
def dead_address():
    """A ``redis://`` URL on loopback where nothing listens: the port is bound and never listened on,
    so a connection is refused at once and no other process can take the port meanwhile. The URL
    carries short timeouts, for stores that build their client from it."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        yield (f"redis://127.0.0.1:{sock.getsockname()[1]}/0?socket_connect_timeout={CONNECT_TIMEOUT_S}"
               f"&socket_timeout={CONNECT_TIMEOUT_S}")


@pytest.mark.real_server("connections the server closes")
def test_store_reconnects_after_its_connections_are_killed(stores, connections, findings, store_commands):
    """The server closes every connection of the store (CLIENT KILL) between turns of a
    conversation and before each load: each later append and load still works, and the history
    holds every message once, in order.

    If this fails with a raised ConnectionError: the store keeps one connection for its life (a
    connection taken from the pool once, a socket of its own) and does not reconnect when the server
    has closed it; use the client's own commands, whose pool replaces a closed connection. With a
    message missing: the store swallows the error of the append that met the dead connection, so
    that message is lost without a word (unless the store's commands show the server ran that
    append's write: then the failure says it was stored and lost afterwards). With a message twice:
    it retried an append that had already been stored."""
    store = stores.new()
    appended, expected, firsts, killed = [], [], [], 0
    first_calls = {}   # each first message after a kill -> the call of the store that appended it (logged)

    def reached(message):
        call = first_calls.get(message)
        return writes_of(store_commands, call) if call is not None else None

    def how(history):
        return (lost_after(expected, history, firsts, "a kill of the store's connections", reached)
                or fresh_instance_loads(expected, stores.new().load("killed"),
                                        "this instance's load, just after its connections were killed, returned "
                                        "without them and raised nothing (silent amnesia): reconnect, or let the "
                                        "connection error through"))
    for turn in range(TURNS):
        if turn:
            killed += connections.kill()
        for message in numbered_messages(PER_TURN, f"turn {turn + 1}"):
            calls = len(store_commands.calls) if store_commands is not None else None
            expected.append(store.add("killed", message))
            appended.append(message)
            if turn and message is appended[-PER_TURN] and calls is not None and calls < len(store_commands.calls):
                first_calls[expected[-1]] = store_commands.calls[calls]
        firsts += expected[-PER_TURN:][:1] if turn else []
        killed += connections.kill()
        assert_history(expected, store.load("killed"), appended,
                       context=f"after {turn + 1} turns with the store's connections killed before each: ", hint=how)
    findings.note(f"killed {killed} connections of the store between turns" if killed else
                  "the store held no connection open between turns (it connects per call): nothing was killed")


@pytest.mark.real_server("a server that is down beside the one under test")
def test_store_raises_when_the_server_is_down(stores, keyspace):
    """With its client and ``redis_url`` pointing at a loopback port where no server listens, the
    store's append raises, and so does its load (or building the store raises already).

    If append returns: the store swallows the error (a "best-effort" write), and the application
    believes the message is stored. If load returns an empty history: silent amnesia, the model
    answers as if the conversation had never happened, and nothing in the logs says why. Let the
    connection error through (or raise one of your own); the caller decides whether to go on
    without memory.

    A store is first built where the server is up: one that cannot be built at all fails here with
    its own error (it passes nothing), and only a store that builds there may raise while it is
    built on the dead server. A store whose append returns and whose message lands on the server
    under test does not take the URL it is given: the scenario is skipped, saying so."""
    stores.new().instance_for("down")
    with dead_address() as url:
        try:
            store = stores.new_on(url)
        except Exception:
            return   # a store that connects when it is built cannot go on without the server either
        message = Message("user", "said while the server was down")
        try:
            store.append("down", message.role, message.content)
        except Exception:
            pass
        else:
            if keyspace.keys():
                pytest.skip("built on the URL of a server that is down, the store appended to the server under "
                            "test: it does not take the client or redis_url it is given, so it cannot be put before "
                            "a dead server")
            raise AssertionError("append returned as if the message were stored while the server was down: "
                                 "the store swallows the connection error, and the message is lost unseen")
        try:
            history = store.load("down")
        except Exception:
            return
        raise AssertionError(
            f"load returned {'an empty history' if not history else f'{len(history)} messages'} while the server "
            "was down instead of raising: " + ("silent amnesia, the conversation goes on as if it had never "
                                               "happened" if not history else "a history from somewhere else"))


# how a client of the store's language re-sends a write whose reply was lost, and how to stop it
CLIENT_RESENDS = {
    "python": ("redis-py's Redis(host=..., port=...) re-sends a command whose reply was lost, up to 10 times by "
               "default in redis-py 8.1: retry=Retry(ExponentialWithJitterBackoff(...), 10); Redis.from_url does "
               "not; and redis-py's Redis.transaction() runs a watched transaction again when the connection died "
               "during its EXEC, which redis-py reports as a WatchError", "disable retries for it "
               "(retry=Retry(NoBackoff(), 0))"),
    "javascript": ("ioredis re-sends the commands in flight when its connection drops, a lone script (EVAL, "
                   "EVALSHA) included (autoResendUnfulfilledCommands, true by default), though not a MULTI/EXEC "
                   "transaction; node-redis does not", "with ioredis, send the write in MULTI/EXEC "
                   "(autoResendUnfulfilledCommands: false leaves the command unanswered instead, in ioredis 5.11.1: "
                   "a hang)"),
}


def _blind_retry(store: StoreAdapter, message: Message, copies: int, lost: str) -> str:
    client, fix = CLIENT_RESENDS.get(store.binding.language.split()[0], ("", "disable the client's retries for it"))
    return (f"{message.describe()} is stored {copies} times {lost}: the append was sent again, a blind retry of "
            f"a non-idempotent write, by the store's own retry loop or by its client{f' ({client})' if client else ''}"
            ". Make the append idempotent (an id per message, written once: a script or SET NX that skips an id "
            f"already stored) or let it raise: {fix}")


def _outcome(raised: Exception | None, lost: str, copies: int) -> str:
    """The finding of an append whose reply was lost: how it ended, and whether its message is stored."""
    if raised is None:
        return f"append returned {lost}, the message stored once: the store recovered without sending it again"
    stored = ("is stored once: a caller that retries an append that raised stores it twice" if copies else
              "is not stored: the store undid the write, or never made it")
    return f"append raised {type(raised).__name__} ({str(raised)[:100]}) {lost}; the message {stored}"


@pytest.mark.real_server("a proxy on a TCP connection to the server")
def test_store_neither_duplicates_nor_loses_a_message_whose_reply_was_lost(stores, findings):
    """A proxy between the store and the server lets one append's write (its RPUSH, or the EXEC of
    its MULTI, or its EVALSHA) reach the server and execute, then drops the server's reply and closes
    the connection. That append may raise (the message is then stored once or not at all, and the
    finding says which) or return (the message must then be stored exactly once); afterwards further
    appends and loads work, and the history holds every message at most once, in order.

    If a message is stored twice: the append was sent again after its reply was lost, a blind
    retry. Either the store retries on a connection error, or its client does (redis-py's
    ``Redis(host=..., port=...)`` does by default, ``Redis.from_url`` does not; in Node.js, ioredis
    re-sends the commands in flight when its connection drops, a MULTI/EXEC transaction excepted), or it appends
    through redis-py's ``Redis.transaction()``, which retries every WatchError, and redis-py raises
    one when the connection dies during a watched EXEC. A store cannot
    know whether a write whose reply was lost was executed: make the append idempotent (an id per
    message, written once by a script) or let the error through to the caller. If the message is
    missing although append returned: the store swallowed the error. A store that never connects
    through the proxy does not take the URL it is given: the scenario is skipped, saying so. (A
    framework whose message of a failed call may stay or go by design, as LangGraph's input of a
    failed run does, is not judged on that message, and a note says why.)"""
    if urlsplit(stores.url).scheme != "redis":
        pytest.skip(f"the proxy reads plain TCP, and the server is reached by {urlsplit(stores.url).scheme}://")
    if stores.cluster:
        pytest.skip("on a Redis Cluster the store's client connects to the nodes the slot map names, around a "
                    "proxy: a lost reply is checked with --redis server")
    with ReplyDroppingProxy.to(stores.url) as proxy:
        store = stores.new_on(proxy.url_for(stores.url))
        appended, expected, unjudged = [], [], set()
        for turn in range(TURNS):
            for index, message in enumerate(numbered_messages(PER_TURN, f"turn {turn + 1}")):
                appended.append(message)
                if (turn, index) != LOSSY_APPEND:
                    expected.append(store.add("lossy", message))
                    continue
                stored = store.stored_form([message])[0]
                if not proxy.connected:
                    pytest.skip(f"built on the URL of a proxy before the server, the store appended {len(expected)} "
                                "messages without one connection through it: it does not take the client or "
                                "redis_url it is given, so no reply of its can be lost")
                proxy.arm()
                try:
                    store.add("lossy", message)
                    raised = None
                except Exception as exc:   # allowed: the store cannot know whether the write was executed
                    raised = exc
                dropped = proxy.disarm()
                assert proxy.error is None, f"the proxy could not follow the store's connection: {proxy.error}"
                lost = (f"after the reply to its {dropped} was lost" if dropped else
                        "although no reply was lost (it sent none of the write commands the proxy knows: "
                        f"{', '.join(sorted(WRITE_COMMANDS))})")
                copies = Counter(store.load("lossy"))[stored]
                assert copies <= 1, _blind_retry(store, stored, copies, lost)
                if raised is None:
                    assert copies == 1, (f"append returned as if stored {lost}, but {stored.describe()} is not in "
                                         "the history: the store swallowed the connection error, and the message "
                                         "is lost unseen")
                findings.note(_outcome(raised, lost, copies))
                if raised is not None and store.binding.raised_append:   # the framework's own rule: not judged
                    findings.note(f"not judged whether it stays, for a {store.binding.framework}: "
                                  f"{store.binding.raised_append}")
                    unjudged.add(stored)
                elif copies:
                    expected.append(stored)
            history = store.load("lossy")
            twice = next(((message, count) for message, count in Counter(history).items() if count > 1), None)
            assert twice is None, _blind_retry(store, *twice, f"after {turn + 1} turns, one reply lost in turn "
                                                       f"{LOSSY_APPEND[0] + 1}")
            assert_history(expected, [message for message in history if message not in unjudged], appended,
                           context=f"after {turn + 1} turns, one reply lost in turn {LOSSY_APPEND[0] + 1}: ")
