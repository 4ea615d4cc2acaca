"""Whose a scenario's exception is (memory_regression/outcomes.py): the store's where a call of the store
raised it (its factory, a method, reading what its load returned), else the suite's own, which is not
a finding about the store."""

import pytest

from memory_regression.adapter import StoreAdapter
from memory_regression.binding import bind_store
from memory_regression.outcomes import NOT_THE_STORE, describe_outcome


class LazyStore:
    """Loads a generator, whose items are read after load returned: a corrupt message raises then."""

    def __init__(self, redis_url):
        self.sessions = {}

    def add_message(self, session_id, role, content):
        if content == "refused":
            raise ConnectionError("the server refused the append")
        self.sessions.setdefault(session_id, []).append({"role": role, "content": content})

    def get_messages(self, session_id):
        return (message if message["content"] != "corrupt" else {}["content"]
                for message in self.sessions.get(session_id, []))


def adapter():
    binding = bind_store("test_outcomes.py:LazyStore", LazyStore, None, {}, lambda binding: None)
    return StoreAdapter(binding, lambda session_id: LazyStore("redis://"), run=lambda awaitable: None)


def message_of(exc: BaseException) -> str:
    report = pytest.TestReport("suite/test_core.py::test_x", ("suite/test_core.py", 1, "test_x"), {}, "failed",
                               "the traceback", "call")
    return describe_outcome(report, pytest.ExceptionInfo.from_exception(exc))["message"]


def raised(call) -> BaseException:
    with pytest.raises(Exception) as caught:
        call()
    return caught.value


def test_what_a_call_of_the_store_raised_is_the_stores_also_when_read_after_it_returned():
    store = adapter()
    assert message_of(raised(lambda: store.append("s", "user", "refused"))) == (
        "the store raised ConnectionError: the server refused the append")
    store.append("s", "user", "corrupt")
    assert message_of(raised(lambda: store.load("s"))) == "the store raised KeyError: 'content'"


def test_what_the_suite_raised_outside_any_call_of_the_store_is_said_not_to_be_the_stores():
    message = message_of(raised(lambda: {}["a key of the suite's own"]))
    assert message == f"the suite's own code raised KeyError: \"a key of the suite's own\", outside any call of the " \
                      f"store: {NOT_THE_STORE}"
    assert "the store raised" not in message
