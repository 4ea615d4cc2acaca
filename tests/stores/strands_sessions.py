"""Strands Agents' Valkey session manager (strands-valkey-session-manager, Python 3.12) through a thin
adapter, until the suite binds Strands itself: one manager per session, as an agent builds one, its
repository methods called as Strands' agent calls them (a session, an agent ``default``, a message per
index), over a Valkey client of the URL; served by tests/stores/py_program.py. Needs RedisJSON."""

import valkey
from strands.types.session import Session, SessionAgent, SessionMessage, SessionType
from strands_valkey_session_manager import ValkeySessionManager

AGENT = "default"


class StrandsValkeySession:
    def __init__(self, redis_url, session_id):
        self.client = valkey.Valkey.from_url(redis_url)
        self.session_id = session_id
        self.manager = ValkeySessionManager(session_id=session_id, client=self.client)

    def append(self, role, content):
        if self.manager.read_session(self.session_id) is None:   # cleared: a new session, as an agent starts one
            self.manager.create_session(Session(session_id=self.session_id, session_type=SessionType.AGENT))
        if self.manager.read_agent(self.session_id, AGENT) is None:
            self.manager.create_agent(self.session_id, SessionAgent(agent_id=AGENT, state={},
                                                                    conversation_manager_state={}))
        index = len(self.manager.list_messages(self.session_id, AGENT))
        message = {"role": role, "content": [{"text": content}]}
        self.manager.create_message(self.session_id, AGENT, SessionMessage(message=message, message_id=index))

    def load(self):
        return [{"role": each.message["role"], "content": "".join(block.get("text", "") for block in
                                                                  each.message["content"])}
                for each in self.manager.list_messages(self.session_id, AGENT)]

    def clear(self):
        self.manager.delete_session(self.session_id)

    def close(self):
        self.client.close()
