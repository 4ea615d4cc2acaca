"""OpenAI Agents: the ``Session`` protocol (openai-agents), one object per session, built with its
``session_id`` (``agents.extensions.memory.RedisSession`` among them), all methods async.

A session holds Responses-API input items, not chat messages: a chat message is appended as its
items (an assistant message with ``tool_calls`` is its text, if any, then one ``function_call`` item
per call; a ``tool`` message is a ``function_call_output``), in one ``add_items`` call, and the
history is read back through the library's own ``Converter.items_to_messages``.
"""

from __future__ import annotations

from typing import Any

from . import Framework, Methods, subclass_of

BASE = "agents.memory.session:SessionABC"
PROTOCOL_METHODS = ("add_items", "get_items", "pop_item", "clear_session")


def matches(cls: type) -> bool:
    return subclass_of(cls, BASE) or all(callable(getattr(cls, name, None)) for name in PROTOCOL_METHODS)


def encode(message: dict) -> list:
    role, content = message["role"], message["content"]
    if role == "tool":
        return [{"type": "function_call_output", "call_id": message["tool_call_id"], "output": content}]
    calls = message.get("tool_calls") or []
    items = [{"role": role, "content": content}] if content or not calls else []
    return items + [{"type": "function_call", "call_id": call["id"], "name": call["function"]["name"],
                     "arguments": call["function"]["arguments"]} for call in calls]


def decode(history: Any) -> list[dict]:
    from agents.models.chatcmpl_converter import Converter
    return list(Converter.items_to_messages(list(history)))


FRAMEWORK = Framework("OpenAI Agents", "Session", per_session=True, matches=matches,
                      methods=lambda cls: Methods("add_items", "get_items", "clear_session",
                                                  append_takes_list=True),
                      encode=encode, decode=decode)
