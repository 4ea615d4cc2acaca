"""Binding faults (memory_regression/worker/binding_faults.py), in-process: what a store raised at its first build or
call that says the suite cannot build or call it as bound, told apart on evidence from what the scenarios judge."""

import datetime

import pytest

from memory_regression.contract.adapter import StoreAdapter
from memory_regression.contract.binding import bind_store
from memory_regression.worker.binding_faults import binding_fault
from tests.stores.correct import ListStore


class TakesATimedelta(ListStore):
    def __init__(self, redis, namespace, ttl):
        if not isinstance(ttl, datetime.timedelta):
            raise TypeError("ttl must be a timedelta")


class BrokenConstructor(ListStore):
    """A bug of its own, naming no parameter: LlamaIndex's chat store on a cluster URL raises so."""

    def __init__(self, redis, namespace, ttl):
        raise RuntimeError("no running event loop")


class RaisesWhileAppending(ListStore):
    def __init__(self, redis, namespace, ttl):
        pass

    def append(self, session_id, role, content):
        raise TypeError("can only concatenate str (not \"int\") to str")


def first_call_raises(cls, build=None):
    binding = bind_store(f"s.py:{cls.__name__}", cls, None, {}, lambda binding: None)
    with pytest.raises(Exception) as raised:
        store = StoreAdapter(binding, build or (lambda session_id: cls(None, "ns", 3600)), run=lambda awaitable: None)
        store.append("s", "user", "hello")
    return binding, raised.value


def test_a_build_that_refuses_a_value_the_suite_passes_names_it():
    binding, exc = first_call_raises(TakesATimedelta)
    fault = binding_fault(binding, exc)
    assert fault.startswith("--store 's.py:TakesATimedelta': building the store with what the suite passes raised "
                            "TypeError: ttl must be a timedelta, which names 'ttl' (the contract's ttl)"), fault
    assert 'in __init__\n    raise TypeError("ttl must be a timedelta")' in fault, "the store's frame"


def test_a_call_the_store_never_entered_is_a_binding_fault():
    """The instance's append, replaced after binding by one of another signature: Python refuses the call before
    any code of the store's runs."""
    def build(session_id):
        store = ListStore(None, "ns", 10, 3600)
        store.append = lambda session_id: None
        return store
    binding, exc = first_call_raises(ListStore, build)
    assert binding_fault(binding, exc).startswith(
        "--store 's.py:ListStore': calling its append as the suite binds it raised TypeError: "), exc


@pytest.mark.parametrize("cls", [BrokenConstructor, RaisesWhileAppending])
def test_what_the_stores_own_code_raised_of_nothing_it_was_given_is_for_the_scenarios(cls):
    binding, exc = first_call_raises(cls)
    assert binding_fault(binding, exc) is None, exc
