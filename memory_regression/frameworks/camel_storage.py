"""CAMEL: a key-value storage (``BaseKeyValueStorage``; ``camel.storages.key_value_storages.redis:
RedisStorage`` among them) holds one conversation's memory records, built per conversation (its
``sid``). A ``ChatHistoryMemory`` writes each turn's records to it with ``save(records)``, reads them
all back with ``load()``, and empties it with ``clear()``: the suite calls the same three.

A message goes in as the record ``ChatHistoryBlock`` saves, ``MemoryRecord(message,
role_at_backend).to_dict()``: a ``BaseMessage`` of its role and content, and a tool call or a tool
result a ``FunctionCallingMessage`` (one call each: an assistant message with several calls is as many
records, and its text one more); records come back through CAMEL's own converters
(``MemoryRecord.from_dict``, ``to_openai_message``). A message's ``metadata`` is not carried (its
``meta_dict`` does not reach an OpenAI message), nor a tool result's ``name`` (stored, :data:`NO_NAME`
where it has none, as CAMEL requires one, and not read back): neither is expected back.

Named by its class (``--store camel.storages.key_value_storages.redis:RedisStorage``), the storage
is built from the contract's ``session_id`` and ``redis_url``, as its ``sid`` and ``url``. It runs its
async client on the event loop current where it is built (``asyncio.get_event_loop()``), as a
synchronous application's main thread has one: a thread with none gets one set first, as such a thread
would have (:func:`with_a_loop`).
"""

from __future__ import annotations

import asyncio
import inspect
import json
from typing import Any, Callable

from . import Framework, Methods, built_from_contract, subclass_of

BASE = "camel.storages.key_value_storages.base:BaseKeyValueStorage"
ROLES = {"user": "USER", "assistant": "ASSISTANT", "system": "SYSTEM", "tool": "FUNCTION"}
NO_NAME = "tool"   # the function name of a tool result that has none: CAMEL requires one (it is not read back)


def _record(role: str, message: Any) -> dict:
    from camel.memories import MemoryRecord
    from camel.types import OpenAIBackendRole
    return MemoryRecord(message=message, role_at_backend=getattr(OpenAIBackendRole, ROLES[role])).to_dict()


def encode(message: dict) -> list:
    from camel.messages import BaseMessage, FunctionCallingMessage
    from camel.types import RoleType

    role, content = message["role"], message["content"]
    kinds = {"assistant": RoleType.ASSISTANT, "tool": RoleType.ASSISTANT, "user": RoleType.USER}
    kind = kinds.get(role, RoleType.DEFAULT)
    if role == "tool":
        return [_record(role, FunctionCallingMessage(   # CAMEL refuses a result without a function name
            role_name=role, role_type=kind, meta_dict=None, content="", func_name=message.get("name") or NO_NAME,
            result=content, tool_call_id=message.get("tool_call_id")))]
    calls = message.get("tool_calls") or []
    records = [_record(role, BaseMessage(role_name=role, role_type=kind, meta_dict=None, content=content))
               ] if content or not calls else []
    return records + [_record(role, FunctionCallingMessage(
        role_name=role, role_type=kind, meta_dict=None, content="", func_name=call["function"]["name"],
        args=json.loads(call["function"]["arguments"] or "{}"), tool_call_id=call["id"])) for call in calls]


def decode(history: Any) -> list[dict]:
    from camel.memories import MemoryRecord
    return [record.to_openai_message() for record in map(MemoryRecord.from_dict, history)]


def with_a_loop(build: Callable[..., Any]) -> Callable[..., Any]:
    """``build``, called where the thread has a current event loop: one is set first where it has none."""
    def built(**values: Any) -> Any:
        try:
            asyncio.get_event_loop()
        except RuntimeError:   # none set in this thread (a thread's, or after asyncio.run)
            asyncio.set_event_loop(asyncio.new_event_loop())
        return build(**values)
    built.__signature__ = inspect.signature(build)   # type: ignore[attr-defined]
    return built


FRAMEWORK = Framework("CAMEL", "key-value storage", per_session=True, matches=lambda cls: subclass_of(cls, BASE),
                      methods=lambda cls: Methods("save", "load", "clear", append_takes_list=True),
                      encode=encode, decode=decode, message_type=None,
                      constructor=lambda cls: with_a_loop(built_from_contract(
                          cls, {"session_id": "sid", "redis_url": "url"})))
