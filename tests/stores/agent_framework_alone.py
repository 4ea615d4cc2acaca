"""Microsoft Agent Framework's Redis history provider with nothing of the suite's (run from
.venv-agent-framework): the two failures the suite finds in it, shown with the library alone
(tests/verdicts/test_agent_framework.py).

    python agent_framework_alone.py REDIS_URL

A turn saved message by message, as an agent saves a turn's messages, where the assistant says the
same thing twice: the second is dropped (``filter_new_messages`` takes it for the overlap of a replay).
Then a window of 2 over a tool call and its result and the answer: the trim keeps the result without its
call, which a chat-completions request refuses."""

import asyncio
import sys

import redis.asyncio as redis
from agent_framework import Content, Message
from agent_framework_redis import RedisHistoryProvider


def said(history):
    return ", ".join(f"{m.role}: {m.text or m.contents[0].type}" for m in history)


async def main(url):
    client = redis.Redis.from_url(url, decode_responses=True)
    provider = RedisHistoryProvider(redis_client=client, application_id="app")
    for message in (Message("user", ["hi"]), Message("assistant", ["ok"]), Message("assistant", ["ok"])):
        await provider.save_messages("s1", [message])
    print("s1 holds:", said(await provider.get_messages("s1")))
    windowed = RedisHistoryProvider(redis_client=client, application_id="app", max_messages=2)
    call = Content.from_function_call(call_id="c1", name="weather", arguments="{}")
    for message in (Message("user", ["weather?"]), Message("assistant", [call]),
                    Message("tool", [Content.from_function_result(call_id="c1", result="sunny")]),
                    Message("assistant", ["sunny"])):
        await windowed.save_messages("s2", [message])
    print("s2 holds:", said(await windowed.get_messages("s2")))
    await client.aclose()


asyncio.run(main(sys.argv[1]))
