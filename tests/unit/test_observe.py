"""What a store's parameters are taken for before judging (memory_regression/observe.py), in-process:
--store-params, and a default blamed only on a parameter named as a window."""

import pytest

from memory_regression.binding import inspect_parameters
from memory_regression.contract import UsageError
from memory_regression.settings import Settings, parse_store_params
from tests.stores.misbound import WindowCalledLimit


@pytest.mark.parametrize("spec, error", [
    ("limit", "is not yours=contract's"), ("limit=windows", "'windows' is no contract parameter"),
    ("a=max_messages,a=ttl", "'a' is mapped twice"), ("a=max_messages,b=window", "two parameters are mapped onto"),
    ("1x=ttl", "is not yours=contract's"),
])
def test_store_params_that_cannot_be_read_say_what_to_fix(spec, error, tmp_path):
    with pytest.raises(UsageError, match=error):
        Settings.from_mapping({"store": "x.py:S", "store_params": spec}, tmp_path)


def test_store_params_map_onto_canonical_names_and_must_exist():
    mapping = parse_store_params("limit=window, expire_seconds=expire")
    assert mapping == {"limit": "max_messages", "expire_seconds": "ttl"}
    parameters, _, unfilled = inspect_parameters("s", WindowCalledLimit, {"limit": "max_messages"})
    assert parameters["max_messages"] == "limit" and unfilled == {}
    with pytest.raises(UsageError, match="'size', which --store 's' does not take: its parameters are redis"):
        inspect_parameters("s", WindowCalledLimit, {"size": "max_messages"})


def test_a_default_that_matches_is_blamed_only_on_a_parameter_named_as_a_window():
    """max_retries=30 beside a cap of 30 is no window: only a name such as limit, max_len or k is
    taken for one; the rest are listed as possible causes."""
    from memory_regression.observe import WINDOW_WORDS, _named
    assert [name for name in ("limit", "max_len", "k", "historyLimit", "window_size") if _named(name, WINDOW_WORDS)] \
        == ["limit", "max_len", "k", "historyLimit", "window_size"]
    assert not any(_named(name, WINDOW_WORDS) for name in ("max_retries", "pool_size", "timeout", "retries"))
