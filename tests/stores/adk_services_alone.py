"""adk-session-services' Redis session service with nothing of the suite's (run from .venv-adk-services): the
tenant defect the suite finds in it, shown with the library and ADK alone (tests/verdicts/test_adk_services.py).

    python adk_services_alone.py REDIS_URL

User 'bob''s session 'x:s1' gets an event; user 'bob:x''s session 's1' reads it (the service joins app, user and
session ids with ':' into one key), then deleting it deletes bob's."""

import asyncio
import sys

from adk_session_services.redis_session import RedisSessionService
from google.adk.events.event import Event
from google.genai import types


async def texts(service, user_id, session_id):
    session = await service.get_session(app_name="app", user_id=user_id, session_id=session_id)
    if session is None:
        return "none"
    return ", ".join(part.text for event in session.events for part in event.content.parts)


async def main(redis_url):
    service = RedisSessionService(redis_url=redis_url)
    session = await service.create_session(app_name="app", user_id="bob", session_id="x:s1")
    await service.append_event(session, Event(author="user", content=types.Content(
        role="user", parts=[types.Part(text="bob's x:s1")])))
    print("bob:x's s1 reads:", await texts(service, "bob:x", "s1"))
    await service.delete_session(app_name="app", user_id="bob:x", session_id="s1")
    print("bob's x:s1 after deleting bob:x's s1:", await texts(service, "bob", "x:s1"))


asyncio.run(main(sys.argv[1]))
