"""agno: a database (``BaseDb``; ``agno.db.redis.RedisDb`` among them) is where an agent keeps its
sessions, one object for all of them. A session holds runs, and each run the messages it added.

The suite drives it as an agent's run stores its result, with no model: append reads the session
(``get_session``, a new ``AgentSession`` when there is none), adds one completed run holding the
messages (``RunOutput``, agno's own ``Message`` objects), and saves the session row and then the run
row (``upsert_session``, ``upsert_run`` with the run's index in the session), as an agent's
``persist_run_in_session`` does; load is what an agent replays, ``session.get_messages()`` (every
message of the session's completed runs, oldest first); clear is ``delete_session``. Messages go in
and out as agno's ``Message`` fields, which are chat-completions' (``role``, ``content``, ``name``,
``tool_call_id``, ``tool_calls``); agno keeps no ``metadata``.

``get_messages`` keeps one system message per session, the first (:data:`ONE_SYSTEM_PROMPT`): an
agent writes its system prompt afresh each run, so a later one is no history.

Named by its class (``--store agno.db.redis:RedisDb``), the database is built from the contract's
``redis_url``, ``namespace`` and ``ttl``, as its ``db_url``, ``db_prefix`` and ``expire``, and driven
for the contract's ``user_id`` (none where it is not given: agno's own default), which its reads and
deletes filter by and its sessions carry: a store with tenants.
"""

from __future__ import annotations

from typing import Any

from . import Framework, ForUser, HistoryRule, Methods, built_from_contract, for_user, subclass_of

BASE = "agno.db.base:BaseDb"
AGENT_ID = "memory-regression"    # the agent whose runs the suite's appends are
FIELDS = ("role", "content", "name", "tool_call_id", "tool_calls")   # agno's Message fields, as chat-completions'


def encode(message: dict) -> list:
    from agno.models.message import Message
    return [Message(**{field: message[field] for field in FIELDS if field in message})]


def decode(history: Any) -> list[dict]:
    return [{field: getattr(message, field) for field in FIELDS if getattr(message, field) is not None}
            for message in history]


class SessionDriver:
    """An agno database driven as an agent's runs save to it and replay from it: each append one run."""

    def __init__(self, db: Any, agent_id: str = AGENT_ID):
        # a database bound from the contract comes for a user (ForUser: none, an agent's without one)
        self.db, self.user_id = (db.service, db.user_id) if isinstance(db, ForUser) else (db, None)
        self.agent_id = agent_id

    def _session(self, session_id: str) -> Any:
        from agno.db.base import SessionType
        return self.db.get_session(session_id, SessionType.AGENT, user_id=self.user_id)

    def _run_for(self, session: Any, messages: list) -> Any:
        """The run that holds ``messages``: a new one."""
        import uuid

        from agno.run.agent import RunOutput
        from agno.run.base import RunStatus
        return RunOutput(run_id=str(uuid.uuid4()), agent_id=self.agent_id, session_id=session.session_id,
                         status=RunStatus.completed, messages=messages)

    def append(self, session_id: str, messages: list) -> None:
        import time

        from agno.session import AgentSession
        from agno.session._utils import resolve_run_index

        session = self._session(session_id) or AgentSession(session_id=session_id, agent_id=self.agent_id,
                                                            user_id=self.user_id, session_data={},
                                                            created_at=int(time.time()))
        run = self._run_for(session, messages)
        session.upsert_run(run=run)
        self.db.upsert_session(session)
        self.db.upsert_run(run=run, session_id=session_id, user_id=self.user_id,
                           run_index=resolve_run_index(session, run))

    def load(self, session_id: str) -> list:
        session = self._session(session_id)
        return session.get_messages() if session is not None else []

    def clear(self, session_id: str) -> None:
        self.db.delete_session(session_id, user_id=self.user_id)


def one_system_prompt(appended: list) -> list:
    """``appended`` as ``get_messages`` replays it: the first system message, and no later one."""
    first = next((index for index, message in enumerate(appended) if message.role == "system"), None)
    return [message for index, message in enumerate(appended) if message.role != "system" or index == first]


ONE_SYSTEM_PROMPT = HistoryRule(
    "a session keeps one system prompt, the first: an agent writes its system prompt afresh each run, and "
    "get_messages replays only the first system message stored", one_system_prompt)

FRAMEWORK = Framework("agno", "database", per_session=False, matches=lambda cls: subclass_of(cls, BASE),
                      methods=lambda cls: Methods("append", "load", "clear", append_takes_list=True),
                      encode=encode, decode=decode, driver=lambda cls: SessionDriver,
                      constructor=lambda cls: for_user(built_from_contract(
                          cls, {"redis_url": "db_url", "namespace": "db_prefix", "ttl": "expire"}), optional=True),
                      history_rule=ONE_SYSTEM_PROMPT)
