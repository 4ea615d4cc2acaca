"""Calling a store: :class:`StoreAdapter` calls one store the same way whatever its shape (sync or
async, one object for all sessions or one per session, role and content or whole messages), through
the members its :class:`~.binding.StoreBinding` found; a test outcome the store raises (a skip, an
exit) is its failure (:class:`OutcomeFromStore`)."""

from __future__ import annotations

import asyncio
import inspect
import unittest
from collections import Counter
from contextlib import contextmanager, nullcontext
from typing import Any, Callable, ContextManager, Generator, Iterator

import pytest

from .codecs import AppendForm
from .binding import StoreBinding
from .rules import Message, normalize_history
from ..errors import UsageError
from .frames import exception_chain
from ..frameworks import framework_of_messages


# what pytest and unittest take for a test's own outcome (a skip, the end of the run, an expected failure)
TEST_OUTCOMES = (pytest.skip.Exception, pytest.exit.Exception, pytest.xfail.Exception, unittest.SkipTest)


class OutcomeFromStore(AssertionError):
    """A test outcome raised from the store's code: pytest would skip the scenario or end the run
    for it, and a store that stores nothing would pass; it is the store's failure instead."""

    def __init__(self, member: str, raised: BaseException):
        super().__init__(f"the store's {member} raised {type(raised).__name__}: {raised}, a test outcome raised from "
                         f"the store's code, which is the store's failure: a memory store must not skip or end "
                         f"the tests that use it")


# set on what a call of the store raised (also through chained exceptions): a scenario's exception without
# it was raised outside any call of the store, by the suite's own code (:func:`raised_by_store`)
_STORE_RAISED = "_memory_regression_raised_by_store"
FACTORY = "factory"   # what the mark names for the call that builds a store instance
# an exception's own attributes, read and written past its class: an exception class of the store that
# refuses attributes, or hides them, can neither refuse the mark nor hide it
_ATTRIBUTES_OF = BaseException.__dict__["__dict__"].__get__


def from_store(exc: BaseException, member: str = "") -> BaseException:
    """Mark ``exc`` as raised by a call of the store: its ``member`` (FACTORY, a method, reading what
    it returned) where known, as a writer process's work is not; the first mark stays. Returns it."""
    _ATTRIBUTES_OF(exc).setdefault(_STORE_RAISED, member or True)
    return exc


def raised_by_store(exc: BaseException) -> bool:
    """Whether ``exc``, or an exception it was raised from or during, came out of a call of the store."""
    return any(_ATTRIBUTES_OF(link).get(_STORE_RAISED, False) for link in exception_chain(exc))


def raised_in(exc: BaseException) -> str:
    """The call of the store that raised ``exc`` (or what it was raised from), as :func:`from_store`
    marked it: FACTORY, a method, or "" where it is not known or not the store's."""
    marks = [_ATTRIBUTES_OF(link).get(_STORE_RAISED) for link in exception_chain(exc)]
    return next((mark for mark in marks if isinstance(mark, str)), "")


@contextmanager
def store_code(member: str) -> Iterator[None]:
    """Run the store's code (its ``member``: a method, its factory, what it returned being read):
    what it raises is marked as the store's (:func:`from_store`), and a test outcome it raises (a
    skip, an exit) is its failure (:class:`OutcomeFromStore`)."""
    try:
        yield
    except TEST_OUTCOMES as exc:
        raise OutcomeFromStore(member, exc) from exc
    except BaseException as exc:
        from_store(exc, member)
        raise


