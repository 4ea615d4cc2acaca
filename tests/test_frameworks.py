"""Stores of the libraries people use, run with nothing of ours but the --store spec: LangChain's
``RedisChatMessageHistory`` (langchain-community), LlamaIndex's ``RedisChatStore`` and OpenAI Agents'
``RedisSession``, installed from PyPI (the test extras pin them). Each is a correct store: the suite
must pass it, at the level its parameters claim. Beside them, the contract's own shapes: one object
per session, and whole messages as dicts or as the append parameter's annotated class."""

import warnings

import pytest

from memory_regression.binding import AppendForm, bind_store
from memory_regression.contract import Message, UsageError
from memory_regression.loader import load_object
from tests.conftest import ROOT
from tests.stores.libraries import LIBRARY_STORES

with warnings.catch_warnings():   # langchain-community warns at import that it is being sunset
    warnings.simplefilter("ignore")
    import agents.extensions.memory  # noqa: F401
    import langchain_community.chat_message_histories  # noqa: F401
    import llama_index.storage.chat_store.redis  # noqa: F401

LANGCHAIN = "langchain_community.chat_message_histories:RedisChatMessageHistory"
LLAMA_INDEX = "llama_index.storage.chat_store.redis:RedisChatStore"
OPENAI_AGENTS = "agents.extensions.memory:RedisSession"

# spec -> (shape, capabilities, conformance level on a real server)
LIBRARIES = {
    LANGCHAIN: ("LangChain BaseChatMessageHistory: add_message(message)",
                ["clear", "core", "namespace", "tool-calls", "ttl"],
                "core+ttl+namespace+clear+tool-calls+bounded-storage+steady-appends"),
    LLAMA_INDEX: ("LlamaIndex BaseChatStore: add_message(session_id, message)",
                  ["clear", "core", "tool-calls", "ttl"], "core+ttl+clear+tool-calls+bounded-storage+steady-appends"),
    OPENAI_AGENTS: ("OpenAI Agents Session: add_items([message, ...])",
                    ["async", "clear", "core", "namespace", "tool-calls", "ttl"],
                    "core+ttl+namespace+clear+tool-calls+async+bounded-storage+steady-appends"),
}

SHAPES = {
    "tests.stores.shapes:SessionHistory": ("one object per session: append(role, content)", True,
                                           AppendForm.ROLE_CONTENT),
    "tests.stores.shapes:SavesDicts": ("one object for all sessions: save(session_id, message); messages as dict",
                                       False, AppendForm.MESSAGE),
    "tests.stores.shapes:TypedMessages": (
        "one object for all sessions: add_message(session_id, message); messages as ChatTurn", False,
        AppendForm.MESSAGE),
    "tests.stores.correct:ListStore": ("one object for all sessions: append(session_id, role, content)", False,
                                       AppendForm.ROLE_CONTENT),
    "tests.stores.libraries:AsyncOnlyHistory": ("LangChain BaseChatMessageHistory: aadd_messages([message, ...])",
                                                True, AppendForm.MESSAGES),
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
    appended. Only what its format cannot carry may differ (an Agents item has no tool name)."""
    stored = bound(spec).codec
    from memory_regression.contract import normalize_history
    back = normalize_history(stored.decode([n for m in TOOL_EXCHANGE for n in stored.encode(m.as_dict())]),
                             fields=True)
    expected = list(TOOL_EXCHANGE)
    if spec == OPENAI_AGENTS:
        expected[2] = Message.of("tool", "sunny", tool_call_id="call_1")
        expected[3] = Message.of("assistant", "Sunny in Paris.")
    assert back == expected


@pytest.mark.parametrize("entry", LIBRARY_STORES, ids=lambda entry: entry.spec.rpartition(":")[2])
def test_a_library_store_gets_its_known_verdict(run_suite, entry):
    """The verdicts table's rows (bench/verdicts.py): the three stores pass as they are, and the
    memories over them fail exactly the scenarios of their known bug or contract mismatch."""
    result = run_suite("--store", entry.spec, "--redis", "server", *entry.args)
    summary = result.summary
    assert result.failing_scenarios() == set(entry.failing), result.output
    warned = {w["nodeid"].split("::")[-1].split("[")[0] for w in summary["warnings"]}
    assert warned - set(entry.may_warn) == set(entry.warned), result.output
    assert summary["status"] == ("failed" if entry.failing else "passed"), result.output
    assert summary["totals"]["errors"] == 0, result.output
    if entry.spec in LIBRARIES:
        assert [summary["shape"], summary["capabilities"], summary["conformance_level"]] == list(
            LIBRARIES[entry.spec]), result.output


def test_framework_messages_a_plain_store_returns_are_read_with_the_frameworks_converters(run_suite):
    """A store of no framework whose load returns LangChain messages (tool calls in LangChain's own
    form) is read as a LangChain store's history is: its tool calls compare as appended."""
    result = run_suite("--store", "tests.stores.shapes:ReturnsLangChainMessages", "-k", "tool_calls or round_trip")
    assert result.exit_code == 0, result.output
    assert result.summary["conformance_level"] == "core+tool-calls"
    assert result.summary["totals"]["passed"] == 2
