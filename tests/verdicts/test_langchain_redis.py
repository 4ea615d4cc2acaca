"""The Redis history of LangChain's Redis package (``langchain_redis.RedisChatMessageHistory``,
langchain-redis; deprecated there in 0.2.6 for LangGraph's checkpointers, which the verdicts table
runs too) runs with nothing of ours but ``--store``, on Redis Stack. Its failures are the library's
own, each shown here with langchain-redis alone:

- building a history whose search index exists already raises AttributeError under redis-py 8.1
  (the suite's): it reads FT.INFO's ``index_definition`` as a list, which redis-py 8.1 returns as a
  dict. Every history but the first on a server fails to be built: a second session, a second
  worker, a restart of the application;
- each message is a key of its own that gets the TTL when written, and later appends do not
  refresh it: the oldest messages of an active session expire;
- an assistant's tool calls are not stored: the tool results after them answer nothing.
"""

import pytest
import redis
from langchain_core.messages import AIMessage, HumanMessage
from langchain_redis import RedisChatMessageHistory


def history(redis_stack, session: str, **options) -> RedisChatMessageHistory:
    return RedisChatMessageHistory(session, redis_client=redis.Redis.from_url(redis_stack.url()), **options)


def test_a_history_whose_index_exists_cannot_be_built(redis_stack):
    history(redis_stack, "first", index_name="idx:built")
    with pytest.raises(AttributeError, match="'dict' object has no attribute 'index'"):
        history(redis_stack, "second", index_name="idx:built")


def test_an_append_leaves_the_ttl_of_earlier_messages_as_it_was(redis_stack):
    session = history(redis_stack, "active", index_name="idx:ttl", key_prefix="ttl:", ttl=60)
    session.add_message(HumanMessage("first"))
    client = session.redis_client
    [first] = client.keys("ttl:*")
    client.pexpire(first, 5000)   # time passing, as the expiry scenario's appends every 0.4 s see it
    session.add_message(HumanMessage("second"))
    assert client.pttl(first) <= 5000 and len(client.keys("ttl:*")) == 2


def test_an_assistants_tool_calls_are_not_kept(redis_stack):
    turn = history(redis_stack, "tools", index_name="idx:tools", key_prefix="tools:")
    turn.add_message(AIMessage("", tool_calls=[{"id": "call_1", "name": "get_weather", "args": {"city": "Oslo"}}]))
    [assistant] = turn.messages
    assert assistant.type == "ai" and assistant.tool_calls == []
