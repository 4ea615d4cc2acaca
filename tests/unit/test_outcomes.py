"""Whose a scenario's exception is (memory_regression/worker/outcomes.py): the store's where a call of the store
raised it (its factory, a method, reading what its load returned), else the suite's own, which is not
a finding about the store: the scenario judged nothing (its verdict says so, and its outcome is an
error). No class of the store's can move its exception from one side to the other."""

import httpx
import pytest

from memory_regression.contract.adapter import OutcomeFromStore, StoreAdapter
from memory_regression.contract.binding import bind_store
from memory_regression.reports.phase_report import Verdict
from memory_regression.worker.outcomes import NOT_THE_STORE, describe_outcome


class LazyStore:
    """Loads a generator, whose items are read after load returned: a corrupt message raises then."""

    def __init__(self, redis_url):
        self.sessions = {}

    def add_message(self, session_id, role, content):
        if content == "refused":
            raise ConnectionError("the server refused the append")
        if content == "unmarkable":
            raise Unmarkable("an exception that takes no attributes and hides them")
        if content == "summarised":   # the store's service, whose summariser has no model credentials
            request = httpx.Request("PUT", "http://127.0.0.1:8000/v1/working-memory/s")
            raise httpx.HTTPStatusError("Server error '500 Internal Server Error' for url "
                                        "'http://127.0.0.1:8000/v1/working-memory/s'", request=request,
                                        response=httpx.Response(500, request=request))
        self.sessions.setdefault(session_id, []).append({"role": role, "content": content})

    def get_messages(self, session_id):
        return (self.read(message) for message in self.sessions.get(session_id, []))

    @staticmethod
    def read(message):
        if message["content"] == "corrupt":
            return {}["content"]
        if message["content"] == "skipping":
            pytest.skip("a skip raised while the loaded history is read")
        if message["content"] == "touchy":
            return {"role": message["role"], "content": Touchy(message["content"])}
        return message


class Unmarkable(Exception):
    """Refuses to take, or to show, an attribute of the suite's (the mark of what the store raised)."""

    def __setattr__(self, name, value):
        if name.startswith("_memory"):
            raise AttributeError(name)
        super().__setattr__(name, value)

    def __getattribute__(self, name):
        if name.startswith("_memory"):
            raise AttributeError(name)
        return super().__getattribute__(name)


class Touchy(str):
    """A string whose comparisons raise: were it to reach the suite's own checks, what it raised there
    would pass for the suite's own exception."""

    def __eq__(self, other):
        raise RuntimeError("compared")

    __hash__ = str.__hash__


def adapter():
    binding = bind_store("test_outcomes.py:LazyStore", LazyStore, None, {}, lambda binding: None)
    return StoreAdapter(binding, lambda session_id: LazyStore("redis://"), run=lambda awaitable: None)


def verdict_of(exc: BaseException, when: str = "call") -> Verdict:
    report = pytest.TestReport("suite/test_core.py::test_x", ("suite/test_core.py", 1, "test_x"), {}, "failed",
                               "the traceback", when)
    return describe_outcome(report, pytest.ExceptionInfo.from_exception(exc))


def message_of(exc: BaseException) -> str:
    return verdict_of(exc).message


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
    assert not verdict_of(raised(lambda: store.load("s"))).not_judged


def test_what_building_the_store_raised_says_so():
    """A store built per session is built at its session's first call: what its factory raises is
    worded as the building's, not as the call's."""
    binding = bind_store("test_outcomes.py:LazyStore", LazyStore, None, {}, lambda binding: None)
    binding.per_session = True

    def build(session_id):
        raise AttributeError("'dict' object has no attribute 'index'")
    store = StoreAdapter(binding, build, run=lambda awaitable: None)
    assert message_of(raised(lambda: store.append("s", "user", "hello"))) == (
        "building the store raised AttributeError: 'dict' object has no attribute 'index'")


def test_an_exception_class_of_the_stores_that_refuses_attributes_is_still_the_stores():
    store = adapter()
    assert message_of(raised(lambda: store.append("s", "user", "unmarkable"))) == (
        "the store raised tests.unit.test_outcomes.Unmarkable: an exception that takes no attributes and hides them")


def test_a_skip_raised_while_the_loaded_history_is_read_is_the_stores_failure():
    store = adapter()
    store.append("s", "user", "skipping")
    with pytest.raises(OutcomeFromStore, match="the store's get_messages's result raised Skipped"):
        store.load("s")


def test_what_a_load_returns_reaches_the_suite_as_plain_strings():
    store = adapter()
    store.append("s", "user", "touchy")
    [message] = store.load("s")
    assert type(message.content) is str and message.content == "touchy"


def test_what_the_suite_raised_outside_any_call_of_the_store_is_said_not_to_be_the_stores():
    message = message_of(raised(lambda: {}["a key of the suite's own"]))
    assert message == f"the suite's own code raised KeyError: \"a key of the suite's own\", outside any call of the " \
                      f"store: {NOT_THE_STORE}"
    assert verdict_of(raised(lambda: {}["x"])).not_judged is True
    teardown = verdict_of(raised(lambda: {}["x"]), "teardown")
    assert teardown.message == (f"the suite's own code raised KeyError: 'x', in the scenario's teardown: "
                                   f"{NOT_THE_STORE}")
    assert teardown.not_judged is True


def test_several_distinct_failures_are_each_the_stores():
    """Hypothesis raises an exception group when it finds several distinct failures: the store's are its
    failures, each told; the group is no defect of the suite's."""
    store = adapter()

    def group(*exceptions):
        raise ExceptionGroup("Hypothesis found 2 distinct failures.", list(exceptions))
    found = raised(lambda: group(raised(lambda: store.append("s", "user", "refused")),
                                 AssertionError("load returned 3 messages, expected 2")))
    verdict = verdict_of(found)
    assert not verdict.not_judged
    assert verdict.message == ("2 distinct failures: (1) the store raised ConnectionError: the server refused the "
                                  "append; (2) load returned 3 messages, expected 2")
    assert verdict_of(raised(lambda: group(raised(lambda: {}["x"]), KeyError("y")))).not_judged is True


def test_a_service_that_answers_an_http_error_is_named_as_what_failed():
    """The store calls a service (agent-memory-server) whose summariser fails: the failure is the service's
    answer, said as such, with the store's own message."""
    store = adapter()
    assert message_of(raised(lambda: store.append("s", "user", "summarised"))) == (
        "the service the store calls failed: it answered HTTP 500 (Internal Server Error) to PUT "
        "http://127.0.0.1:8000/v1/working-memory/s; the store raised httpx.HTTPStatusError: Server error '500 Internal "
        "Server Error' for url 'http://127.0.0.1:8000/v1/working-memory/s'")
