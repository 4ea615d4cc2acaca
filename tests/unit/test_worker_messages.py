"""The worker's messages to the runner (memory_regression/channel/messages.py): each kind goes over
the wire and back unchanged; anything that is not one of them, or lacks a field of its type, is
refused; a message too long for one datagram has its text cut and stays whole JSON. The channel's
end to end defence (who may send them) is tests/end_to_end/test_channel.py's."""

import json

import pytest

from memory_regression.channel.messages import (MESSAGE_LIMIT, Abort, Bound, End, Hello, ScenarioInfo, Start,
                                                StoreDescription, decode, encode)

STORE = StoreDescription("s.py", 3, ["core"], "role, content", {"gpt-4o": "o200k_base"}, "limit=20", ["observed"], [],
                         {"store_params": "limit=max_messages"})
INFO = ScenarioInfo("test_x", "core", "N=5", ["count-window"], ["atomic-window"], "")


@pytest.mark.parametrize("message", [
    Hello(4242), Bound(STORE), Bound(StoreDescription(None, None, [], "", {}, "", [], [], {})),
    Abort("usage error", "no RediSearch"), Start("suite/test_core.py::test_x", INFO), End("suite/test_core.py::test_x"),
], ids=lambda message: message.kind)
def test_every_kind_goes_over_the_wire_and_back(message):
    assert decode(encode("gw1", message)) == ("gw1", message)


@pytest.mark.parametrize("data", [
    b"not json", b"[1, 2]", b'{"kind": "hello", "pid": 1}',                       # no worker
    b'{"kind": "bye", "worker": "gw0"}',                                           # no such kind
    b'{"kind": "hello", "worker": "gw0"}',                                         # no pid
    b'{"kind": "hello", "worker": "gw0", "pid": "1"}',                              # a pid that is no int
    b'{"kind": "hello", "worker": "gw0", "pid": true}',
    b'{"kind": "abort", "worker": "gw0", "status": "passed"}',                     # no message
    b'{"kind": "start", "worker": "gw0", "nodeid": "x", "scenario": []}',
    # a scenario or a store that is an object, but not of its fields and their types, all the way down
    b'{"kind": "start", "worker": "gw0", "nodeid": "x", "scenario": {"scenario": "t"}}',
    json.dumps({"kind": "start", "worker": "gw0", "nodeid": "x",
                "scenario": {**INFO.__dict__, "requires": ["core", 7]}}).encode(),
    json.dumps({"kind": "bound", "worker": "gw0", "store": {**STORE.__dict__, "line": "3"}}).encode(),
    json.dumps({"kind": "bound", "worker": "gw0", "store": {**STORE.__dict__, "counters": {"gpt-4o": 1}}}).encode(),
    json.dumps({"kind": "bound", "worker": "gw0", "store": {**STORE.__dict__, "fixes": []}}).encode(),
])
def test_anything_else_is_refused(data):
    with pytest.raises(ValueError):
        decode(data)


def test_a_message_too_long_for_a_datagram_has_its_text_cut():
    data = encode("gw0", Abort("suite error", "Traceback ✓ " * 20_000))
    assert len(data) <= MESSAGE_LIMIT
    worker, message = decode(data)
    assert message.status == "suite error" and message.message.startswith("Traceback ✓ ")
    assert message.message.endswith(" [cut]") and json.loads(data)["worker"] == worker == "gw0"
