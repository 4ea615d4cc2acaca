"""Redis' agent-memory-server: a service over Redis whose working memory keeps each session's messages,
reached through its client, agent-memory-client's ``MemoryAPIClient``, one object for all sessions.
The store is the service: the suite reaches it by the URL ``--service-url`` gives (the contract's
``service_url``), and ``--redis`` should name the Redis the service uses, so that what the scenarios
read and observe of the server is what the service wrote.

The suite drives the client as an agent does, with no model, all calls async: append is
``append_messages_to_working_memory(session_id, [message])``, load is the ``messages`` of
``get_working_memory(session_id)`` (read only: a session the service does not know is empty; its
``get_or_create_working_memory`` would write one), clear is ``delete_working_memory(session_id)``.
Each call names the scenario's namespace (the client's ``default_namespace``) and the user the
contract's ``user_id`` names, where it names one (:class:`~.ForUser`, optional: a session of no user
is the service's default): the service is a store with tenants.

The service summarises a session with a model once its messages pass about 70% of the context window
it is given; the suite calls no model, so every call gives the window :data:`WINDOW`, wide enough
that it never does (summarisation is not judged). A message is ``{"role", "content"}``, as the
service's ``MemoryMessage`` keeps it: tool calls, a tool result's call id and name, and metadata are
not carried, and not expected back.

Named by its class (``--store agent_memory_client:MemoryAPIClient``), the client is built from the
contract's ``service_url`` and ``namespace`` (:func:`client`).
"""

from __future__ import annotations

import warnings
from typing import Any

from . import Framework, ForUser, Methods, for_user, subclass_of

BASE = "agent_memory_client.client:MemoryAPIClient"
WINDOW = 10_000_000   # tokens: the service summarises past about 70% of the window a call gives


def encode(message: dict) -> list:
    return [{"role": message["role"], "content": message["content"]}]


def decode(history: Any) -> list[dict]:
    """The service's ``MemoryMessage`` objects (or the dicts :func:`encode` makes) as role and content."""
    return [{"role": message["role"], "content": message["content"]} if isinstance(message, dict)
            else {"role": message.role, "content": message.content} for message in history]


def constructor(cls: type) -> Any:
    """A factory of ``cls`` (the client) taking the contract's ``service_url`` and ``namespace``, and
    ``user_id`` for the driver."""
    def client(*, service_url: str, namespace: str) -> Any:
        from agent_memory_client import MemoryClientConfig
        return cls(MemoryClientConfig(base_url=service_url, default_namespace=namespace,
                                      default_context_window_max=WINDOW))
    client.__annotations__["return"] = cls
    return for_user(client, optional=True)


class WorkingMemoryDriver:
    """The client driven as an agent drives it, for one user (:class:`ForUser`; None: no user)."""

    def __init__(self, target: ForUser):
        self.client, self.user = target.service, target.user_id

    async def append(self, session_id: str, messages: list) -> None:
        await self.client.append_messages_to_working_memory(session_id, messages, user_id=self.user,
                                                            context_window_max=WINDOW)

    async def load(self, session_id: str) -> list:
        from agent_memory_client.exceptions import MemoryNotFoundError

        try:
            with warnings.catch_warnings():   # deprecated for get_or_create_working_memory, which writes
                warnings.simplefilter("ignore", DeprecationWarning)
                memory = await self.client.get_working_memory(session_id, user_id=self.user)
        except MemoryNotFoundError:
            return []
        return list(memory.messages)

    async def clear(self, session_id: str) -> None:
        await self.client.delete_working_memory(session_id, user_id=self.user)

    async def close(self) -> None:
        await self.client.close()


FRAMEWORK = Framework("agent-memory-server", "working memory", per_session=False,
                      matches=lambda cls: subclass_of(cls, BASE),
                      methods=lambda cls: Methods("append", "load", "clear", append_takes_list=True),
                      encode=encode, decode=decode, driver=lambda cls: WorkingMemoryDriver, constructor=constructor)
