"""LangGraph: a checkpointer (``BaseCheckpointSaver``; langgraph-checkpoint-redis's ``RedisSaver``,
``AsyncRedisSaver`` and ``ShallowRedisSaver`` among them) is short-term memory under a graph, one
object for all sessions, a session being a ``thread_id``.

The suite drives it as an agent's runtime does, with no model: a graph whose state is
``MessagesState`` (its ``add_messages`` reducer appends what a step returns), one node that adds
nothing, compiled with the checkpointer. Append runs the graph on ``{"messages": [...]}`` on the
session's thread (``stream``: ``invoke``, telling each checkpoint it saves), load is
``get_state(...).values["messages"]``, clear is ``delete_thread``; a checkpointer that implements
the async interface (``aget_tuple``) is driven through ``astream``, ``aget_state`` and
``adelete_thread``. A ``setup``/``asetup`` it has (langgraph-checkpoint-redis creates its search
indexes there) runs once, before its first call. Messages are LangChain's, converted as
:mod:`.langchain` converts them. A thread's earlier checkpoints are its history
(``past_states``); runs of one thread do not overlap by design (:data:`SERIAL`), and the input of
a run that failed may stay or go (:data:`PENDING`).

Named by its class (``--store langgraph.checkpoint.redis:RedisSaver``), the checkpointer is built
from the contract's ``redis_url`` and ``ttl`` where its class takes them, the TTL as its ``ttl``
config: minutes, refreshed when a checkpoint is read (``refresh_on_read``) as when one is written.
"""

from __future__ import annotations

from typing import Any, Callable

from . import Framework, Methods, built_from_contract, langchain, overrides, subclass_of

BASE = "langgraph.checkpoint.base:BaseCheckpointSaver"
GRAPH = "langgraph.pregel:Pregel"    # a compiled graph: an agent's (langgraph_agent)
MODEL_NODES = ("agent", "model")     # the node that calls the model: create_react_agent's, LangChain's create_agent's


def _graph(checkpointer: Any) -> Any:
    from langgraph.graph import START, MessagesState, StateGraph
    graph = StateGraph(MessagesState)
    graph.add_node("remember", lambda state: {})
    graph.add_edge(START, "remember")
    return graph.compile(checkpointer=checkpointer)


def _driven(store: Any) -> tuple[Any, Any, list[str] | None]:
    """The graph an append runs, the checkpointer under it, and the node the run stops before: a
    checkpointer under the suite's own graph, run to its end; an agent's graph (see
    :mod:`.langgraph_agent`) under the checkpointer it was compiled with, stopped before its model
    node, its hooks run."""
    if not subclass_of(type(store), GRAPH):
        return _graph(store), store, None
    return store, store.checkpointer, [next(node for node in MODEL_NODES if node in store.nodes)]


def _sent(values: dict) -> list:
    """What the model is sent from a thread's state: what a pre-model hook gave it
    (``llm_input_messages``), where one did, else the state's messages."""
    return values.get("llm_input_messages", values.get("messages", []))


def _thread(session_id: str) -> dict:
    return {"configurable": {"thread_id": session_id}}


def _checkpoint_id(config: dict) -> str:
    return config["configurable"]["checkpoint_id"]


def _past(checkpoints: list[str], latest: Any) -> list[str]:
    """The ids of ``checkpoints`` but the latest checkpoint's, once each: a thread's history, which
    a load does not read."""
    live = _checkpoint_id(latest.config) if latest else None
    return [checkpoint for checkpoint in dict.fromkeys(checkpoints) if checkpoint != live]


