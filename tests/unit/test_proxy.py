"""The reply-dropping proxy of the lost-reply scenario: where it finds the end of a command and of a
reply (RESP2 and RESP3), and what it drops on a real server."""

import asyncio
import socket

import pytest
import redis
import redis.asyncio

from memory_regression.harness.proxy import ProtocolError, ReplyDroppingProxy, command_end, reply_end

REPLIES = [
    (b"+OK\r\n", "simple string"),
    (b"-ERR wrong\r\n", "error"),
    (b":42\r\n", "integer"),
    (b"$5\r\nhello\r\n", "bulk string"),
    (b"$0\r\n\r\n", "empty bulk string"),
    (b"$4\r\na\r\nb\r\n", "bulk string holding CRLF"),
    (b"$-1\r\n", "RESP2 null bulk"),
    (b"*-1\r\n", "RESP2 null array"),
    (b"*0\r\n", "empty array"),
    (b"*3\r\n:1\r\n$3\r\nfoo\r\n*2\r\n+a\r\n$-1\r\n", "nested array"),
    (b"*4\r\n:3\r\n+OK\r\n:1\r\n*2\r\n$1\r\na\r\n$1\r\nb\r\n", "EXEC's reply to RPUSH, LTRIM, EXPIRE, LRANGE"),
    (b"_\r\n", "RESP3 null"),
    (b",3.14\r\n", "double"),
    (b"#t\r\n", "boolean"),
    (b"(3492890328409238509324850943850943825024385\r\n", "big number"),
    (b"!21\r\nSYNTAX invalid syntax\r\n", "blob error"),
    (b"=15\r\ntxt:Some string\r\n", "verbatim string"),
    (b"%2\r\n+first\r\n:1\r\n+second\r\n*1\r\n:2\r\n", "map"),
    (b"~2\r\n+a\r\n+b\r\n", "set"),
    (b"|1\r\n+key-popularity\r\n%1\r\n$1\r\na\r\n,0.19\r\n*2\r\n:2039123\r\n:9543892\r\n", "attribute, then its reply"),
]


@pytest.mark.parametrize("reply", [r for r, _ in REPLIES], ids=[name for _, name in REPLIES])
def test_a_reply_ends_where_it_ends_and_not_before(reply):
    assert reply_end(reply) == (len(reply), False)
    assert all(reply_end(reply[:cut]) is None for cut in range(len(reply))), "a prefix taken for a whole reply"


def test_pipelined_replies_are_found_one_after_another():
    stream = b"".join(reply for reply, _ in REPLIES)
    ends, pos = [], 0
    while (found := reply_end(stream, pos)) is not None:
        pos = found[0]
        ends.append(pos)
    assert len(ends) == len(REPLIES) and pos == len(stream)


def test_a_push_is_told_apart_from_a_reply():
    push = b">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n"
    assert reply_end(push) == (len(push), True)
    assert reply_end(push + b":1\r\n", len(push)) == (len(push) + 4, False)


@pytest.mark.parametrize("garbage", [b"?what\r\n", b"$x\r\nab\r\n", b"*1x\r\n"])
def test_bytes_that_are_not_resp_raise(garbage):
    with pytest.raises(ProtocolError):
        reply_end(garbage)


def multibulk(*args: bytes) -> bytes:
    return b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(arg), arg) for arg in args)


def test_a_command_ends_after_its_last_argument_and_is_named():
    command = multibulk(b"rpush", b"key", b"x" * 100_000 + b"\r\n")
    assert command_end(command) == (len(command), "RPUSH")
    assert all(command_end(command[:cut]) is None for cut in range(0, len(command), 997))
    assert command_end(command[:-1]) is None


def test_inline_and_pipelined_commands():
    stream = b"PING\r\n\r\n" + multibulk(b"JSON.SET", b"k", b"$", b"{}") + b"get k\n"
    first = command_end(stream)
    assert first == (6, "PING")
    empty = command_end(stream, first[0])
    assert empty == (8, None)   # an empty inline line: the server ignores it and sends nothing
    json_set = command_end(stream, empty[0])
    assert json_set[1] == "JSON.SET"
    assert command_end(stream, json_set[0]) == (len(stream), "GET")


def test_a_command_argument_that_is_not_a_bulk_string_raises():
    with pytest.raises(ProtocolError):
        command_end(b"*1\r\n:1\r\n")


