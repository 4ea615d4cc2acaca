"""LangGraph agents as the suite binds and drives them (memory_regression/frameworks/langgraph_agent.py):
the graph a factory returns (create_react_agent, or LangChain's create_agent), run up to its model node
with its hooks, on the checkpointer it was compiled with; a load is what the model would be sent. On
LangGraph's in-memory checkpointer here; over RedisSaver in tests/verdicts/test_frameworks.py."""

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, trim_messages
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import create_react_agent

from memory_regression.errors import UsageError
from memory_regression.frameworks.langgraph import AsyncGraphDriver, GraphDriver
from memory_regression.frameworks.langgraph_agent import FRAMEWORK, driver
from memory_regression.frameworks import framework_of
from tests.stores.langgraph_agents import never_called_model
from tests.unit.test_langgraph import drive

TURNS = [SystemMessage("be brief"), HumanMessage("u1"), AIMessage("a1"), HumanMessage("u2"), AIMessage("a2")]


def last_three(state):
    return {"llm_input_messages": trim_messages(state["messages"], strategy="last", max_tokens=3, token_counter=len,
                                                start_on="human", include_system=True)}


def contents(messages):
    return [message.content for message in messages]


@pytest.mark.parametrize("driver_class", [GraphDriver, AsyncGraphDriver])
def test_a_pre_model_hook_is_what_a_load_gives_and_the_thread_keeps_everything(driver_class):
    agent = create_react_agent(never_called_model(), [], pre_model_hook=last_three, checkpointer=InMemorySaver())
    assert framework_of(type(agent)) is FRAMEWORK
    driven = driver_class(agent)
    for turn in TURNS:
        drive(driven, "append", "t", [turn])
    assert contents(drive(driven, "load", "t")) == ["be brief", "u2", "a2"]
    state = agent.get_state({"configurable": {"thread_id": "t"}})
    assert contents(state.values["messages"]) == contents(TURNS) and state.next == ("agent",)
    drive(driven, "clear", "t")
    assert drive(driven, "load", "t") == []


def test_a_middleware_that_rewrites_the_state_is_what_a_load_gives():
    from langchain.agents.middleware import before_model
    from langchain_core.messages import RemoveMessage
    from langgraph.graph.message import REMOVE_ALL_MESSAGES

    @before_model
    def keep_three(state, runtime):
        kept = last_three(state)["llm_input_messages"]
        return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *kept]}

    agent = create_agent(never_called_model(), [], middleware=[keep_three], checkpointer=InMemorySaver())
    driven = driver(agent)(agent)
    for turn in TURNS:
        drive(driven, "append", "t", [turn])
    assert contents(drive(driven, "load", "t")) == ["be brief", "u2", "a2"]
    assert len(drive(driven, "past_states", "t")) > len(TURNS)


def test_a_graph_the_suite_cannot_drive_is_told_what_to_fix():
    with pytest.raises(UsageError, match="the agent has no checkpointer"):
        driver(create_react_agent(never_called_model(), []))
    plain = StateGraph(MessagesState)
    plain.add_node("remember", lambda state: {})
    plain.add_edge(START, "remember")
    with pytest.raises(UsageError, match="has no model node"):
        driver(plain.compile(checkpointer=InMemorySaver()))
    with pytest.raises(UsageError, match="remove the factory's return annotation"):
        driver(type(plain.compile()))
