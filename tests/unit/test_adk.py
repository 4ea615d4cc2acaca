"""Google ADK session services as the suite binds and drives them (memory_regression/frameworks/adk.py):
recognised by their base class, built from the contract's redis_url and ttl (its uri and expire),
each instance on a client of its own, driven as ADK's runner drives them, with ADK's own events and
google.genai contents. The driver runs here on ADK's own in-memory service; the Redis service's runs
are tests/verdicts/test_adk.py's."""

import asyncio

from google.adk.events.event import Event
from google.adk.sessions import InMemorySessionService

import google_adk_redis  # noqa: F401  (the framework is recognised only once imported)
from memory_regression.contract.adapter import StoreAdapter
from memory_regression.contract.codecs import AppendForm
from memory_regression.contract.capabilities import Capability, detect
from memory_regression.contract.rules import Message
from memory_regression.frameworks.adk import AGENT, ForUser, SessionServiceDriver, decode, encode
from tests.stores.libraries import ADK
from tests.unit.test_frameworks import bound

CALL = {"role": "assistant", "content": "looking",
        "tool_calls": [{"id": "call-1", "type": "function", "function": {"name": "lookup", "arguments": '{"q": "x"}'}}]}
RESULT = {"role": "tool", "content": "found", "tool_call_id": "call-1", "name": "lookup"}


def test_the_redis_service_binds_from_the_contracts_url_and_ttl_on_a_client_of_its_own():
    """Named by its class, with nothing else: it claims the TTL (its expire), clear and tenants (the user
    its sessions are kept for), not a namespace (its keys take no prefix), takes whole messages, async."""
    binding = bound(ADK)
    assert binding.parameters == {"redis_url": ("redis_url",), "ttl": ("ttl",), "user_id": ("user_id",)}
    assert binding.append_form is AppendForm.MESSAGES and binding.codec.carries_fields and binding.is_async
    assert detect(binding) >= {Capability.TTL, Capability.CLEAR, Capability.TOOL_CALLS, Capability.ASYNC,
                               Capability.TENANTS}
    assert Capability.NAMESPACE not in detect(binding)
    built = binding.factory(redis_url="redis://127.0.0.1:1/0", ttl=90, user_id="bob")
    assert built.service.expire == 90 and built.user_id == "bob"
    other = binding.factory(redis_url="redis://127.0.0.1:1/0", ttl=90, user_id="bob")
    assert built.service.cache is not other.service.cache


def test_messages_are_events_as_a_runner_writes_them_and_come_back_as_appended():
    user, call, result = (encode(message)[0] for message in ({"role": "user", "content": "hi"}, CALL, RESULT))
    assert all(isinstance(event, Event) for event in (user, call, result))
    assert (user.author, user.content.role) == ("user", "user")
    assert (call.author, call.content.role, call.content.parts[1].function_call.args) == (AGENT, "model", {"q": "x"})
    assert result.content.parts[0].function_response.response == {"result": "found"}
    assert decode([user, call, result]) == [{"role": "user", "content": "hi"}, CALL, RESULT]


def test_a_system_message_goes_in_as_user_text_and_the_round_trip_says_so():
    [event] = encode({"role": "system", "content": "be brief"})
    assert decode([event]) == [{"role": "user", "content": "be brief"}]
    store = StoreAdapter(bound(ADK), build=lambda session_id: None, run=None)
    appended = [Message("system", "be brief"), Message("user", "hi")]
    assert store.kept_by_design(appended) == (
        [Message("user", "be brief"), Message("user", "hi")],
        ["1 of the 2 messages appended are expected back with another role, as the Google ADK session "
         "service's messages carry them: system as user"])


def test_appends_create_the_session_once_even_when_first_appends_overlap():
    """Two first appends at once: one creates the session, the other finds it created (ADK raises
    AlreadyExistsError to the second creator); both land, and clear deletes only that session."""
    async def scenario():
        driver = SessionServiceDriver(ForUser(InMemorySessionService(), "u"))
        await asyncio.gather(driver.append("s1", encode({"role": "user", "content": "one"})),
                             driver.append("s1", encode({"role": "user", "content": "two"})))
        await driver.append("s2", encode({"role": "user", "content": "other"}))
        loaded = sorted(message["content"] for message in decode(await driver.load("s1")))
        await driver.clear("s1")
        return loaded, await driver.load("s1"), decode(await driver.load("s2"))

    assert asyncio.run(scenario()) == (["one", "two"], [], [{"role": "user", "content": "other"}])
