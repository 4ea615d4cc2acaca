"""Google ADK's Redis session service (google-adk-redis's ``RedisMemorySessionService``, pinned in the
test extras with google-adk) runs with nothing of ours but ``--store``: driven as ADK's runner drives
it, its failures are the library's own, each shown here with ADK alone:

- its append is a watched transaction retried on ``WatchError``, and redis-py raises ``WatchError``
  also when the connection died during EXEC, after the transaction ran: an append whose reply was
  lost is stored twice;
- it builds its own redis.asyncio client, whose pooled connections fail once the server has closed
  them (redis-py 8.1, redis/redis-py#4252): after its connections were killed, or the server
  restarted, its next call raises;
- each append writes the whole session again, so appends slow as it grows.

A session has no system message (an ADK agent's system prompt is its instruction): the round trip
expects system messages back as the user text they went in as, and says so."""

import asyncio

import redis
from google.adk.errors.already_exists_error import AlreadyExistsError
from google.adk.events.event import Event
from google.genai import types
from google_adk_redis import RedisMemorySessionService

from memory_regression.harness.proxy import ReplyDroppingProxy
from tests.stores.libraries import ADK

ROUND_TRIP = "test_round_trip_keeps_role_content_and_order"


def test_system_messages_come_back_as_user_text_and_the_round_trip_says_so(run_suite):
    result = run_suite("--store", ADK, "-k", ROUND_TRIP)
    assert result.exit_code == 0, result.output
    [round_trip] = [r for r in result.summary["results"] if r["scenario"] == ROUND_TRIP]
    assert round_trip["findings"] == ["4 of the 14 messages appended are expected back with another role, as the "
                                      "Google ADK session service's messages carry them: system as user"], round_trip


def said(text):
    return Event(author="user", content=types.Content(role="user", parts=[types.Part(text=text)]))


async def texts(service, session_id):
    session = await service.get_session(app_name="app", user_id="u", session_id=session_id)
    return [event.content.parts[0].text for event in session.events]


def test_an_append_whose_reply_was_lost_is_stored_twice_with_the_library_alone(redis_server):
    """test_store_neither_duplicates_nor_loses_a_message_whose_reply_was_lost: the proxy lets the
    EXEC of an append run and drops its reply; the append returns, and the session holds it twice."""
    async def lose_one_reply(proxy):
        service = RedisMemorySessionService(uri=proxy.url_for(redis_server.url()), share_cache=False)
        session = await service.create_session(app_name="app", user_id="u", session_id="lossy")
        proxy.arm()
        await service.append_event(session, said("hello"))
        assert proxy.disarm() == "EXEC (MULTI: SET, EXPIRE)"
        return await texts(service, "lossy")

    with ReplyDroppingProxy.to(redis_server.url()) as proxy:
        assert asyncio.run(lose_one_reply(proxy)) == ["hello", "hello"]


def test_the_next_call_after_the_connections_were_killed_raises_with_the_library_alone(redis_server):
    """test_store_reconnects_after_its_connections_are_killed and test_a_restart_between_turns_loses_nothing:
    once the server closed its idle connection, the service's next call raises ConnectionError."""
    async def killed_between_turns():
        service = RedisMemorySessionService(uri=redis_server.url(), share_cache=False)
        session = await service.create_session(app_name="app", user_id="u", session_id="killed")
        await service.append_event(session, said("before"))
        redis_server.client().client_kill_filter(_type="normal", skipme=True)
        try:
            await service.append_event(session, said("after"))
        except redis.ConnectionError as exc:
            return str(exc)
        return None

    assert asyncio.run(killed_between_turns()) == "Connection closed by server."


def test_each_append_rewrites_the_whole_session_with_the_library_alone(redis_server):
    """The steady-appends warnings: what one append sends the server grows with the session (it
    writes the whole session again): the 100th of equal appends sends over five times the 10th."""
    client = redis_server.client()

    def received():
        return client.info("stats")["total_net_input_bytes"]

    async def appends():
        service = RedisMemorySessionService(uri=redis_server.url(), share_cache=False)
        session = await service.create_session(app_name="app", user_id="u", session_id="growing")
        sent = {}
        for count in range(1, 101):
            before = received()
            await service.append_event(session, said("x" * 100))
            if count in (10, 100):
                sent[count] = received() - before
        return sent

    sent = asyncio.run(appends())
    assert sent[100] > 5 * sent[10], sent


def test_a_padded_session_id_is_stripped_where_it_is_created_and_not_where_it_is_read_with_the_library_alone(
        redis_server):
    """test_every_session_id_keeps_its_own_history: ``create_session(' s2 ')`` keys the session
    ``s2`` (it strips the id), ``get_session(' s2 ')`` looks for ``' s2 '`` and finds nothing: the
    conversation is lost to the caller that keeps the id it gave, and it is session ``s2``'s; a second
    ``create_session(' s2 ')`` raises AlreadyExistsError."""
    async def pad():
        service = RedisMemorySessionService(uri=redis_server.url(), share_cache=False)
        session = await service.create_session(app_name="app", user_id="u", session_id=" s2 ")
        await service.append_event(session, said("hello"))
        padded = await service.get_session(app_name="app", user_id="u", session_id=" s2 ")
        try:
            await service.create_session(app_name="app", user_id="u", session_id=" s2 ")
            again = None
        except AlreadyExistsError as exc:
            again = exc
        return session.id, padded, await texts(service, "s2"), again

    created, padded, stripped, again = asyncio.run(pad())
    assert (created, padded, stripped) == ("s2", None, ["hello"]) and again is not None


def test_a_user_and_a_session_joined_with_a_colon_meet_another_pair_with_the_library_alone(redis_server):
    """test_tenants_keep_their_own_conversations: the service keys a session ``app:user:session``, so user
    ``bob``'s session ``x:s1`` is user ``bob:x``'s session ``s1``: each reads the other's conversation."""
    async def join():
        service = RedisMemorySessionService(uri=redis_server.url(), share_cache=False)
        session = await service.create_session(app_name="app", user_id="bob", session_id="x:s1")
        await service.append_event(session, said("bob's"))
        other = await service.get_session(app_name="app", user_id="bob:x", session_id="s1")
        return [event.content.parts[0].text for event in other.events]

    assert asyncio.run(join()) == ["bob's"]
