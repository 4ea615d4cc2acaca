"""Strands Agents' Redis session manager (strands-redis-session-manager, Python 3.12) with nothing of the
suite's: the failures the suite finds in it, shown with the library alone (tests/verdicts/test_python312.py).

    python3.12 strands_redis_alone.py REDIS_URL

Two agents on one session, as two replicas of a service serving it each build theirs, append one message
each: both take index 0, and the session holds one. Then sessions 'alice' and 'alice:2', a message each;
delete_session('alice'), and which are left."""

import sys

import redis
from redis_session_manager import RedisSessionManager
from strands.types.session import SessionAgent, SessionMessage

client = redis.Redis.from_url(sys.argv[1], decode_responses=True)


def agent_of(session_id):
    """A manager and its agent's record, as an agent initialised on a session makes them."""
    manager = RedisSessionManager(session_id, redis_client=client)
    if manager.read_agent(session_id, "default") is None:
        manager.create_agent(session_id, SessionAgent(agent_id="default", state={}, conversation_manager_state={}))
    return manager


replicas = [agent_of("s1"), agent_of("s1")]
for number, manager in enumerate(replicas, 1):   # each agent's first message: index 0
    message = {"role": "user", "content": [{"text": f"from replica {number}"}]}
    manager.create_message("s1", "default", SessionMessage(message=message, message_id=0))
held = replicas[0].list_messages("s1", "default")
print("s1 holds:", ", ".join(each.message["content"][0]["text"] for each in held))
for session_id in ("alice", "alice:2"):
    manager = agent_of(session_id)
    message = {"role": "user", "content": [{"text": f"hi from {session_id}"}]}
    manager.create_message(session_id, "default", SessionMessage(message=message, message_id=0))
manager.delete_session("alice")
print("left:", ", ".join(sid for sid in ("alice", "alice:2") if manager.read_session(sid)) or "none")
