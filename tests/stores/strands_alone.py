"""Strands Agents' Valkey session manager with nothing of the suite's (Python 3.12, RedisJSON): the
identity defects the suite finds in it, shown with the library alone
(tests/verdicts/test_python312.py).

    python3.12 strands_alone.py REDIS_URL

Sessions 'alice', 'alice2' and 'al', a message each; the messages session 'al*' lists; then
delete_session('alice'), and which sessions are left."""

import sys

import valkey
from strands.types.session import SessionAgent, SessionMessage
from strands_valkey_session_manager import ValkeySessionManager

client = valkey.Valkey.from_url(sys.argv[1])
for session_id in ("alice", "alice2", "al", "al*"):
    manager = ValkeySessionManager(session_id=session_id, client=client)   # creates the session
    manager.create_agent(session_id, SessionAgent(agent_id="default", state={}, conversation_manager_state={}))
    if session_id != "al*":
        message = {"role": "user", "content": [{"text": f"hi from {session_id}"}]}
        manager.create_message(session_id, "default", SessionMessage(message=message, message_id=0))
listed = manager.list_messages("al*", "default")
print("al* lists:", ", ".join(sorted(each.message["content"][0]["text"] for each in listed)))
manager.delete_session("alice")
print("left:", ", ".join(sid for sid in ("alice", "alice2", "al", "al*") if manager.read_session(sid)))
