"""The [tool.memory-regression] table of pyproject.toml (memory_regression/runner/project_table.py), and what a
store's names say they are (memory_regression/contract/proposals.py): the binding's proposals and its problems,
all said at once."""

import pytest

from memory_regression.runner import project_table
from memory_regression.contract.binding import bind_store
from memory_regression.errors import UsageError
from memory_regression.contract.proposals import BindingError, contract_parameter_of, role_of
from memory_regression.options import OPTIONS, defaults
from tests.stores.new_user import ConversationMemory


def table(tmp_path, text):
    (tmp_path / "pyproject.toml").write_text(f'[project]\nname = "app"\n\n[tool.memory-regression]\n{text}\n')
    return project_table.read(tmp_path, OPTIONS)


def test_the_table_takes_tomls_own_types_as_the_flags_text(tmp_path):
    assert table(tmp_path, 'store = "app/memory.py:Memory"\nwindow-sizes = [5, 20]\nstrict = true\n'
                           'store-params = {token_budget = "max_tokens", ttl_s = "ttl"}\ncall-timeout = 2.5\n'
                           'groups = "default,-concurrency"') == {
        "store": "app/memory.py:Memory", "window_sizes": "5,20", "strict": True, "call_timeout": "2.5",
        "store_params": "token_budget=max_tokens,ttl_s=ttl", "groups": "default,-concurrency"}


def test_no_file_or_no_table_is_nothing(tmp_path):
    assert project_table.read(tmp_path, OPTIONS) == {}
    (tmp_path / "pyproject.toml").write_text('[tool.ruff]\nline-length = 100\n')
    assert project_table.read(tmp_path, OPTIONS) == {}


@pytest.mark.parametrize("text, error", [
    ('windows-sizes = "5"', "unknown key 'windows-sizes'; did you mean window-sizes?"),
    ('colour = "red"', "unknown key 'colour'; the keys are the options' names: store, window-sizes"),
    ('working-directory = "app"', "unknown key 'working-directory'"),
    ("strict = 1", "strict = 1: give true or false"),
    ("window-sizes = [[5]]", "window-sizes = [[5]]: give a string, a number, a list of them"),
    ("store-params = {a = 1}", "store-params = {'a': 1}: give a string"),
    ("store = ", "not TOML"),
])
def test_a_key_or_value_it_cannot_take_is_a_usage_error_naming_it(tmp_path, text, error):
    with pytest.raises(UsageError, match=error.replace("[", r"\[").replace("]", r"\]").replace("?", r"\?")):
        table(tmp_path, text)


def test_the_table_printed_for_a_run_reads_back_as_the_same_options_with_the_fixes(tmp_path):
    given = {**defaults(), "store": "memory.py:Memory", "window_sizes": "5,20", "strict": True,
             "store_params": "limit=max_messages", "redis": "auto"}
    text = project_table.render(given, OPTIONS, {"store_params": "token_budget=max_tokens,limit=ttl",
                                                 "append_method": "remember"})
    assert text.splitlines() == [
        "[tool.memory-regression]", 'store = "memory.py:Memory"', "strict = true",
        'store-params = {"limit" = "max_messages", "token_budget" = "max_tokens"}', 'append-method = "remember"']
    (tmp_path / "pyproject.toml").write_text(text + "\n")
    assert project_table.read(tmp_path, OPTIONS) == {
        "store": "memory.py:Memory", "strict": True, "store_params": "limit=max_messages,token_budget=max_tokens",
        "append_method": "remember"}


@pytest.mark.parametrize("name, default, canonical", [
    ("token_budget", 8000, "max_tokens"), ("max_context_tokens", 4096, "max_tokens"), ("history_size", 20,
     "max_messages"), ("limit", 20, "max_messages"), ("keep_last", 10, "max_messages"), ("expire_seconds", 60, "ttl"),
    ("ttl_s", 3600, "ttl"), ("sessionTtlSeconds", 60, "ttl"), ("conversation_id", None, "session_id"),
    ("key_namespace", "app:", "namespace"), ("redis_uri", "redis://x", "redis_url"), ("tokenizer", None,
     "count_tokens"), ("max_retries", 3, None), ("timeout_seconds", 30, None), ("batch_size", 100, None),
    ("verbose", False, None)])
def test_a_parameters_name_and_default_say_which_contract_parameter_it_is(name, default, canonical):
    assert contract_parameter_of(name, default) == canonical


def test_only_a_name_that_is_a_name_is_proposed():
    """A parameter a program's greeting names, or a member set on a class under any string, is proposed
    only if it is an identifier: what is proposed is printed, and pasted."""
    assert contract_parameter_of("ttl\n::error::x", 60) is None and contract_parameter_of("ttl x", 60) is None

    class Odd:
        def get(self, session_id):
            return []
    setattr(Odd, "add_\n::error::x", lambda self, session_id, role, content: None)
    with pytest.raises(BindingError) as refused:
        bind_store("m.py:Odd", Odd, None, {}, lambda binding: None)
    assert refused.value.fixes == {} and "::error::" not in str(refused.value)


def test_a_methods_name_says_its_role():
    assert [role_of(name) for name in ("remember", "recall", "forget", "add_turn", "fetch_history", "close",
                                       "get_or_delete")] == ["append", "load", "clear", "append", "load", None, None]


def test_every_binding_problem_is_said_at_once_with_what_fixes_it():
    """A store written as a new user would, bound as it is: both missing methods are problems, each with
    the method its name proposes; its token budget, TTL and clear are proposed beside them; one option
    line takes them all."""
    with pytest.raises(BindingError) as refused:
        bind_store("memory.py:ConversationMemory", ConversationMemory, None, {}, lambda binding: None)
    message, fixes = str(refused.value), refused.value.fixes
    assert message.startswith("--store 'memory.py:ConversationMemory' cannot be bound as it is; 2 things to fix:")
    assert "its method remember(conversation_id, role, text) looks like one: take it with --append-method remember" \
        in message and "take it with --load-method recall" in message
    assert "its parameter token_budget=8000, which the suite leaves at its default, looks like the contract's " \
           "max_tokens: take it with --store-params token_budget=max_tokens" in message
    assert fixes == {"append_method": "remember", "load_method": "recall",
                     "store_params": "token_budget=max_tokens,ttl_s=ttl", "clear_method": "forget"}
    assert message.endswith("All at once: --append-method remember --load-method recall --store-params "
                            "token_budget=max_tokens,ttl_s=ttl --clear-method forget")
    overrides = {"append": "remember", "load": "recall", "clear": "forget"}
    mapping = {"token_budget": "max_tokens", "ttl_s": "ttl"}
    bound = bind_store("memory.py:ConversationMemory", ConversationMemory, None, overrides, lambda binding: None,
                       mapping)
    assert bound.proposals == [] and {"max_tokens", "ttl", "namespace", "redis_url"} <= set(bound.parameters)


def test_required_parameters_outside_the_contract_are_each_said_with_their_mapping():
    class NeedsThree:
        def __init__(self, conversation_id, llm, max_tokens_context):
            pass

        def add_message(self, role, content):
            pass

        def get_messages(self):
            return []

    with pytest.raises(BindingError) as refused:
        bind_store("m.py:NeedsThree", NeedsThree, None, {}, lambda binding: None)
    message = str(refused.value)
    assert "3 things to fix" in message and "requires a parameter 'llm'" in message
    assert refused.value.fixes == {"store_params": "conversation_id=session_id,max_tokens_context=max_tokens"}
