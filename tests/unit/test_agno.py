"""agno databases as the suite binds and drives them (memory_regression/frameworks/agno.py): recognised
by their base class, built from the contract's redis_url, namespace and ttl (its db_url, db_prefix
and expire), driven as an agent's runs save and replay, with agno's own Message objects; a session
keeps one system prompt by design. The driver runs here on agno's own in-memory database; RedisDb's
runs are tests/verdicts/test_agno.py's. An agent over a database (memory_regression/frameworks/agno_agent.py)
groups messages into runs as its runs do and replays by its own settings, here over a RedisDb (agno's
in-memory database keeps no runs of their own)."""

import pytest
from agno.db.in_memory import InMemoryDb
from agno.models.message import Message as AgnoMessage

import agno.db.redis  # noqa: F401  (the framework is recognised only once imported)
from memory_regression.contract.adapter import StoreAdapter
from memory_regression.contract.codecs import AppendForm
from memory_regression.contract.capabilities import Capability, detect
from memory_regression.contract.rules import Message
from memory_regression.errors import UsageError
from memory_regression.frameworks.agno import ONE_SYSTEM_PROMPT, SessionDriver, decode, encode
from memory_regression.frameworks.agno_agent import AgentDriver
from memory_regression.frameworks.agno_agent import driver as agent_driver
from tests.stores.libraries import AGNO
from tests.unit.test_frameworks import bound

TOOL_CALL = {"id": "call-1", "type": "function", "function": {"name": "lookup", "arguments": '{"q": "x"}'}}


def test_redis_db_binds_from_the_contracts_url_namespace_and_ttl():
    """Named by its class, with nothing else: it claims the TTL (its expire), a namespace (its
    db_prefix), clear and tenants (the user its sessions are kept for: none unless given), and takes
    whole messages."""
    binding = bound(AGNO)
    assert binding.parameters == {"redis_url": ("redis_url",), "namespace": ("namespace",), "ttl": ("ttl",),
                                  "user_id": ("user_id",)}
    assert binding.append_form is AppendForm.MESSAGES and binding.codec.carries_fields
    assert not binding.is_async and binding.history_rule is ONE_SYSTEM_PROMPT
    assert detect(binding) >= {Capability.TTL, Capability.NAMESPACE, Capability.CLEAR, Capability.TOOL_CALLS,
                               Capability.TENANTS}
    built = binding.factory(redis_url="redis://127.0.0.1:1/0", namespace="mr:abc:", ttl=90)
    assert (built.service.db_prefix, built.service.expire, built.user_id) == ("mr:abc:", 90, None)


def test_messages_go_in_as_agnos_and_come_back_with_their_tool_calls():
    call = {"role": "assistant", "content": "", "tool_calls": [TOOL_CALL]}
    result = {"role": "tool", "content": "found", "tool_call_id": "call-1"}
    [native] = encode(call)
    assert isinstance(native, AgnoMessage) and native.tool_calls == [TOOL_CALL]
    assert decode(encode(call) + encode(result)) == [call, result]


def test_appends_are_runs_of_the_session_and_clear_deletes_it():
    driver = SessionDriver(InMemoryDb())
    driver.append("s1", encode({"role": "user", "content": "hello"}))
    driver.append("s1", encode({"role": "assistant", "content": "hi"}) + encode({"role": "user", "content": "again"}))
    driver.append("s2", encode({"role": "user", "content": "other"}))
    assert [(m.role, m.content) for m in driver.load("s1")] == [("user", "hello"), ("assistant", "hi"),
                                                                ("user", "again")]
    assert len(driver.db.get_session("s1", None).runs) == 2
    driver.clear("s1")
    assert driver.load("s1") == [] and [m.content for m in driver.load("s2")] == ["other"]


def test_a_session_replays_its_first_system_prompt_only_and_the_rule_expects_no_more():
    appended = [Message("system", "first"), Message("user", "q"), Message("system", "later"), Message("user", "r")]
    driver = SessionDriver(InMemoryDb())
    for message in appended:
        driver.append("s", encode(message.as_dict()))
    assert [m.content for m in driver.load("s")] == ["first", "q", "r"]
    assert ONE_SYSTEM_PROMPT.keeps(appended) == [appended[0], appended[1], appended[3]]


def test_the_round_trip_expects_what_the_rule_keeps_and_names_the_rule():
    binding = bound(AGNO)
    store = StoreAdapter(binding, build=lambda session_id: SessionDriver(InMemoryDb()), run=None)
    appended = [Message("user", "q"), Message("system", "one"), Message("system", "two")]
    assert store.kept_by_design(appended) == (appended[:2], ["1 of the 3 messages appended were not expected back, "
                                              f"by the agno database's own rule: {ONE_SYSTEM_PROMPT.text}"])
    plain = StoreAdapter(bound("tests.stores.correct:ListStore"), build=lambda session_id: None, run=None)
    assert plain.kept_by_design(appended) == (appended, [])


def agent_on(server, **history):
    from agno.agent import Agent
    from agno.db.redis import RedisDb
    return Agent(db=RedisDb(db_url=server.url(), db_prefix="unit"), add_history_to_context=True, **history)


CONVERSATION = [Message("system", "be brief"), Message("user", "u1"), Message("assistant", "a1"),
                Message("user", "u2"), Message("assistant", "a2"), Message("tool", "t2"), Message("user", "u3")]


def replay(agent, appended):
    driver = AgentDriver(agent)
    for message in appended:
        driver.append("s", encode(message.as_dict()))
    return driver, [m.content for m in driver.load("s")]


def test_an_agents_runs_are_a_user_message_and_what_follows_it(redis_server):
    driver, _ = replay(agent_on(redis_server), CONVERSATION)
    session = driver.db.get_session("s", None)
    assert [[m.content for m in run.messages] for run in session.runs] == [["be brief"], ["u1", "a1"],
                                                                            ["u2", "a2", "t2"], ["u3"]]


def test_a_load_is_what_the_agent_replays_by_its_own_settings(redis_server):
    """No stored system message; the last N messages (a tool result left first dropped), or the last N
    runs."""
    assert replay(agent_on(redis_server, num_history_messages=100), CONVERSATION)[1] == [
        "u1", "a1", "u2", "a2", "t2", "u3"]
    assert replay(agent_on(redis_server, num_history_messages=2), CONVERSATION)[1] == ["u3"]
    assert replay(agent_on(redis_server, num_history_runs=2), CONVERSATION)[1] == ["u2", "a2", "t2", "u3"]


def test_an_agent_the_suite_cannot_drive_is_told_what_to_fix(redis_server):
    from agno.agent import Agent
    with pytest.raises(UsageError, match="has no db"):
        agent_driver(Agent())
    with pytest.raises(UsageError, match="add_history_to_context=True"):
        agent_driver(Agent(db=agent_on(redis_server).db))
    with pytest.raises(UsageError, match="remove the factory's return annotation"):
        agent_driver(Agent)