class StoreAdapter:
    """One store under test, called the same way whatever its shape: sync or async, one object for
    all sessions or one per session (built on first use with ``build(session_id)``), taking role and
    content or whole messages."""

    def __init__(self, binding: StoreBinding, build: Callable[[str | None], Any], run: Callable[[Any], Any],
                 watch: Callable[[str, tuple], ContextManager[Any]] = lambda method, args: nullcontext(),
                 user_id: str | None = None):
        self.binding = binding
        self.user_id = user_id   # the tenant, for methods that take it beside the session (binding.tenant_arguments)
        self._build = build
        self._run = run      # runs an awaitable to completion on the scenario's event loop
        self._watch = watch  # wraps each call of the store, given its method name and arguments
        self._sessions: dict[str, Any] = {}
        self._shared = None if binding.per_session else self._built(None)

    def _built(self, session_id: str | None) -> Any:
        """A store built, a call of the store's as any other: one that hangs is cut off by the call timeout."""
        name = getattr(self.binding.factory, "__name__", FACTORY)
        with self._watch(name, () if session_id is None else (session_id,)), store_code(FACTORY):
            return self._build(session_id)

    def instances(self) -> list[Any]:
        """The store objects built so far."""
        return [self._shared] if self._shared is not None else list(self._sessions.values())

    def instance_for(self, session_id: str) -> Any:
        """The store object that holds ``session_id``."""
        if self._shared is not None:
            return self._shared
        if session_id not in self._sessions:
            self._sessions[session_id] = self._built(session_id)
        return self._sessions[session_id]

    def _invoke(self, session_id: str, member: str, *args: Any) -> Generator[Any, Any, Any]:
        """One call of the store, as steps: it yields the awaitable an async store returns and is sent
        its result, so that :meth:`_run_steps` runs it to completion and :meth:`_await_steps` awaits it
        beside other tasks on the scenario's loop. A test outcome the store raises is its failure."""
        instance = self.instance_for(session_id)
        args = args if self.binding.per_session else (session_id, *args)
        keywords: dict[str, Any] = {}
        for position, name in self.binding.tenant_arguments.get(member, ()):   # ascending: each where it goes
            if position is None:
                keywords[name] = self.user_id
            else:
                args = (*args[:position], self.user_id, *args[position:])
        with self._watch(member, args), store_code(member):
            value = getattr(instance, member)
            result = value(*args, **keywords) if callable(value) else value   # a framework's load may be a property
            if inspect.isawaitable(result):
                result = yield result
        return result

    def _run_steps(self, steps: Generator[Any, Any, Any]) -> Any:
        result, error = None, None
        while True:
            try:
                awaitable = steps.send(result) if error is None else steps.throw(error)
            except StopIteration as done:
                return done.value
            try:
                result, error = self._run(awaitable), None
            except BaseException as exc:
                result, error = None, exc

    async def _beside_others(self, steps: Generator[Any, Any, Any]) -> Any:
        """Run one call's steps beside other calls on the running loop: an async store's as a task of
        the loop, interleaved with the others at every await, as a service's requests share one
        loop; a sync store's in a thread of the loop's executor, as a service's requests share one
        store object from threads. The races of the scenarios are written once on these."""
        if self.binding.is_async:
            return await self._await_steps(steps)
        return await asyncio.to_thread(self._run_steps, steps)

    async def _await_steps(self, steps: Generator[Any, Any, Any]) -> Any:
        result, error = None, None
        while True:
            try:
                awaitable = steps.send(result) if error is None else steps.throw(error)
            except StopIteration as done:
                return done.value
            try:
                result, error = await awaitable, None
            except BaseException as exc:
                result, error = None, exc

    def _add(self, session_id: str, message: Message) -> Generator[Any, Any, Message]:
        if self.binding.append_form is AppendForm.ROLE_CONTENT:
            yield from self._invoke(session_id, self.binding.append_method, message.role, message.content)
            return message.plain()
        encoded = self.binding.codec.encode(message.as_dict())
        if self.binding.append_form is AppendForm.MESSAGES:
            yield from self._invoke(session_id, self.binding.append_method, encoded)
        else:
            for native in encoded:
                yield from self._invoke(session_id, self.binding.append_method, native)
        return self._as_given_back([message], encoded)[0]

    def add(self, session_id: str, message: Message) -> Message:
        """Append one message, in the form the store takes; return it as the store should give it
        back (:meth:`stored_form`)."""
        return self._run_steps(self._add(session_id, message))

    async def aadd(self, session_id: str, message: Message) -> Message:
        """:meth:`add` as a coroutine, to run beside other calls (:meth:`_beside_others`)."""
        return await self._beside_others(self._add(session_id, message))

    def append(self, session_id: str, role: str, content: str) -> None:
        self.add(session_id, Message(role, content))

    def append_all(self, session_id: str, messages: list[Message]) -> None:
        for message in messages:
            self.add(session_id, message)

    def stored_form(self, messages: list[Message]) -> list[Message]:
        """``messages`` as a correct store of this shape returns them: role and content only for a store
        that takes no more, else as the message type (a framework's own conversion) carries them."""
        codec = self.binding.codec
        return self._as_given_back(messages, [native for message in messages
                                              for native in codec.encode(message.as_dict())])

    def kept_by_design(self, appended: list[Message]) -> tuple[list[Message], list[str]]:
        """What a correct store of this shape gives back of a session after ``appended``: all of it,
        as its messages carry them (:meth:`stored_form`: a Google ADK session has no system
        message), but what its framework's history rule keeps where it has one (agno keeps one
        system prompt per session); and notes saying what of ``appended`` is not expected back as
        it was, and why."""
        rule, given_back = self.binding.history_rule, self.stored_form(list(appended))
        notes = []
        recast = Counter((sent.role, back.role) for sent, back in zip(appended, given_back)
                         if sent.role != back.role) if len(given_back) == len(appended) else Counter()
        if recast:
            notes.append(f"{sum(recast.values())} of the {len(appended)} messages appended are expected back with "
                         f"another role, as the {self.binding.framework}'s messages carry them: "
                         + ", ".join(f"{sent} as {back}" for sent, back in recast))
        kept = rule.keeps(given_back) if rule else given_back
        if len(kept) < len(given_back):
            notes.append(f"{len(given_back) - len(kept)} of the {len(appended)} messages appended were not expected "
                         f"back, by the {self.binding.framework}'s own rule: {rule.text}")
        return kept, notes

    def _as_given_back(self, messages: list[Message], encoded: list) -> list[Message]:
        """``messages``, appended as ``encoded``, as a correct store gives them back."""
        if not self.binding.codec.carries_fields:
            return [message.plain() for message in messages]
        return normalize_history(self.binding.codec.decode(encoded), fields=True)

    def _load(self, session_id: str) -> Generator[Any, Any, list[Message]]:
        raw = yield from self._invoke(session_id, self.binding.load_method)
        # reading what the store returned runs its code too: a generator, its messages' properties
        with store_code(f"{self.binding.load_method}'s result"):
            return self._read(raw)

    def _read(self, raw: Any) -> list[Message]:
        if raw is not None and not isinstance(raw, (str, bytes, dict)):
            native = None if self.binding.framework else framework_of_messages(raw)
            try:
                raw = native.decode(raw) if native else self.binding.codec.decode(raw)
            except Exception as exc:
                raise AssertionError(f"load returned what {self.binding.codec.name} cannot be read from: "
                                     f"{type(exc).__name__}: {exc}") from exc
        return normalize_history(raw, fields=self.binding.codec.carries_fields)

    def load(self, session_id: str) -> list[Message]:
        return self._run_steps(self._load(session_id))

    async def aload(self, session_id: str) -> list[Message]:
        """:meth:`load` as a coroutine, to run beside other calls (:meth:`_beside_others`)."""
        return await self._beside_others(self._load(session_id))

    def _member(self, role: str) -> str:
        name = self.binding.members[role]
        if not name:
            raise UsageError(f"the store has no {role} method")
        return name

    def call(self, role: str, session_id: str) -> Any:
        """Call the store's optional member ``role`` (contract.OPTIONAL_MEMBERS) for ``session_id``."""
        return self._run_steps(self._invoke(session_id, self._member(role)))

    async def acall(self, role: str, session_id: str) -> Any:
        """:meth:`call` as a coroutine, to run beside other calls (:meth:`_beside_others`)."""
        return await self._beside_others(self._invoke(session_id, self._member(role)))

    def clear(self, session_id: str) -> None:
        self.call("clear", session_id)

    def compact(self, session_id: str) -> None:
        """Summarise the oldest messages of the session (the store's compact, with the summarize it was
        built with)."""
        self.call("compact", session_id)

    def consistent(self, session_id: str) -> Any:
        """What the store's consistent_state says of ``session_id`` (True once its backends agree)."""
        return self.call("consistency", session_id)

    async def aconsistent(self, session_id: str) -> Any:
        """:meth:`consistent` as a coroutine, to poll beside other calls (:meth:`_beside_others`)."""
        return await self.acall("consistency", session_id)

    def past_states(self, session_id: str) -> list[str]:
        """The ids of the session's past states that the store keeps as history beside its live
        state, which a load does not read (a LangGraph checkpointer's earlier checkpoints), from
        the store's ``past_states`` where it has one (a framework's driver); else none."""
        if not callable(getattr(self.instance_for(session_id), "past_states", None)):
            return []
        states = self._run_steps(self._invoke(session_id, "past_states"))
        with store_code("past_states' result"):
            return [state for state in states if state]
