"""Google ADK: a session service (``BaseSessionService``; google-adk-redis's
``RedisMemorySessionService`` among them) holds an agent's sessions, one object for all of them,
each keyed by app, user and session id. A session is a list of events.

The suite drives it as ADK's ``Runner`` does, with no model, all calls async: append gets the
session (``get_session``, ``create_session`` when there is none, as a runner with
``auto_create_session`` does) and appends each message as an event (``append_event``), then
``flush``; load is the session's ``events``; clear is ``delete_session``. Every session is of one
app (:data:`APP`) and of the user the contract's ``user_id`` names (:class:`~.ForUser`): the service
is a store with tenants.

A message becomes an event as a runner writes them: a user message is authored by ``user``, its
content ``google.genai`` ``Content(role="user")`` with a text part; an assistant message is the
agent's (:data:`AGENT`), ``role="model"``, its text and a ``function_call`` part per tool call; a
tool result is the agent's too, a ``function_response`` part (``{"result": content}``) in
``role="user"``. A session holds no system message (an ADK agent's system prompt is its
instruction): a system message goes in as user text, and is expected back as what it went in as.
A message's ``metadata`` is its event's ``custom_metadata``.

Named by its class (``--store google_adk_redis:RedisMemorySessionService``), the service is built
from the contract's ``redis_url`` and ``ttl``, as its ``uri`` and ``expire``; adk-session-services'
(``--store adk_session_services.redis_session:RedisSessionService``) from ``redis_url`` and
``namespace``, as its ``redis_url`` and ``prefix`` (:data:`NAMES`).
"""

from __future__ import annotations

import json
from typing import Any

from . import Framework, ForUser, Methods, built_from_contract, for_user, subclass_of

BASE = "google.adk.sessions.base_session_service:BaseSessionService"
APP, USER, AGENT = "memory_regression", "user", "assistant_agent"


def encode(message: dict) -> list:
    from google.adk.events.event import Event
    from google.genai import types

    role, content = message["role"], message["content"]
    metadata = {"custom_metadata": message["metadata"]} if message.get("metadata") else {}
    if role == "tool":
        response = types.FunctionResponse(id=message.get("tool_call_id"), name=message.get("name"),
                                           response={"result": content})
        return [Event(author=AGENT, content=types.Content(role="user", parts=[types.Part(function_response=response)]),
                      **metadata)]
    if role != "assistant":
        return [Event(author=USER, content=types.Content(role="user", parts=[types.Part(text=content)]), **metadata)]
    calls = message.get("tool_calls") or []
    parts = [types.Part(text=content)] if content or not calls else []
    parts += [types.Part(function_call=types.FunctionCall(id=call["id"], name=call["function"]["name"],
                                                          args=json.loads(call["function"]["arguments"] or "{}")))
              for call in calls]
    return [Event(author=AGENT, content=types.Content(role="model", parts=parts), **metadata)]


def _as_messages(event: Any) -> list[dict]:
    parts = event.content.parts or [] if event.content else []
    metadata = {"metadata": event.custom_metadata} if event.custom_metadata else {}
    responses = [part.function_response for part in parts if part.function_response]
    if responses:
        return [{"role": "tool", "content": response.response.get("result"), "tool_call_id": response.id,
                 **({"name": response.name} if response.name else {}), **metadata} for response in responses]
    text = "".join(part.text for part in parts if part.text is not None)
    calls = [{"id": part.function_call.id, "type": "function",
              "function": {"name": part.function_call.name, "arguments": json.dumps(part.function_call.args or {})}}
             for part in parts if part.function_call]
    role = "assistant" if event.content and event.content.role == "model" else "user"
    return [{"role": role, "content": text, **({"tool_calls": calls} if calls else {}), **metadata}]


def decode(history: Any) -> list[dict]:
    return [message for event in history for message in _as_messages(event)]


# the contract's parameters under the services' own names: google-adk-redis' (uri, expire) and adk-session-services'
# (redis_url, and its key prefix)
NAMES = {"redis_url": ("uri", "redis_url"), "ttl": "expire", "namespace": "prefix"}
# each instance its own client, as each replica of a service has (RedisMemorySessionService shares one
# redis.asyncio client per URI in the process by default, which one event loop uses)
SHARE_CACHE = {"share_cache": False}


class SessionServiceDriver:
    """A session service driven as ADK's runner drives it, for one user (:class:`ForUser`)."""

    def __init__(self, target: ForUser):
        self.service, self.user = target.service, target.user_id

    async def _session(self, session_id: str) -> Any:
        return await self.service.get_session(app_name=APP, user_id=self.user, session_id=session_id)

    async def append(self, session_id: str, events: list) -> None:
        from google.adk.errors.already_exists_error import AlreadyExistsError

        session = await self._session(session_id)
        if session is None:
            try:
                session = await self.service.create_session(app_name=APP, user_id=self.user, session_id=session_id)
            except AlreadyExistsError:   # another writer's first message created it meanwhile
                session = await self._session(session_id)
                if session is None:   # what exists is another id's: the service keyed this one otherwise
                    raise
        for event in events:
            await self.service.append_event(session, event)
        await self.service.flush()

    async def load(self, session_id: str) -> list:
        session = await self._session(session_id)
        return list(session.events) if session is not None else []

    async def clear(self, session_id: str) -> None:
        await self.service.delete_session(app_name=APP, user_id=self.user, session_id=session_id)


FRAMEWORK = Framework("Google ADK", "session service", per_session=False, matches=lambda cls: subclass_of(cls, BASE),
                      methods=lambda cls: Methods("append", "load", "clear", append_takes_list=True),
                      encode=encode, decode=decode, driver=lambda cls: SessionServiceDriver,
                      constructor=lambda cls: for_user(built_from_contract(cls, NAMES, fixed=SHARE_CACHE)))
