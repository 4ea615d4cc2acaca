"""Microsoft Agent Framework: a history provider (``HistoryProvider``; agent-framework-redis'
``RedisHistoryProvider`` among them) keeps every session's messages, one object for all of them.

An agent's run calls its hooks; the suite calls what they call, with no model: append is
``save_messages(session_id, [message])``, as ``after_run`` saves a turn's messages; load is
``get_messages(session_id)``, as ``before_run`` reads the history; clear is ``clear(session_id)``.
All three are async.

Messages go in as the framework's own ``Message(role, contents)``: a text ``Content`` for the
content, a ``function_call`` content for each tool call, and a tool result as a ``function_result``
content (its ``call_id`` the message's ``tool_call_id``, its ``result`` the content). A message's
``metadata`` is its ``additional_properties``. They come back read the same way; a tool result keeps
no ``name`` (its content has none), which is never blamed on the store.

Named by its class (``--store agent_framework_redis:RedisHistoryProvider``), the provider is built
from the contract's client (``redis.asyncio``, as ``redis_client``) or ``redis_url``, ``namespace``
(its ``key_prefix``, which it encodes into the key's first segment), ``max_messages`` and
``user_id`` (its ``tenant_id``), for one application, :data:`APPLICATION` (its scoped keys require
one). It refuses a client and a URL together: the suite gives it the client
(:mod:`..connection_choice`).
"""

from __future__ import annotations

import json
from typing import Any

from . import Framework, Methods, built_from_contract, subclass_of

BASE = "agent_framework:HistoryProvider"
APPLICATION = "memory-regression"   # the application whose sessions the provider keeps (its key's scope)
NAMES = {"redis": "redis_client", "redis_url": "redis_url", "namespace": "key_prefix", "max_messages": "max_messages",
         "user_id": "tenant_id"}


def encode(message: dict) -> list:
    from agent_framework import Content, Message

    extra = {"additional_properties": dict(message["metadata"])} if message.get("metadata") else {}
    if message["role"] == "tool":
        contents = [Content.from_function_result(call_id=message.get("tool_call_id") or "", result=message["content"])]
        return [Message("tool", contents, **extra)]
    calls = message.get("tool_calls") or []
    contents = [Content.from_text(message["content"])] if message["content"] or not calls else []
    contents += [Content.from_function_call(call_id=call["id"], name=call["function"]["name"],
                                            arguments=call["function"]["arguments"]) for call in calls]
    return [Message(message["role"], contents, **extra)]


def _as_dict(message: Any) -> dict:
    kinds = {content.type for content in message.contents}
    out: dict[str, Any] = {"role": message.role}
    if "function_result" in kinds:
        result = next(content for content in message.contents if content.type == "function_result")
        out.update(content=result.result if isinstance(result.result, str) else json.dumps(result.result),
                   tool_call_id=result.call_id)
    else:
        out["content"] = "".join(content.text or "" for content in message.contents if content.type == "text")
        calls = [{"id": content.call_id, "type": "function",
                  "function": {"name": content.name, "arguments": content.arguments if isinstance(
                      content.arguments, str) else json.dumps(content.arguments)}}
                 for content in message.contents if content.type == "function_call"]
        if calls:
            out["tool_calls"] = calls
    if message.additional_properties:
        out["metadata"] = dict(message.additional_properties)
    return out


def decode(history: Any) -> list[dict]:
    return [_as_dict(message) for message in history]


FRAMEWORK = Framework("Agent Framework", "HistoryProvider", per_session=False,
                      matches=lambda cls: subclass_of(cls, BASE),
                      methods=lambda cls: Methods("save_messages", "get_messages", "clear", append_takes_list=True),
                      encode=encode, decode=decode, message_type="agent_framework:Message",
                      constructor=lambda cls: built_from_contract(cls, NAMES, fixed={"application_id": APPLICATION}))
