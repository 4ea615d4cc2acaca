"""How messages travel to a store and back, as the binding found its append takes them."""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from enum import Enum
from typing import Any, Callable


class AppendForm(str, Enum):
    """What append takes besides a session id (none for a store built per session)."""

    ROLE_CONTENT = "(role, content)"
    MESSAGE = "(message)"
    MESSAGES = "([message, ...])"


@dataclass(frozen=True)
class MessageCodec:
    """How whole messages travel to a store and back. ``encode`` makes, from a chat-completions
    dict, what append takes (a list: one message may be several framework objects); ``decode``
    makes what load returned readable by :func:`normalize_history`."""

    name: str                             # the message type, as the shape names it
    encode: Callable[[dict], list]
    decode: Callable[[Any], Any]
    carries_fields: bool                  # tool calls, a tool result's id and name, and metadata travel in it


ROLE_AND_CONTENT = MessageCodec("role and content", lambda message: [message], lambda raw: raw, False)
DICTS = MessageCodec("dict", lambda message: [message], lambda raw: raw, True)

# the names a message class may give its content, by its constructor's parameters: those that take a list of parts
CONTENT_NAMES = ("content", "text", "contents", "parts")
LISTED_CONTENT = frozenset({"contents", "parts"})


def class_codec(cls: type) -> MessageCodec:
    """Whole messages built through ``cls``'s own constructor: ``cls(role=..., content=..., ...)``, its
    content under the first of :data:`CONTENT_NAMES` it takes (as a list of one for ``contents`` and
    ``parts``); the fields of :data:`MESSAGE_FIELDS` travel only if it takes them (or ``**kwargs``)."""
    try:
        parameters = inspect.signature(cls).parameters
    except (TypeError, ValueError):
        parameters = {}
    carries = (any(p.kind is p.VAR_KEYWORD for p in parameters.values())
               or all(name in parameters for name in ("tool_calls", "tool_call_id")))
    named = next((name for name in CONTENT_NAMES if name in parameters), "content")

    def encode(message: dict) -> list:
        fields = {k: v for k, v in message.items() if (carries or k == "role") and k != "content"}
        content = [message["content"]] if named in LISTED_CONTENT else message["content"]
        return [cls(**fields, **{named: content})]
    return MessageCodec(cls.__name__, encode, lambda raw: raw, carries)
