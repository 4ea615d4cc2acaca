"""redisvl's message history (``redisvl.extensions.message_history.MessageHistory``, the Redis LLM
memory, installed with langgraph-checkpoint-redis) runs with nothing of ours but options: one
history per session (``--store-params name=namespace,session_tag=session_id``: one index, named
after the scenario's namespace, one session tag per session) read through its ``messages``
(``--load-method messages``). Its failures are the library's own, each shown here with redisvl
alone, on Redis Stack:

- ``messages``, the whole history, is a query of at most 1,000 results, oldest first: a longer
  session loses its newest messages, which are the ones a model needs;
- ``clear()`` clears the index, so every session that shares it is emptied with its own;
- the session tag is a search index's TAG, which matches in any letter case: sessions whose ids
  differ only in case share a history;
- a message keeps its role, content and tool_call_id but not its tool_calls: an assistant's tool
  calls are gone, and the tool results after them answer nothing.
"""

from redisvl.extensions.message_history import MessageHistory


def history(redis_stack, session: str, name: str) -> MessageHistory:
    return MessageHistory(name, session_tag=session, redis_url=redis_stack.url())


def test_the_whole_history_is_the_oldest_thousand_messages(redis_stack):
    """What the no-silent-cap scenario finds: after 1,005 messages, messages holds the first 1,000."""
    long = history(redis_stack, "long", "cap")
    for number in range(1005):
        long.add_message({"role": "user", "content": f"message {number}"})
    contents = [message["content"] for message in long.messages]
    assert len(contents) == 1000 and "message 0" in contents and "message 1004" not in contents


def test_clear_empties_every_session_of_the_index(redis_stack):
    """What the clear scenarios and the stateful one find: clearing alice's history empties bob's."""
    alice, bob = history(redis_stack, "alice", "shared"), history(redis_stack, "bob", "shared")
    alice.add_message({"role": "user", "content": "alice's"})
    bob.add_message({"role": "user", "content": "bob's"})
    alice.clear()
    assert bob.messages == []


def test_an_assistants_tool_calls_are_not_kept(redis_stack):
    """What the tool-calls round trip finds: the tool result comes back, the call it answers does not."""
    calls = [{"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]
    turn = history(redis_stack, "tools", "tools")
    turn.add_message({"role": "assistant", "content": "", "tool_calls": calls})
    turn.add_message({"role": "tool", "content": "sunny", "tool_call_id": "call_1"})
    assistant, tool = turn.messages
    assert "tool_calls" not in assistant and tool["tool_call_id"] == "call_1"


def test_sessions_whose_ids_differ_only_in_case_share_a_history(redis_stack):
    """What test_every_session_id_keeps_its_own_history finds: ``Alice`` loads ``alice``'s message too."""
    lower, upper = history(redis_stack, "alice", "cases"), history(redis_stack, "Alice", "cases")
    lower.add_message({"role": "user", "content": "alice's"})
    upper.add_message({"role": "user", "content": "Alice's"})
    assert [message["content"] for message in upper.messages] == ["alice's", "Alice's"]
