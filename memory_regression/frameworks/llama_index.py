"""LlamaIndex: any ``BaseChatStore`` (llama-index-core), one object for every session, keyed per
call (llama-index-storage-chat-store-redis' ``RedisChatStore`` among them).

Messages go in as ``ChatMessage`` objects; every key but ``role`` and ``content`` (``tool_calls``,
``tool_call_id``, ``name``, ``metadata``) goes to ``additional_kwargs``, where llama-index's OpenAI
integration looks for tool calls. Reading back takes the role enum's value and the text blocks'
text, and merges ``additional_kwargs`` back.
"""

from __future__ import annotations

from typing import Any

from . import Framework, Methods, subclass_of

BASE = "llama_index.core.storage.chat_store.base:BaseChatStore"


def encode(message: dict) -> list:
    from llama_index.core.base.llms.types import ChatMessage
    extra = {key: value for key, value in message.items() if key not in ("role", "content")}
    return [ChatMessage(role=message["role"], content=message["content"], additional_kwargs=extra)]


def decode(history: Any) -> list[dict]:
    return [{**getattr(message, "additional_kwargs", {}), "role": message.role, "content": message.content}
            for message in history]


FRAMEWORK = Framework("LlamaIndex", "BaseChatStore", per_session=False,
                      matches=lambda cls: subclass_of(cls, BASE),
                      methods=lambda cls: Methods("add_message", "get_messages", "delete_messages",
                                                  append_takes_list=False),
                      encode=encode, decode=decode, message_type="llama_index.core.base.llms.types:ChatMessage")