@pytest.fixture
def proxied(redis_server):
    admin = redis_server.client()
    with ReplyDroppingProxy.to(redis_server.url()) as proxy:
        yield proxy, proxy.url_for(redis_server.url()), admin
    admin.close()


@pytest.mark.parametrize("protocol", [2, 3])
def test_the_proxy_forwards_everything_until_it_is_armed(proxied, protocol):
    proxy, url, admin = proxied
    with redis.Redis.from_url(url, decode_responses=True, protocol=protocol) as client:
        client.rpush("k", "a", "b" * 200_000)
        with client.pipeline(transaction=True) as pipe:
            pipe.rpush("k", "c").lrange("k", 0, 0).hgetall("none")
            assert pipe.execute() == [3, ["a"], {}]
        assert client.lrange("k", 2, -1) == ["c"]
    assert proxy.disarm() is None and proxy.error is None


@pytest.mark.parametrize("protocol", [2, 3])
def test_an_armed_proxy_drops_the_reply_to_exec_after_the_transaction_ran(proxied, protocol):
    proxy, url, admin = proxied
    with redis.Redis.from_url(url, decode_responses=True, protocol=protocol) as client:
        client.get("warm")   # the connection is open: what follows is the transaction alone
        proxy.arm()
        client.lrange("k", 0, -1)   # a read: its reply comes through
        with pytest.raises(redis.ConnectionError, match="closed"):
            with client.pipeline(transaction=True) as pipe:
                pipe.rpush("k", "a").ltrim("k", -10, -1).expire("k", 60).execute()
        assert proxy.disarm() == "EXEC (MULTI: RPUSH, LTRIM, EXPIRE)"
        assert admin.lrange("k", 0, -1) == ["a"]   # executed, once
        assert client.rpush("k", "b") == 2   # a new connection, disarmed
    assert admin.lrange("k", 0, -1) == ["a", "b"]


def test_the_reply_dropped_is_the_write_s_within_a_pipeline(proxied):
    proxy, url, admin = proxied
    with redis.Redis.from_url(url, decode_responses=True) as client:
        proxy.arm()
        with pytest.raises(redis.ConnectionError):
            client.pipeline(transaction=False).get("k").xadd("s", {"f": "v"}).expire("s", 60).execute()
    assert proxy.disarm() == "XADD"
    assert admin.xlen("s") == 1 and admin.ttl("s") > 0   # what followed in the pipeline ran too


def test_a_discarded_transaction_leaves_the_proxy_armed(proxied):
    proxy, url, admin = proxied
    proxy.arm()
    with socket.create_connection(("127.0.0.1", proxy.port), timeout=5) as sock:
        sock.sendall(b"MULTI\r\nSET a 1\r\nDISCARD\r\n")
        replies = b""
        while replies.count(b"\r\n") < 3:
            replies += sock.recv(100)
        assert replies == b"+OK\r\n+QUEUED\r\n+OK\r\n"
        sock.sendall(multibulk(b"EVAL", b"return redis.call('SET', KEYS[1], '2')", b"1", b"a"))
        assert sock.recv(100) == b""   # the reply dropped, the connection closed
    assert proxy.disarm() == "EVAL" and admin.get("a") == "2"


def test_the_async_client_meets_the_same(proxied):
    proxy, url, admin = proxied

    async def append():
        client = redis.asyncio.Redis.from_url(url)
        try:
            await client.ping()
            proxy.arm()
            with pytest.raises(redis.ConnectionError):
                await client.rpush("k", "a")
        finally:
            await client.aclose()
    asyncio.run(append())
    assert proxy.disarm() == "RPUSH" and admin.lrange("k", 0, -1) == ["a"]


def test_a_url_through_the_proxy_keeps_credentials_database_and_options():
    with ReplyDroppingProxy("127.0.0.1", 1) as proxy:
        assert proxy.url_for("redis://user:pw@10.0.0.1:6380/3?socket_timeout=1") == (
            f"redis://user:pw@127.0.0.1:{proxy.port}/3?socket_timeout=1")
        assert proxy.url_for("redis://localhost/0") == f"redis://127.0.0.1:{proxy.port}/0"


def test_a_client_of_an_unreachable_server_is_refused_and_the_proxy_closes_in_time(redis_server):
    port = redis_server.port
    redis_server.stop()
    with ReplyDroppingProxy("127.0.0.1", port) as proxy:
        with redis.Redis(port=proxy.port, retry=None, socket_timeout=2) as client, pytest.raises(redis.ConnectionError):
            client.ping()
    assert all(not thread.is_alive() for thread in proxy._threads)
