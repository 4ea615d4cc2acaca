"""Strands Agents: a session manager over a session repository (``RepositorySessionManager``; the
Redis one of strands-redis-session-manager and the Valkey one of strands-valkey-session-manager among
them) keeps one session's agents and their messages, each message under its index. It is built per
session, and creates the session when it finds none.

The suite drives it as an agent holding it does, with no model: each store instance is a Strands
``Agent`` (id :data:`AGENT`) built with the manager, which initialises it from the session (its
messages, and the index of the latest); an append adds each message to the agent's messages and
calls the manager's ``append_message``, as the agent's ``MessageAddedEvent`` hook does (the index
after the agent's latest); a load is what an agent restored from the session holds (the
repository's ``list_messages``); clear is ``delete_session``, after which the instance's next append
starts the conversation anew, as an application does: a new manager over the same repository (which
creates the session), and a new agent.

A message is Strands' (Bedrock's) ``{"role", "content": [blocks]}``: a text block for its content,
a ``toolUse`` block per tool call (its ``input`` the arguments' JSON), and a tool result a user
message with a ``toolResult`` block (``toolUseId``, ``status`` success, its content a text block).
A session keeps no system message (an agent's system prompt is not history), so a system message
goes in as user text and is expected back as that; a tool result keeps no ``name``, and no message
its ``metadata``: neither is expected back.
"""

from __future__ import annotations

import json
from typing import Any

from . import Framework, Methods, subclass_of

BASE = "strands.session.repository_session_manager:RepositorySessionManager"
AGENT = "default"


def encode(message: dict) -> list:
    role, content = message["role"], message["content"]
    if role == "tool":
        result = {"toolUseId": message.get("tool_call_id") or "", "status": "success", "content": [{"text": content}]}
        return [{"role": "user", "content": [{"toolResult": result}]}]
    blocks = [{"text": content}] if content or not message.get("tool_calls") else []
    blocks += [{"toolUse": {"toolUseId": call["id"], "name": call["function"]["name"],
                            "input": json.loads(call["function"]["arguments"] or "{}")}}
               for call in message.get("tool_calls") or []]
    return [{"role": "assistant" if role == "assistant" else "user", "content": blocks}]


def _as_dict(message: dict) -> dict:
    blocks = message["content"]
    results = [block["toolResult"] for block in blocks if "toolResult" in block]
    if results:
        text = "".join(part.get("text", "") for part in results[0].get("content", []))
        return {"role": "tool", "content": text, "tool_call_id": results[0]["toolUseId"]}
    out = {"role": message["role"], "content": "".join(block["text"] for block in blocks if "text" in block)}
    calls = [{"id": block["toolUse"]["toolUseId"], "type": "function",
              "function": {"name": block["toolUse"]["name"], "arguments": json.dumps(block["toolUse"]["input"])}}
             for block in blocks if "toolUse" in block]
    return {**out, "tool_calls": calls} if calls else out


def decode(history: Any) -> list[dict]:
    return [_as_dict(message) for message in history]


class SessionDriver:
    """A session manager driven as the Strands agent holding it drives it."""

    def __init__(self, manager: Any):
        self.repository, self.session_id = manager.session_repository, manager.session_id
        self.manager, self.agent = manager, self._agent(manager)   # None once cleared, until the next append

    @staticmethod
    def _agent(manager: Any) -> Any:
        from strands import Agent
        from strands.models.model import Model

        class NoModel(Model):   # an agent needs a model; this one says it is not to be called
            def update_config(self, **config: Any) -> None: ...
            def get_config(self) -> Any: return {}
            def structured_output(self, *args: Any, **kwargs: Any) -> Any: raise NotImplementedError("no model")
            def stream(self, *args: Any, **kwargs: Any) -> Any: raise NotImplementedError("no model")
        return Agent(model=NoModel(), agent_id=AGENT, session_manager=manager, callback_handler=None)

    def append(self, messages: list) -> None:
        if self.agent is None:   # the conversation starts anew
            from strands.session.repository_session_manager import RepositorySessionManager

            self.manager = RepositorySessionManager(session_id=self.session_id, session_repository=self.repository)
            self.agent = self._agent(self.manager)
        for message in messages:
            self.agent.messages.append(message)
            self.manager.append_message(message, self.agent)

    def load(self) -> list:
        if self.repository.read_agent(self.session_id, AGENT) is None:
            return []
        return [each.to_message() for each in self.repository.list_messages(self.session_id, AGENT)]

    def clear(self) -> None:
        self.repository.delete_session(self.session_id)
        self.agent = None


FRAMEWORK = Framework("Strands", "session manager", per_session=True, matches=lambda cls: subclass_of(cls, BASE),
                      methods=lambda cls: Methods("append", "load", "clear", append_takes_list=True),
                      encode=encode, decode=decode, driver=lambda cls: SessionDriver)
