"""LangGraph checkpointers as the suite binds and drives them (memory_regression/frameworks/langgraph.py):
recognised by their base class, built from the contract's redis_url and ttl (minutes in the saver's
config), driven under a MessagesState graph with no model; a thread's earlier checkpoints are its
past states. The drivers run here on LangGraph's own in-memory checkpointer; the Redis savers' runs
are tests/verdicts/test_langgraph.py's."""

import asyncio

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

import langgraph.checkpoint.redis  # noqa: F401  (the framework is recognised only once imported)
from memory_regression.contract.codecs import AppendForm
from memory_regression.contract.capabilities import Capability, detect
from memory_regression.frameworks.langgraph import SERIAL, AsyncGraphDriver, GraphDriver, constructor
from tests.unit.test_frameworks import bound

SAVERS = {"langgraph.checkpoint.redis:RedisSaver": False, "langgraph.checkpoint.redis:AsyncRedisSaver": True,
          "langgraph.checkpoint.redis:ShallowRedisSaver": False}


@pytest.mark.parametrize("spec", sorted(SAVERS))
def test_a_redis_checkpointer_binds_as_a_langgraph_checkpointer(spec):
    """Named by its class, with nothing else: it takes the server's URL and the TTL, claims the TTL and
    clear (not a namespace: its search indexes and some keys take no prefix), and takes whole messages,
    through the sync or the async interface, whichever it implements."""
    binding = bound(spec)
    assert binding.shape == "LangGraph checkpointer: append(session_id, [message, ...])"
    assert binding.parameters == {"redis_url": ("redis_url",), "ttl": ("ttl",)}
    assert binding.append_form is AppendForm.MESSAGES and binding.codec.carries_fields
    assert binding.is_async is SAVERS[spec]
    assert detect(binding) >= {Capability.TTL, Capability.CLEAR, Capability.TOOL_CALLS}
    assert not detect(binding) & {Capability.NAMESPACE, Capability.COUNT_WINDOW, Capability.TOKEN_WINDOW}
    assert binding.serial_sessions == SERIAL


def test_the_ttl_goes_to_the_savers_config_in_minutes_refreshed_on_read():
    class Saver:
        def __init__(self, redis_url=None, *, ttl=None, checkpoint_prefix="checkpoint"):
            self.redis_url, self.ttl = redis_url, ttl

    saver = constructor(Saver)(redis_url="redis://127.0.0.1:6379/0", ttl=90)
    assert (saver.redis_url, saver.ttl) == ("redis://127.0.0.1:6379/0", {"default_ttl": 1.5, "refresh_on_read": True})


def test_a_checkpointer_taking_neither_is_built_with_nothing():
    assert isinstance(constructor(InMemorySaver)(), InMemorySaver)


def drive(driver, call, *args):
    result = getattr(driver, call)(*args)
    return asyncio.run(result) if asyncio.iscoroutine(result) else result


@pytest.mark.parametrize("driver_class", [GraphDriver, AsyncGraphDriver])
def test_appends_go_through_the_graph_and_a_threads_earlier_checkpoints_are_its_past(driver_class):
    driver = driver_class(InMemorySaver())
    drive(driver, "append", "s1", [HumanMessage("hello")])
    drive(driver, "append", "s1", [AIMessage("hi"), HumanMessage("again")])
    drive(driver, "append", "s2", [HumanMessage("other")])
    assert [m.content for m in drive(driver, "load", "s1")] == ["hello", "hi", "again"]
    past = drive(driver, "past_states", "s1")
    latest = driver.checkpointer.get_tuple({"configurable": {"thread_id": "s1"}}).config["configurable"]
    listed = [c.config["configurable"]["checkpoint_id"] for c in driver.checkpointer.list(
        {"configurable": {"thread_id": "s1"}})]
    assert len(listed) > 2 and set(past) == set(listed) - {latest["checkpoint_id"]}
    drive(driver, "clear", "s1")
    assert drive(driver, "load", "s1") == [] and [m.content for m in drive(driver, "load", "s2")] == ["other"]


@pytest.mark.parametrize("resumed", [False, True])
def test_a_run_that_fails_after_its_input_checkpoint_leaves_the_input_pending(resumed):
    """LangGraph alone, on its in-memory checkpointer (PENDING): a run whose checkpointer raises once
    it has saved the run's first checkpoint (as a connection lost after the write does) leaves the
    new message in what get_state shows; the next run with new input then drops it, unless the
    thread was resumed first (invoke with no input), which keeps it."""
    saver = InMemorySaver()
    driver = GraphDriver(saver)
    driver.append("t", [HumanMessage("turn 1")])
    put = saver.put

    def put_then_lose_the_reply(*args, **kwargs):
        saver.put = put
        put(*args, **kwargs)
        raise ConnectionError("Connection closed by server.")

    saver.put = put_then_lose_the_reply
    with pytest.raises(ConnectionError):
        driver.append("t", [HumanMessage("turn 2")])
    assert [m.content for m in driver.load("t")] == ["turn 1", "turn 2"]
    if resumed:
        driver._graph.invoke(None, {"configurable": {"thread_id": "t"}})
    driver.append("t", [AIMessage("answer")])
    kept = ["turn 1", "turn 2", "answer"] if resumed else ["turn 1", "answer"]
    assert [m.content for m in driver.load("t")] == kept
