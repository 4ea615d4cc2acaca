"""Stores of the libraries people use, and the contract's own shapes, as the suite binds them: a
library's store recognised by its base class, the append form read from its parameters, and tool
calls and metadata through the libraries' own converters. Their runs are tests/verdicts'."""

import warnings

import pytest

from memory_regression.contract.codecs import AppendForm
from memory_regression.contract.binding import bind_store
from memory_regression.contract.rules import Message
from memory_regression.errors import UsageError
from memory_regression.contract.loader import load_object
from tests.conftest import ROOT
from tests.stores.libraries import AGNO, LIBRARIES, OPENAI_AGENTS

with warnings.catch_warnings():   # langchain-community warns at import that it is being sunset
    warnings.simplefilter("ignore")
    import agents.extensions.memory  # noqa: F401
    import langchain_community.chat_message_histories  # noqa: F401
    import llama_index.storage.chat_store.redis  # noqa: F401


SHAPES = {
    "tests.stores.shapes:SessionHistory": ("one object per session: append(role, content)", True,
                                           AppendForm.ROLE_CONTENT),
    "tests.stores.shapes:SavesDicts": ("one object for all sessions: save(session_id, message); messages as dict",
                                       False, AppendForm.MESSAGE),
    "tests.stores.shapes:TypedMessages": (
        "one object for all sessions: add_message(session_id, message); messages as ChatTurn", False,
        AppendForm.MESSAGE),
    "tests.stores.shapes:PartsMessages": (
        "one object for all sessions: add_message(session_id, message); messages as TextAndParts", False,
        AppendForm.MESSAGE),
    "tests.stores.correct:ListStore": ("one object for all sessions: append(session_id, role, content)", False,
                                       AppendForm.ROLE_CONTENT),
    "tests.stores.langchain_memories:AsyncOnlyHistory": (
        "LangChain BaseChatMessageHistory: aadd_messages([message, ...])", True, AppendForm.MESSAGES),
}

TOOL_EXCHANGE = [
    Message.of("user", "What is the weather in Paris?"),
    Message.of("assistant", "", tool_calls=[{"id": "call_1", "type": "function", "function": {
        "name": "get_weather", "arguments": '{"city": "Paris"}'}}]),
    Message.of("tool", "sunny", tool_call_id="call_1", name="get_weather"),
    Message.of("assistant", "Sunny in Paris.", metadata={"model": "gpt-4o", "turn": 2}),
]


def bound(spec):
    def no_probe(binding):
        raise AssertionError("a class needs no probe")
    factory, source = load_object(spec, ROOT)
    return bind_store(spec, factory, source, {}, no_probe)


@pytest.mark.parametrize("spec", sorted(LIBRARIES))
def test_a_library_store_is_recognised_by_its_base_class(spec):
    binding = bound(spec)
    assert binding.shape == LIBRARIES[spec][0]
    assert binding.takes_whole_messages and binding.codec.carries_fields


@pytest.mark.parametrize("spec", sorted(SHAPES))
def test_the_append_form_follows_the_parameter_after_the_session_id(spec):
    binding = bound(spec)
    shape, per_session, form = SHAPES[spec]
    assert (binding.shape, binding.per_session, binding.append_form) == (shape, per_session, form)


def test_a_per_session_framework_store_needs_a_session_id_parameter(tmp_path):
    (tmp_path / "history.py").write_text(
        "from langchain_core.chat_history import BaseChatMessageHistory\n"
        "class Shared(BaseChatMessageHistory):\n"
        "    def __init__(self, redis): self.redis = redis\n"
        "    def add_message(self, message): pass\n"
        "    def clear(self): pass\n")
    factory, source = load_object("history.py:Shared", tmp_path)
    with pytest.raises(UsageError, match="holds one session: its factory must take session_id"):
        bind_store("history.py:Shared", factory, source, {}, lambda binding: None)


@pytest.mark.parametrize("spec", sorted(LIBRARIES))
def test_tool_calls_and_metadata_survive_the_libraries_own_conversion(spec):
    """What the suite expects back from a library store: the library's own conversion of what was
    appended. Only what its format cannot carry may differ (an Agents item has no tool name, and
    neither it nor an agno message has metadata)."""
    stored = bound(spec).codec
    from memory_regression.contract.rules import normalize_history
    back = normalize_history(stored.decode([n for m in TOOL_EXCHANGE for n in stored.encode(m.as_dict())]),
                             fields=True)
    expected = list(TOOL_EXCHANGE)
    if spec == OPENAI_AGENTS:
        expected[2] = Message.of("tool", "sunny", tool_call_id="call_1")
    if spec in (OPENAI_AGENTS, AGNO):
        expected[3] = Message.of("assistant", "Sunny in Paris.")
    assert back == expected


class ServiceClient:
    """A client of a memory service, reached at the URL it is built with."""

    def __init__(self, base_url, namespace):
        self.base_url = base_url

    def append(self, session_id, role, content): ...
    def load(self, session_id): return []


def service_client(base_url, namespace="ns"):   # a factory: the suite would build a store to inspect
    return ServiceClient(base_url, namespace)


@pytest.mark.parametrize("factory", [ServiceClient, service_client])
def test_a_store_that_requires_a_service_url_the_run_does_not_give_is_told_the_option(factory):
    """Its base_url is the contract's service_url, which --service-url gives: left out, the binding says so before
    it builds anything (a factory's probe included), and given, the store binds."""
    def no_probe(binding):
        raise AssertionError("no store can be built without its service URL")
    with pytest.raises(UsageError) as caught:
        bind_store("svc.py:S", factory, None, {}, no_probe, None, {"service_url": "--service-url URL"})
    assert ("--store 'svc.py:S' requires 'base_url', the contract's service_url, which this run does not give: give "
            "it with --service-url URL") in str(caught.value)
    binding = bind_store("svc.py:S", factory, None, {}, lambda binding: ServiceClient("http://h", "ns"))
    assert binding.accepts("service_url")