class GraphDriver:
    """A checkpointer under a graph (or an agent's graph), driven with the sync interface. It keeps
    the ids of the checkpoints its appends saved, by thread: a shallow checkpointer lists only the
    latest, and keeps the pending writes of the others until their TTL."""

    def __init__(self, store: Any):
        self._graph, self.checkpointer, self._stop = _driven(store)
        self._saved: dict[str, list[str]] = {}
        setup = getattr(self.checkpointer, "setup", None)
        if callable(setup):
            setup()

    def append(self, session_id: str, messages: list) -> None:
        saved = self._saved.setdefault(session_id, [])
        for step in self._graph.stream({"messages": messages}, _thread(session_id), stream_mode="checkpoints",
                                       interrupt_before=self._stop):
            saved.append(_checkpoint_id(step["config"]))

    def load(self, session_id: str) -> list:
        return _sent(self._graph.get_state(_thread(session_id)).values)

    def clear(self, session_id: str) -> None:
        self.checkpointer.delete_thread(session_id)
        self._saved.pop(session_id, None)

    def past_states(self, session_id: str) -> list[str]:
        listed = [_checkpoint_id(each.config) for each in self.checkpointer.list(_thread(session_id))]
        return _past(self._saved.get(session_id, []) + listed, self.checkpointer.get_tuple(_thread(session_id)))


class AsyncGraphDriver:
    """A checkpointer under a graph, driven with the async interface, as :class:`GraphDriver` is
    with the sync one."""

    def __init__(self, store: Any):
        self._graph, self.checkpointer, self._stop = _driven(store)
        self._saved: dict[str, list[str]] = {}
        self._set_up = not callable(getattr(self.checkpointer, "asetup", None))

    async def _ready(self) -> Any:
        if not self._set_up:   # on the loop the checkpointer's calls run on, which it keeps
            await self.checkpointer.asetup()
            self._set_up = True
        return self._graph

    async def append(self, session_id: str, messages: list) -> None:
        saved = self._saved.setdefault(session_id, [])
        async for step in (await self._ready()).astream({"messages": messages}, _thread(session_id),
                                                         stream_mode="checkpoints", interrupt_before=self._stop):
            saved.append(_checkpoint_id(step["config"]))

    async def load(self, session_id: str) -> list:
        return _sent((await (await self._ready()).aget_state(_thread(session_id))).values)

    async def clear(self, session_id: str) -> None:
        await self._ready()
        await self.checkpointer.adelete_thread(session_id)
        self._saved.pop(session_id, None)

    async def past_states(self, session_id: str) -> list[str]:
        await self._ready()
        listed = [_checkpoint_id(each.config) async for each in self.checkpointer.alist(_thread(session_id))]
        return _past(self._saved.get(session_id, []) + listed, await self.checkpointer.aget_tuple(_thread(session_id)))

    async def aclose(self) -> None:
        close = getattr(self.checkpointer, "__aexit__", None)   # the async Redis savers close their client there
        if close is not None:
            await close(None, None, None)


def driver(target: Any) -> type:
    """The driver of a checkpointer (a class, or one built): async where it implements the async
    interface."""
    return AsyncGraphDriver if overrides(target if isinstance(target, type) else type(target), BASE,
                                         "aget_tuple") else GraphDriver


def constructor(cls: type) -> Callable[..., Any]:
    """``cls`` built from the contract's ``redis_url`` and ``ttl`` (seconds), those of them it takes."""
    return built_from_contract(cls, {"redis_url": "redis_url", "ttl": "ttl"},
                               {"ttl": lambda seconds: {"default_ttl": seconds / 60, "refresh_on_read": True}})


SERIAL = ("a thread takes one run at a time by design: runs that overlap both start from the same checkpoint and "
          "fork the thread, and the fork written last is what loads (LangGraph's platform queues, rejects or "
          "interrupts a second run of a busy thread: double-texting)")

PENDING = ("the input of a run that failed after saving its first checkpoint stays pending, which get_state shows, "
           "until the thread is resumed (invoke(None)); a new run with new input drops it")

FRAMEWORK = Framework("LangGraph", "checkpointer", per_session=False, matches=lambda cls: subclass_of(cls, BASE),
                      methods=lambda cls: Methods("append", "load", "clear", append_takes_list=True),
                      encode=langchain.encode, decode=langchain.decode, driver=driver, constructor=constructor,
                      serial_sessions=SERIAL, raised_append=PENDING)
