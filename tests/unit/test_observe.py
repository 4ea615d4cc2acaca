"""What a store's parameters are taken for before judging (memory_regression/worker/observe.py,
binding.py), in-process: --store-params, one value under two names, a property as the load of a
store built per session, and a default blamed only on a parameter named as a window."""

import pytest

from memory_regression.contract.codecs import AppendForm
from memory_regression.contract.binding import bind_store, inspect_parameters
from memory_regression.contract.connection_choice import choose
from memory_regression.errors import UsageError
from memory_regression.settings import Settings, parse_store_params
from tests.stores.misbound import WindowCalledLimit
from tests.stores.correct import ListStore
from tests.stores.shapes import ClientOrUrl, TenantInMethods


@pytest.mark.parametrize("spec, error", [
    ("limit", "is not yours=contract's"), ("limit=windows", "'windows' is no contract parameter"),
    ("a=max_messages,a=ttl", "'a' is mapped twice"), ("1x=ttl", "is not yours=contract's"),
])
def test_store_params_that_cannot_be_read_say_what_to_fix(spec, error, tmp_path):
    with pytest.raises(UsageError, match=error):
        Settings.from_mapping({"store": "x.py:S", "store_params": spec}, tmp_path)


def test_store_params_map_onto_canonical_names_and_must_exist():
    mapping = parse_store_params("limit=window, expire_seconds=expire")
    assert mapping == {"limit": "max_messages", "expire_seconds": "ttl"}
    parameters, _, unfilled = inspect_parameters("s", WindowCalledLimit, {"limit": "max_messages"})
    assert parameters["max_messages"] == ("limit",) and unfilled == {}
    with pytest.raises(UsageError, match="'size', which --store 's' does not take: its parameters are redis"):
        inspect_parameters("s", WindowCalledLimit, {"size": "max_messages"})


class IndexedHistory:
    """As redisvl's MessageHistory: an index name with no contract meaning, and a prefix (the namespace)."""

    def __init__(self, name, session_tag=None, prefix=None, redis_client=None):
        self.name, self.session_tag, self.prefix = name, session_tag, prefix

    def add_message(self, message):
        pass

    @property
    def messages(self):
        return []


def test_one_contract_parameter_goes_under_every_name_that_stands_for_it():
    """name mapped onto the namespace, beside prefix (the namespace by name): both get it."""
    mapping = parse_store_params("name=namespace,session_tag=session_id")
    parameters, _, _ = inspect_parameters("s", IndexedHistory, mapping)
    assert parameters["namespace"] == ("name", "prefix") and parameters["session_id"] == ("session_tag",)
    assert parse_store_params("a=window,b=max_messages") == {"a": "max_messages", "b": "max_messages"}


def test_a_property_is_a_load_of_a_store_built_per_session_only():
    """--load-method may name a property where the store is built per session (it is read, given
    nothing); a store of all sessions cannot be given the session id through one."""
    binding = bind_store("s", IndexedHistory, None, {"load": "messages"}, lambda binding: None,
                         {"name": "namespace", "session_tag": "session_id"})
    assert (binding.per_session, binding.load_method) == (True, "messages")
    with pytest.raises(UsageError, match="messages is a property, which cannot be given the session id"):
        bind_store("s", OneForAllSessions, None, {"load": "messages"}, lambda binding: None, {"name": "namespace"})
    with pytest.raises(UsageError, match="the store has no method 'name'"):
        bind_store("s", OneForAllSessions, None, {"load": "name"}, lambda binding: None, {"name": "namespace"})


class OneForAllSessions(IndexedHistory):
    def add_message(self, session_id, message):
        pass


def test_a_default_that_matches_is_blamed_only_on_a_parameter_named_as_a_window():
    """max_retries=30 beside a cap of 30 is no window: only a name such as limit, max_len or k is
    taken for one; the rest are listed as possible causes."""
    from memory_regression.contract.proposals import WINDOW_WORDS, named
    assert [name for name in ("limit", "max_len", "k", "historyLimit", "window_size") if named(name, WINDOW_WORDS)] \
        == ["limit", "max_len", "k", "historyLimit", "window_size"]
    assert not any(named(name, WINDOW_WORDS) for name in ("max_retries", "pool_size", "timeout", "retries"))


def test_a_client_and_a_url_refused_together_are_given_one_the_client_first():
    """connection_choice.choose, on the factory's own builds: both taken as they are; refused together,
    the client alone, then the URL alone; neither alone: both, for the scenarios to report the error."""
    binding = bind_store("s", ClientOrUrl, None, {}, None, {})

    def builds_if(accepted):
        def builds(candidate):
            given = frozenset(name for name in ("redis", "redis_url") if candidate.accepts(name))
            if given not in accepted:
                raise ValueError("mutually exclusive\nsecond line")
        return builds
    both, one, url = frozenset({"redis", "redis_url"}), frozenset({"redis"}), frozenset({"redis_url"})
    assert choose(binding, builds_if({both})) == (binding, None)
    chosen, said = choose(binding, builds_if({one, url}))
    assert chosen.withheld == {"redis_url"} and chosen.takes_client and not chosen.accepts("redis_url")
    assert chosen.build_kwargs({"redis": "c", "redis_url": "u", "namespace": "n"}) == {"redis_client": "c",
                                                                                       "namespace": "n"}
    assert said == ("the store refused the client and the URL together (ValueError: mutually exclusive): it is "
                    "given the client the suite opens alone, as redis_client, in every scenario")
    chosen, said = choose(binding, builds_if({url}))
    assert chosen.withheld == {"redis"} and not chosen.takes_client and "the URL of the server" in said
    assert choose(binding, builds_if(set())) == (binding, None)
    refused = []

    def refuses_once(candidate):   # a refusal that does not come again is not of the two together
        if candidate.accepts("redis") and candidate.accepts("redis_url") and not refused:
            refused.append(candidate)
            raise ValueError("the server was not ready")
    assert choose(binding, refuses_once) == (binding, None) and len(refused) == 1


def test_the_tenant_a_method_takes_beside_the_session_is_where_the_suite_passes_it():
    binding = bind_store("s", TenantInMethods, None, {}, None, {})
    assert binding.tenant_arguments == {"append": ((1, "user_id"),), "get": ((1, "user_id"),),
                                        "clear": ((None, "user_id"),)}
    assert binding.append_form is AppendForm.ROLE_CONTENT
    assert bind_store("s", ListStore, None, {}, None, {}).tenant_arguments == {}
