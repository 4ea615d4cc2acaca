"""Framework shapes: stores written to a framework's memory interface run with no adapter code.

Each framework is one module here that defines ``FRAMEWORK``, a :class:`Framework`:

- ``matches(cls)``: whether a store class is one of the framework's (a subclass of its base class,
  checked only if the user's store has already imported the framework: nothing here imports it);
- ``methods(cls)``: the store's append, load and clear members, and whether append takes one
  message or a list (a load member may be a property, as LangChain's ``messages`` is);
- ``encode(message)``: one message, an OpenAI chat-completions dict (``role``, ``content``, and
  ``tool_calls``, ``tool_call_id``, ``name``, ``metadata`` where it has them), as the framework's
  own objects: a list, because one message may be several of them (OpenAI Agents' items);
- ``decode(history)``: what the load member returned, as chat-completions dicts again, using the
  framework's own converters wherever it has them;
- for a store that holds conversations but is driven from outside (a LangGraph checkpointer,
  under a graph), ``driver(target)``: the class that drives one as the framework's runtime does,
  built with the store, whose members ``methods`` names (``target`` is the store's class, or a
  store built, where the factory is a function: which driver may depend on what it holds); and
  ``past_states(session_id)`` where the store keeps past states of a session as history beside
  the live one (a checkpointer's earlier checkpoints): their ids, so that the keys holding them
  are not taken for live state;
- for a class of the framework's own whose parameters are not the contract's (a TTL in minutes),
  ``constructor(cls)``: a factory of it taking the contract's parameters.
- ``serial_sessions``, where the framework runs one call of a session at a time by design: why,
  as the scenarios that race writers on one session say when they skip.
- ``raised_append``, where the message of an append that raised may stay or go later by design:
  why, as the lost-reply scenario notes when it leaves that message unjudged.
- ``history_rule``, where the framework gives back less than was appended by design (agno keeps
  one system prompt per session): a :class:`HistoryRule`, which the scenarios judge a history
  under and name in their notes.

To support a fourth framework, add a module with its ``FRAMEWORK`` and name it in :data:`MODULES`.
The suite compares a framework store's history with what ``decode(encode(...))`` makes of the
messages it appended, so whatever the framework's own format cannot carry (OpenAI Agents' items
have no ``name`` on a tool result) is never blamed on the store.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from dataclasses import dataclass
from typing import Any, Callable

from ..errors import UsageError

MODULES = ("langchain", "llama_index", "openai_agents", "langgraph", "langgraph_agent", "agno", "agno_agent", "adk",
           "agent_framework", "strands", "camel_storage", "agent_memory")


@dataclass(frozen=True)
class Methods:
    append: str
    load: str                 # a method, or a property read without a call
    clear: str | None
    append_takes_list: bool   # append(messages: list) rather than append(message)


@dataclass(frozen=True)
class HistoryRule:
    """What a framework gives back of a session by design, when that is not all that was appended."""

    text: str                                        # the rule, as a note names it
    keeps: Callable[[list], list]                    # the messages appended -> those a load gives back


@dataclass(frozen=True)
class Framework:
    library: str                                    # as people name it ("LangGraph")
    shape: str                                      # what of it the store is ("checkpointer")
    per_session: bool                               # one store object per session, built with session_id
    matches: Callable[[type], bool]
    methods: Callable[[type], Methods]
    encode: Callable[[dict], list]
    decode: Callable[[Any], list[dict]]
    message_type: str | None = None                 # ``module:Class`` of its message objects, if it has its own
    driver: Callable[[Any], type] | None = None     # the class that drives a store (class or built), if from outside
    constructor: Callable[[type], Callable[..., Any]] | None = None   # its own class, built from the contract's
    serial_sessions: str | None = None              # why overlapping appends to one session are outside its design
    raised_append: str | None = None                # why the message of an append that raised may stay or go
    history_rule: HistoryRule | None = None         # what it gives back of a session, by design

    @property
    def name(self) -> str:
        """As reports name the shape: "LangGraph checkpointer"."""
        return f"{self.library} {self.shape}"


def subclass_of(cls: type, qualified: str) -> bool:
    """Whether ``cls`` subclasses ``module:Class``, looked up only if that module is imported."""
    module_name, _, class_name = qualified.partition(":")
    module = sys.modules.get(module_name)
    base = getattr(module, class_name, None) if module else None
    return isinstance(cls, type) and isinstance(base, type) and issubclass(cls, base)


def overrides(cls: type, base: str, name: str) -> bool:
    """Whether ``cls`` defines ``name`` itself rather than inheriting the base class's default."""
    module_name, _, class_name = base.partition(":")
    base_class = getattr(sys.modules[module_name], class_name)
    return getattr(cls, name, None) is not getattr(base_class, name, None)


