"""Connection faults: the server closes the store's connections between turns, or is not there at all.

In production a connection dies without the store being told: the server's idle timeout, a proxy,
a failover or CLIENT KILL close it between two requests of a conversation. A store must reconnect
and go on, losing nothing; and when the server cannot be reached, it must say so by raising, never
carry on as if the message were stored or the conversation were empty. These scenarios need a real
server: fakeredis has no connections to kill.
"""

import socket
from contextlib import contextmanager

import pytest

from memory_regression.contract import Message
from memory_regression.conversations import numbered_messages
from memory_regression.reference import assert_history

# appended in turns; the store's connections are killed before each turn after the first, and before
# each load
TURNS = 3
PER_TURN = 2
CONNECT_TIMEOUT_S = 1


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
def test_store_reconnects_after_its_connections_are_killed(memory):
    """The server closes every connection of the store (CLIENT KILL) between turns of a
    conversation and before each load: each later append and load still works, and the history
    holds every message once, in order.

    If this fails with a raised ConnectionError: the store keeps one connection for its life (a
    connection taken from the pool once, a socket of its own) and does not reconnect when the server
    has closed it; use the client's own commands, whose pool replaces a closed connection. With a
    message missing: the store swallows the error of the append that met the dead connection, so
    that message is lost without a word. With a message twice: it retried an append that had
    already been stored."""
    store = memory.store()
    appended, expected, killed = [], [], 0
    for turn in range(TURNS):
        if turn:
            killed += memory.kill_connections()
        for message in numbered_messages(PER_TURN, f"turn {turn + 1}"):
            expected.append(store.add("killed", message))
            appended.append(message)
        killed += memory.kill_connections()
        assert_history(expected, store.load("killed"), appended,
                       context=f"after {turn + 1} turns with the store's connections killed before each: ")
    memory.note(f"killed {killed} connections of the store between turns" if killed else
                "the store held no connection open between turns (it connects per call): nothing was killed")


@pytest.mark.real_server("a server that is down beside the one under test")
def test_store_raises_when_the_server_is_down(memory):
    """With its client and ``redis_url`` pointing at a loopback port where no server listens, the
    store's append raises, and so does its load (or building the store raises already).

    If append returns: the store swallows the error (a "best-effort" write), and the application
    believes the message is stored. If load returns an empty history: silent amnesia, the model
    answers as if the conversation had never happened, and nothing in the logs says why. Let the
    connection error through (or raise one of your own); the caller decides whether to go on
    without memory."""
    with dead_address() as url:
        try:
            store = memory.store_on(url)
        except Exception:
            return   # a store that connects when it is built cannot go on without the server either
        message = Message("user", "said while the server was down")
        try:
            store.append("down", message.role, message.content)
        except Exception:
            pass
        else:
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
