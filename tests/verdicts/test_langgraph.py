"""LangGraph's Redis checkpointers (langgraph-checkpoint-redis, pinned in the test extras) run with
nothing of ours but ``--store`` and a server with RediSearch and RedisJSON (fixture
``redis_stack``): driven under a graph as an agent's runtime drives them, they pass, and what
LangGraph does by design is no failure. Its past checkpoints keep their own TTL; overlapping runs
of one thread fork it (shown here with the library alone), so the race of writers on one session is
not judged, and says why."""

import threading
from collections import Counter

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.redis import RedisSaver
from langgraph.graph import START, MessagesState, StateGraph

from memory_regression.frameworks.langgraph import SERIAL

RACE = "test_concurrent_writers_lose_nothing"
REFRESH = "test_append_refreshes_ttl"
GROWING = {"test_no_silent_cap", "test_many_fast_appends_keep_order"}


def result_of(summary, scenario):
    [result] = [r for r in summary["results"] if r["scenario"] == scenario]
    return result


def test_the_redis_saver_passes_and_is_not_judged_on_what_langgraph_does_by_design(run_suite, redis_stack):
    """Every checkpoint holds the whole history, so appends slow as it grows: the steady-appends
    warnings are true (the worker's CPU time per append grows, in the library's serialisation)."""
    result = run_suite("--store", "langgraph.checkpoint.redis:RedisSaver", "--redis", redis_stack.url())
    summary = result.summary
    assert result.exit_code == 0, result.output
    assert summary["shape"] == "LangGraph checkpointer: append(session_id, [message, ...])"
    assert summary["conformance_level"] == "core+ttl+clear+tool-calls+bounded-storage", result.output
    assert {w["nodeid"].split("::")[-1] for w in summary["warnings"]} == GROWING, summary["warnings"]
    assert all("the growth is in the store's code or its client library" in w["text"]
               for w in summary["warnings"]), summary["warnings"]
    race = result_of(summary, RACE)
    assert race["outcome"] == "skipped" and race["message"].endswith(
        f"not judged for a LangGraph checkpointer: {SERIAL}"), race
    [note] = result_of(summary, REFRESH)["findings"]
    assert "keys were of the session's past states" in note, note


def test_the_async_redis_saver_is_driven_on_the_event_loop(run_suite, redis_stack):
    result = run_suite("--store", "langgraph.checkpoint.redis:AsyncRedisSaver", "--redis", redis_stack.url(),
                       "-k", "round_trip or tool_calls or clear or ttl or concurrent_writers_lose_nothing")
    summary = result.summary
    assert result.exit_code == 0, result.output
    assert summary["conformance_level"] == "core+ttl+clear+tool-calls+async", result.output
    assert result_of(summary, RACE)["outcome"] == "skipped"
    assert result_of(summary, REFRESH)["outcome"] == "passed"


def test_overlapping_runs_of_one_thread_fork_it_with_the_library_alone(redis_stack):
    """What SERIAL says, with LangGraph alone: four threads invoke one graph on one thread 25 times
    each; runs that overlap start from the same checkpoint (checkpoints with one parent: a fork),
    and the thread then holds fewer than the 100 messages."""
    saver = RedisSaver(redis_url=redis_stack.url())
    saver.setup()
    graph = StateGraph(MessagesState)
    graph.add_node("remember", lambda state: {})
    graph.add_edge(START, "remember")
    graph = graph.compile(checkpointer=saver)
    thread = {"configurable": {"thread_id": "overlapping"}}
    barrier = threading.Barrier(4)

    def runs(writer):
        barrier.wait()
        for index in range(25):
            graph.invoke({"messages": [HumanMessage(f"writer {writer} #{index}")]}, thread)

    writers = [threading.Thread(target=runs, args=(writer,)) for writer in range(4)]
    try:
        for writer in writers:
            writer.start()
        for writer in writers:
            writer.join()
        children = Counter(each.parent_config["configurable"]["checkpoint_id"] for each in saver.list(thread)
                           if each.parent_config)
        assert max(children.values()) > 1, "no checkpoint has two children: no run overlapped another"
        assert len(graph.get_state(thread).values["messages"]) < 100
    finally:
        redis_stack.client().flushdb()   # the suite runs only on an empty database
