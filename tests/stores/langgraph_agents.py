"""Agents over LangGraph's ``RedisSaver`` whose hooks window what the model is sent, as LangGraph's and
LangChain's short-term memory guides write them: the applications' code, not adapters, for the
verdicts table (tests/stores/libraries.py). The suite drives the graph with no model."""

from langchain.agents import create_agent
from langchain.agents.middleware import before_model
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import RemoveMessage, trim_messages
from langgraph.checkpoint.redis import RedisSaver
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.prebuilt import create_react_agent


def never_called_model():
    """The agents' model: the suite stops an agent's graph before its model node, so it answers nothing."""
    return GenericFakeChatModel(messages=iter(()))


def react_agent_trimming_to_budget(redis_url, max_tokens, count_tokens):
    """LangGraph's ``create_react_agent`` over a ``RedisSaver``, whose ``pre_model_hook`` sends the model
    the system prompt and the last messages of the thread that fit ``max_tokens`` beside it, starting on a
    user message, as LangGraph's short-term memory guide writes it (``trim_messages`` into
    ``llm_input_messages``)."""
    def pre_model_hook(state):
        return {"llm_input_messages": trim_messages(
            state["messages"], strategy="last", max_tokens=max_tokens, start_on="human", include_system=True,
            token_counter=lambda messages: sum(count_tokens(message.content) for message in messages))}
    return create_react_agent(never_called_model(), [], pre_model_hook=pre_model_hook,
                              checkpointer=RedisSaver(redis_url=redis_url))


def agent_trimming_to_window(redis_url, max_messages):
    """LangChain's ``create_agent`` over a ``RedisSaver``, whose ``before_model`` middleware keeps the
    system prompt and the last messages of the thread, ``max_messages`` in all, starting on a user
    message, in the state itself, as
    LangChain's short-term memory guide writes it (``RemoveMessage(REMOVE_ALL_MESSAGES)``, then those)."""
    @before_model
    def keep_window(state, runtime):
        kept = trim_messages(state["messages"], strategy="last", max_tokens=max_messages, token_counter=len,
                             start_on="human", include_system=True)
        return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *kept]}
    return create_agent(never_called_model(), [], middleware=[keep_window],
                        checkpointer=RedisSaver(redis_url=redis_url))
