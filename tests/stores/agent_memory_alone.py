"""Redis' agent-memory-server with nothing of the suite's: the failures of its row in the verdicts
table, shown with the library's own client alone against a service the test started
(tests/verdicts/test_python312.py).

    python3.12 agent_memory_alone.py SERVICE_URL

- Session 'bob:s1' of no user gets a message; user 'bob''s session 's1' reads it; then deleting bob's
  's1' deletes it (the service joins user and session ids with ':' into one key).
- Four tasks append 10 messages each to one session at once: the session keeps fewer than 40 (the
  client appends by reading the session and putting it back whole).
- Session 'al?' reads session 'al''s message (the client puts the id in the URL's path unquoted).
- A message of empty content is refused (the service answers HTTP 400)."""

import asyncio
import sys

from agent_memory_client import MemoryAPIClient, MemoryClientConfig
from agent_memory_client.exceptions import MemoryClientError, MemoryNotFoundError

WINDOW = 10_000_000   # tokens: the service would summarise, with a model, past about 70% of it


async def texts(client, session_id, user_id=None):
    try:
        memory = await client.get_working_memory(session_id, user_id=user_id)
    except MemoryNotFoundError:
        return "none"
    return ", ".join(message.content for message in memory.messages)


async def append(client, session_id, content, user_id=None):
    await client.append_messages_to_working_memory(session_id, [{"role": "user", "content": content}],
                                                   user_id=user_id, context_window_max=WINDOW)


async def main(service_url):
    client = MemoryAPIClient(MemoryClientConfig(base_url=service_url))
    await append(client, "bob:s1", "no user's bob:s1")
    print("bob's s1 reads:", await texts(client, "s1", "bob"))
    await client.delete_working_memory("s1", user_id="bob")
    print("bob:s1 of no user after deleting bob's s1:", await texts(client, "bob:s1"))

    async def writer(n):
        for i in range(10):
            await append(client, "race", f"writer {n} #{i}")
    await asyncio.gather(*(writer(n) for n in range(4)))
    kept = await texts(client, "race")
    print("race keeps all 40:", len(kept.split(", ")) == 40)

    await append(client, "al", "al's")
    print("al? reads:", await texts(client, "al?"))

    try:
        await append(client, "empty", "")
        print("empty content: stored")
    except MemoryClientError as exc:
        print("empty content:", type(exc).__name__, str(exc).split(" (message ID")[0])
    await client.close()


asyncio.run(main(sys.argv[1]))