def built_from_contract(cls: type, names: dict[str, str | tuple[str, ...]],
                        convert: dict[str, Callable[[Any], Any]] | None = None,
                        fixed: dict[str, Any] | None = None) -> Callable[..., Any]:
    """A factory of ``cls`` taking the contract's parameters ``names`` maps to its own (those of them
    ``cls`` takes: of several names, the first it takes, as two libraries of one framework name a
    parameter otherwise), each value converted by ``convert`` where it names one, and ``fixed`` as they
    are (those ``cls`` takes): what binds as the store."""
    taken = inspect.signature(cls).parameters
    own: dict[str, str] = {}
    for contract, choices in names.items():
        found = [name for name in ((choices,) if isinstance(choices, str) else choices) if name in taken]
        if found:
            own[contract] = found[0]
    convert = convert or {}
    fixed = {name: value for name, value in (fixed or {}).items() if name in taken}

    def build(**values: Any) -> Any:
        return cls(**{own[contract]: convert.get(contract, lambda value: value)(value)
                      for contract, value in values.items()}, **fixed)

    build.__signature__ = inspect.Signature(   # type: ignore[attr-defined]
        [inspect.Parameter(contract, inspect.Parameter.KEYWORD_ONLY) for contract in own], return_annotation=cls)
    return build


@dataclass(frozen=True)
class ForUser:
    """A framework's store, and the user whose sessions its driver keeps in it (the contract's ``user_id``):
    a framework whose calls take a user beside the session is a store with tenants."""

    service: Any
    user_id: str | None


def for_user(build: Callable[..., Any], optional: bool = False) -> Callable[..., ForUser]:
    """``build`` (:func:`built_from_contract`'s factory) taking the contract's ``user_id`` too, which a
    driver reads from the :class:`ForUser` it is given: required, or ``optional`` (none when not given)."""
    def tenant(*, user_id: str | None = None, **values: Any) -> ForUser:
        return ForUser(build(**values), user_id)
    signature = inspect.signature(build)
    tenant.__signature__ = signature.replace(   # type: ignore[attr-defined]
        parameters=[*signature.parameters.values(),
                    inspect.Parameter("user_id", inspect.Parameter.KEYWORD_ONLY,
                                      default=None if optional else inspect.Parameter.empty)])
    return tenant


def agent_memory(target: Any, agent: str, member: str, base: str, fix: str) -> Any:
    """The memory of an agent its factory built (``target.member``, a ``base``), which says how to
    drive the agent, or a usage error saying what to fix: ``agent`` names the kind of agent, ``fix``
    how to build one with a memory."""
    if isinstance(target, type):
        raise UsageError(f"{agent} is bound from the agent its factory returns, whose {member} says how to drive it: "
                         "remove the factory's return annotation")
    memory = getattr(target, member, None)
    if not subclass_of(type(memory), base):
        raise UsageError(f"the agent has no {member}, so it keeps no conversation: build it with one ({fix})")
    return memory


def registered() -> list[Framework]:
    """Every framework of :data:`MODULES`, in its order: the one list of them, which the contract's
    summary and the docs derive theirs from."""
    return [importlib.import_module(f"{__name__}.{name}").FRAMEWORK for name in MODULES]


def framework_of_messages(history: Any) -> Framework | None:
    """The framework whose message objects ``history`` (what a store that is no framework's loaded)
    is a list of, so that they are read with its own converters, as a framework store's are; None
    for anything else (dicts, objects of the store's own). Only a framework already imported counts."""
    if not isinstance(history, list) or not history:
        return None
    for framework in registered():
        if framework.message_type and all(subclass_of(type(item), framework.message_type) for item in history):
            return framework
    return None


def framework_of(cls: Any) -> Framework | None:
    """The framework whose store ``cls`` is, if any."""
    if not isinstance(cls, type):
        return None
    for framework in registered():
        if framework.matches(cls):
            return framework
    return None
