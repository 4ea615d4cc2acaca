"""Redis' agent-memory-server with nothing of the suite's but the server's start (Python 3.12,
RediSearch): the tenant defect the suite finds through tests/stores/agent_memory.py, shown with the
library's own client alone (tests/verdicts/test_python312.py).

    python3.12 agent_memory_alone.py REDIS_URL

Session 'bob:s1' of no user gets a message; user 'bob''s session 's1' reads it; then deleting bob's
's1' deletes it."""

import asyncio
import sys

from agent_memory import server_for
from agent_memory_client import MemoryAPIClient, MemoryClientConfig
from agent_memory_client.exceptions import MemoryNotFoundError


async def texts(client, session_id, user_id=None):
    try:
        memory = await client.get_working_memory(session_id, user_id=user_id)
    except MemoryNotFoundError:
        return "none"
    return ", ".join(message.content for message in memory.messages)


async def main(redis_url):
    client = MemoryAPIClient(MemoryClientConfig(base_url=server_for(redis_url)))
    await client.append_messages_to_working_memory("bob:s1", [{"role": "user", "content": "no user's bob:s1"}])
    print("bob's s1 reads:", await texts(client, "s1", "bob"))
    await client.delete_working_memory("s1", user_id="bob")
    print("bob:s1 of no user after deleting bob's s1:", await texts(client, "bob:s1"))
    await client.close()


asyncio.run(main(sys.argv[1]))
