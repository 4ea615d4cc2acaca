"""agno agents: an ``Agent`` with a database, as a factory returns it. Its memory is the database's
session (:mod:`.agno`), and what the model is sent of it is what the agent replays: with
``add_history_to_context``, the messages of its last ``num_history_runs`` runs (3 unless set), or
its last ``num_history_messages`` messages, with no stored system message (an agent writes its
system prompt afresh each run: :data:`NO_STORED_SYSTEM_PROMPT`).

The suite drives the agent's database as its runs save to it, a run being what one ``Agent.run``
adds: a user message starts a run, and the messages after it (the model's, its tool calls' results)
are that run's, saved again as each comes, as the agent's mid-run checkpoints save it. A load is
what the agent replays, ``get_messages`` with the agent's own settings. So a window of N runs keeps
N exchanges, not N messages, and a run belongs to one invocation: writers that overlap on one
session are not judged (:data:`ONE_INVOCATION_PER_RUN`). The window is the factory's to take from
the contract (``max_messages``) and is claimed as its parameters say.
"""

from __future__ import annotations

from typing import Any

from ..errors import UsageError
from . import Framework, HistoryRule, Methods, agent_memory, agno, subclass_of

BASE = "agno.agent.agent:Agent"
CONVERSATION_ROLES = ("user", "assistant", "tool")   # a system_message_role among these is replayed as history


class AgentDriver(agno.SessionDriver):
    """An agent's database driven as its runs save to it, and read back as the agent replays it."""

    def __init__(self, agent: Any):
        agent.set_id()
        super().__init__(agent.db, agent.id)
        self.agent = agent

    def _run_for(self, session: Any, messages: list) -> Any:
        """A new run for a user message; else the session's latest run, with ``messages`` added."""
        if messages[0].role == "user" or not session.runs:
            return super()._run_for(session, messages)
        run = session.runs[-1]
        run.messages = [*(run.messages or []), *messages]
        return run

    def load(self, session_id: str) -> list:
        session = self._session(session_id)
        if session is None:
            return []
        role = self.agent.system_message_role
        return session.get_messages(last_n_runs=self.agent.num_history_runs, limit=self.agent.num_history_messages,
                                    skip_roles=None if role in CONVERSATION_ROLES else [role])


def driver(target: Any) -> type:
    """The agent's driver, for an agent built by the factory with a database it adds to its context."""
    agent_memory(target, "an agno agent", "db", agno.BASE,
                 "Agent(db=RedisDb(db_url=redis_url), add_history_to_context=True)")
    if not target.add_history_to_context:
        raise UsageError("the agent sends the model no history (add_history_to_context=False), so it has no memory "
                         "to test: build it with add_history_to_context=True")
    return AgentDriver


NO_STORED_SYSTEM_PROMPT = HistoryRule(
    "an agent replays no stored system message: it writes its system prompt afresh each run",
    lambda appended: [message for message in appended if message.role != "system"])

ONE_INVOCATION_PER_RUN = ("a run holds what one agent invocation adds, a user message and what follows it, so "
                          "writers that overlap on one session would add to one another's runs, which an agent's "
                          "runs never do")

FRAMEWORK = Framework("agno", "agent", per_session=False, matches=lambda cls: subclass_of(cls, BASE),
                      methods=lambda cls: Methods("append", "load", "clear", append_takes_list=True),
                      encode=agno.encode, decode=agno.decode, driver=driver,
                      serial_sessions=ONE_INVOCATION_PER_RUN, history_rule=NO_STORED_SYSTEM_PROMPT)
