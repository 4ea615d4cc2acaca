"""LangChain: any ``BaseChatMessageHistory`` (langchain-core), one object per session, built with
its ``session_id`` (langchain-community's ``RedisChatMessageHistory`` among them).

Messages go in as LangChain's own message objects (``convert_to_messages``: a dict with
``tool_calls`` becomes an ``AIMessage`` with them, a ``tool`` message a ``ToolMessage``; other keys,
such as ``metadata``, go to ``additional_kwargs``), and come back through
``convert_to_openai_messages``, with ``additional_kwargs`` merged back. A history that implements
only the async methods is driven through ``aadd_messages``/``aget_messages``/``aclear``.
"""

from __future__ import annotations

from typing import Any

from . import Framework, Methods, overrides, subclass_of

BASE = "langchain_core.chat_history:BaseChatMessageHistory"


def methods(cls: type) -> Methods:
    if any(overrides(cls, BASE, name) for name in ("add_message", "add_messages")) or not any(
            overrides(cls, BASE, name) for name in ("aadd_messages", "aget_messages")):
        return Methods("add_message", "messages", "clear", append_takes_list=False)
    return Methods("aadd_messages", "aget_messages", "aclear", append_takes_list=True)


def encode(message: dict) -> list:
    from langchain_core.messages import convert_to_messages
    return convert_to_messages([message])


def decode(history: Any) -> list[dict]:
    from langchain_core.messages import BaseMessage, convert_to_openai_messages
    history = list(history)
    converted = convert_to_openai_messages(history)
    return [{**{key: value for key, value in original.additional_kwargs.items() if key not in message},
             **message} if isinstance(original, BaseMessage) else message
            for original, message in zip(history, converted)]


FRAMEWORK = Framework("LangChain", "BaseChatMessageHistory", per_session=True,
                      matches=lambda cls: subclass_of(cls, BASE), methods=methods, encode=encode, decode=decode,
                      message_type="langchain_core.messages:BaseMessage")
