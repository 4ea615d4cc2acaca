"""LangGraph agents: an agent's compiled graph (``create_react_agent`` of ``langgraph.prebuilt``, or
LangChain's ``create_agent``) with the checkpointer it was compiled with, as a factory returns it.
Its memory is the checkpointer's thread, and what the model is sent of it is what the agent's own
hooks leave: a ``pre_model_hook`` that trims (``trim_messages``) into ``llm_input_messages``, or a
``before_model`` middleware that rewrites the state's messages.

The suite runs the agent's own graph as its runtime does, stopped before the node that calls the
model (``agent`` or ``model``: :data:`.langgraph.MODEL_NODES`), so that every hook before it runs and
no model is called; a load is what the model would be sent (``llm_input_messages`` where a hook gave
them, else the state's messages). The rest is a checkpointer's (:mod:`.langgraph`): its drivers,
its past checkpoints, its rules. A window the hook applies is the factory's to take from the
contract (``max_messages``, or ``max_tokens`` and ``count_tokens``), and is claimed as the
factory's parameters say.
"""

from __future__ import annotations

from typing import Any

from ..errors import UsageError
from . import Framework, Methods, agent_memory, langchain, langgraph, subclass_of


def driver(target: Any) -> type:
    """The driver of an agent's graph, as its checkpointer's is: a graph built by the factory, with
    a checkpointer and a model node, or what to fix."""
    checkpointer = agent_memory(target, "a LangGraph agent", "checkpointer", langgraph.BASE,
                                "create_react_agent(..., checkpointer=RedisSaver(redis_url=redis_url))")
    if not any(node in target.nodes for node in langgraph.MODEL_NODES):
        raise UsageError(f"the agent's graph has no model node ({' or '.join(langgraph.MODEL_NODES)}), so the suite "
                         "cannot stop it before the model: build it with create_react_agent or create_agent")
    return langgraph.driver(checkpointer)


FRAMEWORK = Framework("LangGraph", "agent", per_session=False,
                      matches=lambda cls: subclass_of(cls, langgraph.GRAPH),
                      methods=lambda cls: Methods("append", "load", "clear", append_takes_list=True),
                      encode=langchain.encode, decode=langchain.decode, driver=driver,
                      serial_sessions=langgraph.SERIAL, raised_append=langgraph.PENDING)
