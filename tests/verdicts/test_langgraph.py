"""LangGraph's Redis checkpointers (langgraph-checkpoint-redis, pinned in the test extras) run with
nothing of ours but ``--store`` and a server with RediSearch and RedisJSON (fixture
``redis_stack``): driven under a graph as an agent's runtime drives them, they pass, and what
LangGraph does by design is no failure. Its past checkpoints keep their own TTL; overlapping runs
of one thread fork it (shown here with the library alone), so the race of writers on one session is
not judged, and says why; and every checkpoint holds the whole history (shown here too), so appends
slow as it grows."""

import re
import threading
from collections import Counter

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.redis import RedisSaver
from langgraph.graph import START, MessagesState, StateGraph

from memory_regression.frameworks.langgraph import SERIAL
from memory_regression.worker.outcomes import INDEX_ON_DATABASE_ZERO
from tests.stores.libraries import AGENT_POLICY, LANGGRAPH, MIDDLEWARE_AGENT

RACE = "test_concurrent_writers_lose_nothing"
REFRESH = "test_append_refreshes_ttl"


def test_what_langgraph_does_by_design_is_not_judged_and_the_reports_say_why(run_suite, redis_stack):
    """Its verdict is tests/verdicts/test_frameworks.py's; here what the reports say: the race of
    writers on one session is skipped, saying why, and the TTL refresh scenario counts the keys of
    past checkpoints it did not expect back."""
    result = run_suite("--store", LANGGRAPH, "--redis", redis_stack.url(),
                       "-k", f"{RACE} or {REFRESH}")
    assert result.exit_code == 0, result.output
    race, refresh = (next(r for r in result.summary["results"] if r["scenario"] == name) for name in (RACE, REFRESH))
    assert race["outcome"] == "skipped" and race["message"].endswith(
        f"not judged for a LangGraph checkpointer: {SERIAL}"), race
    assert refresh["outcome"] == "passed", refresh
    [note] = refresh["findings"]
    assert re.fullmatch(r"\d+ of the \d+ keys were of the session's past states, which the store keeps as history "
                        r"beside what a load reads: their TTLs were not expected back", note), note


def checkpointed_graph(url):
    """A RedisSaver on ``url`` and a graph over it as an application writes one: MessagesState, one
    node, no model."""
    saver = RedisSaver(redis_url=url)
    saver.setup()
    graph = StateGraph(MessagesState)
    graph.add_node("remember", lambda state: {})
    graph.add_edge(START, "remember")
    return saver, graph.compile(checkpointer=saver)


def test_overlapping_runs_of_one_thread_fork_it_with_the_library_alone(redis_stack):
    """What SERIAL says, with LangGraph alone: four threads invoke one graph on one thread 25 times
    each; runs that overlap start from the same checkpoint (checkpoints with one parent: a fork),
    and the thread then holds fewer than the 100 messages."""
    saver, graph = checkpointed_graph(redis_stack.url())
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


def test_a_thread_with_whitespace_around_its_id_outlives_delete_thread_with_the_library_alone(redis_stack):
    """What test_clearing_one_session_leaves_every_other_whole finds: delete_thread(' alice ') returns,
    and the thread still holds its message; delete_thread('a b') empties its own."""
    saver, graph = checkpointed_graph(redis_stack.url())
    try:
        for thread_id in (" alice ", "a b"):
            graph.invoke({"messages": [HumanMessage(f"hello from {thread_id!r}")]},
                         {"configurable": {"thread_id": thread_id}})
            saver.delete_thread(thread_id)
        left = {thread_id: graph.get_state({"configurable": {"thread_id": thread_id}}).values.get("messages", [])
                for thread_id in (" alice ", "a b")}
        assert [message.content for message in left[" alice "]] == ["hello from ' alice '"] and left["a b"] == []
    finally:
        redis_stack.client().flushdb()   # the suite runs only on an empty database


def test_every_checkpoint_holds_the_whole_history_with_the_library_alone(redis_stack):
    """Why the checkpointers' appends slow as the history grows (their steady-appends warnings): the
    latest checkpoint's document after 100 runs of one message each is about ten times what it is
    after 10."""
    import redis as redis_py
    saver, graph = checkpointed_graph(redis_stack.url())
    thread = {"configurable": {"thread_id": "growing"}}
    client, sizes = redis_py.Redis(port=redis_stack.port), {}
    try:
        for runs in range(1, 101):
            graph.invoke({"messages": [HumanMessage("x" * 100)]}, thread)
            if runs in (10, 100):
                latest = graph.get_state(thread).config["configurable"]["checkpoint_id"]
                [key] = client.keys(f"checkpoint:growing:*{latest}")
                sizes[runs] = client.memory_usage(key)
        assert sizes[100] > 5 * sizes[10], sizes
    finally:
        client.flushdb()
        client.close()


def test_a_checkpointer_on_a_database_other_than_0_is_told_where_its_index_can_live(run_suite, redis_stack):
    """RediSearch indexes only database 0: a run that gives the store another stops at once with a
    configuration error saying how to give it database 0, instead of failing every scenario."""
    result = run_suite("--store", LANGGRAPH, "--redis", redis_stack.url(db=3),
                       "-k", "round_trip or fresh_session")
    assert result.exit_code == 2, result.output
    assert result.summary["message"].endswith(INDEX_ON_DATABASE_ZERO), result.summary["message"]


def test_an_agent_that_trims_its_thread_is_told_its_past_checkpoints_grow_not_its_window(run_suite, redis_stack):
    """create_agent with a middleware that rewrites the thread to its window: the session's keys grow
    past the bound, but the warning says that its live state stayed within it and that what grew is
    the checkpointer's earlier checkpoints, not a window applied only when reading."""
    result = run_suite("--store", MIDDLEWARE_AGENT, "--redis", redis_stack.url(), *AGENT_POLICY,
                       "-k", "storage_stays_within_the_window")
    assert result.exit_code == 0, result.output
    warnings = [w["text"] for w in result.summary["warnings"]]
    past_grows = ("the live state stays within the bound, and what grows is the past states (a LangGraph "
                  "checkpointer's earlier checkpoints)")
    assert len(warnings) == 2 and all(past_grows in warning and "trims only when loading" not in warning
                                      for warning in warnings), warnings
