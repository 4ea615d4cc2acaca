"""redis-openai-agents' AgentSession with nothing of the suite's (on Redis Stack): the failures the suite finds
in it, shown with the library alone (tests/verdicts/test_redis_openai_agents.py).

    python redis_openai_agents_alone.py REDIS_URL

- 1,005 messages added to one conversation: get_messages() (all, says its docstring) returns 1,000.
- Clearing conversation 'a' empties conversation 'b'.
- User 'bob''s conversation 'c1' reads user 'carol''s."""

import sys

from redis_openai_agents.session import AgentSession

url = sys.argv[1]
long = AgentSession("alice", "long", redis_url=url)
for n in range(1005):
    long.add_message("user", f"message {n}")
print("get_messages() returns:", len(long.get_messages()))
a, b = AgentSession("alice", "a", redis_url=url), AgentSession("alice", "b", redis_url=url)
a.add_message("user", "in a")
b.add_message("user", "in b")
a.clear()
print("b after clearing a:", len(b.get_messages()), "messages")
AgentSession("carol", "c1", redis_url=url).add_message("user", "carol's")
print("bob's c1 reads:", ", ".join(m["content"] for m in AgentSession("bob", "c1", redis_url=url).get_messages()))
