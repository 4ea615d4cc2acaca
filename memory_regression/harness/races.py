"""Races of writers on one session, as requests and replicas of a service race in production
(fixture ``races``).

:class:`Races` runs them: writers sharing one store object (threads for a sync store, tasks on the
scenario's event loop for an async one, one code for both), or writers in processes of their own,
each binding the store anew; meanwhile readers load the session over and over, and what they saw is
returned for the scenario to judge. A replica appending aside, while the scenario's own call is
held, is one more writer of its own.
"""

from __future__ import annotations

import asyncio
import os
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Awaitable

import pytest

from ..contract.adapter import StoreAdapter, from_store
from .context import ScenarioContext
from ..contract.rules import Message, close_quietly
from .writers import WriterFailed, own_adapter, run_writer, writer_context

RELEASE_POLL_S = 0.002          # how often readers look whether writer processes were released
BARRIER_TIMEOUT_S = 10           # a writer or reader not started by then breaks a concurrency scenario's start
RACE_THREADS = 32                # at most, for a sync store's calls in a race (started as they are needed)


def _skip_if_serial(store: StoreAdapter, sessions: list[str]) -> None:
    """Skip a race of writers on one session for a framework that takes one call of a session at a
    time by design, saying why."""
    reason = store.binding.serial_sessions
    if reason and len(set(sessions)) < len(sessions):
        pytest.skip(f"not judged for a {store.binding.framework}: {reason}")


class Races:
    """The races of one scenario's stores. Every race is written once, as tasks on one loop (the
    scenario's, :meth:`.ScenarioContext.run_awaitable`): the store's calls run beside each other as
    the adapter runs them (:meth:`.StoreAdapter.aadd`), an async store's as tasks interleaved at
    every await, a sync store's in threads sharing one store object."""

    def __init__(self, context: ScenarioContext):
        self._context = context

    def concurrently(self, store: StoreAdapter, session_id: str, writers: list[list[Message]],
                     readers: int = 0, sessions: list[str] | None = None) -> list[list[list[Message]]]:
        """Append each list in ``writers`` to ``session_id`` (or to its own of ``sessions``, one per
        writer) by a writer of its own, all released at once by a barrier, while ``readers`` readers
        load ``session_id`` over and over until every writer is done; return, for each reader, the
        histories it loaded, in order. Writers and readers share ``store``, as a server's requests share one store
        object: threads for a sync store, tasks on the scenario's event loop for an async one. A
        writer's or reader's exception is raised."""
        sessions = sessions or [session_id] * len(writers)
        _skip_if_serial(store, sessions)
        for session in {session_id, *sessions}:
            store.instance_for(session)   # a per-session store is built once, before the race
        return self._context.run_awaitable(self._race(store, session_id, writers, readers, sessions))

    async def _race(self, store: StoreAdapter, session_id: str, writers: list[list[Message]],
                    readers: int, sessions: list[str]) -> list[list[list[Message]]]:
        barrier = asyncio.Barrier(len(writers))

        async def write(session: str, messages: list[Message]) -> None:
            await barrier.wait()
            for message in messages:
                await store.aadd(session, message)

        return await self._reading_while(store, session_id, readers, asyncio.gather(
            *(write(session, messages) for session, messages in zip(sessions, writers))))

    @staticmethod
    async def _reading_while(store: StoreAdapter, session_id: str, readers: int, writing: Awaitable[Any],
                             released: Any = None) -> list[list[list[Message]]]:
        """Await ``writing`` (done when the writers are, raising a writer's exception) while ``readers``
        readers load ``session_id`` over and over, from the moment ``released`` (an event, if given)
        is set; return what they loaded: for each reader, its loads in order."""
        if not store.binding.is_async:   # a loop of the race's own: threads enough for every writer and reader
            asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(RACE_THREADS))
        done, seen = asyncio.Event(), []

        async def read() -> None:
            loaded: list[list[Message]] = []
            seen.append(loaded)
            while not done.is_set():
                if released is None or released.is_set():
                    loaded.append(await store.aload(session_id))
                    await asyncio.sleep(0)   # a store whose coroutines never suspend would starve the writers
                else:
                    await asyncio.sleep(RELEASE_POLL_S)

        reading = asyncio.gather(*(read() for _ in range(readers)))
        try:
            await writing
        finally:
            done.set()
            await reading
        return seen

    def in_processes(self, store: StoreAdapter, session_id: str, writers: list[list[Message]],
                     readers: int = 0) -> list[list[list[Message]]]:
        """Append each list in ``writers`` to ``session_id`` by a writer in a process of its own
        (:func:`writer_context`), as replicas of a service append to one session: each binds the
        store again and builds it as ``store`` was built, with a client of its own (on an event loop
        of its own for an async store); a barrier releases them together. Meanwhile ``readers``
        readers of this process load the session over and over, as with :meth:`concurrently`; return
        what they loaded. A writer's exception is raised, with its traceback in the process as its
        cause."""
        _skip_if_serial(store, [session_id] * len(writers))
        context = writer_context()
        barrier, released = context.Barrier(len(writers), timeout=BARRIER_TIMEOUT_S), context.Event()
        outcomes = context.SimpleQueue()   # written at once, before a writer's os._exit
        processes = [context.Process(target=run_writer, args=(os.getpid(), barrier, released, outcomes,
                                                                self._context.recipes[store], session_id, messages),
                                     daemon=True)
                     for messages in writers]
        for process in processes:
            process.start()

        def writing() -> None:
            for _ in processes:   # a writer that hangs is cut off with the worker (the scenario timeout)
                outcome = outcomes.get()
                if outcome is not None:
                    exc, text = outcome
                    raise from_store(exc) from WriterFailed(text)

        try:
            return self._context.run_awaitable(self._reading_while(store, session_id, readers,
                                                                   asyncio.to_thread(writing), released))
        except BaseException:
            barrier.abort()   # the others stop waiting for a writer that will not come
            raise
        finally:
            for process in processes:
                process.kill()
                process.join()

    def aside(self, store: StoreAdapter, session_id: str, messages: list[Message]) -> Future:
        """Append ``messages`` to ``session_id`` in order, in a thread of its own, through a new store
        instance built as ``store`` was, with a client of its own (on an event loop of its own for an
        async store), as another replica of a service appends while this one is busy: it runs while
        the scenario's thread (and loop) is held, inside a call of the store. Returns the future of
        the appends; the store instance and its client are closed when they are done."""
        context = self._context
        recipe = context.recipes[store]
        counter = context.counter(recipe.profile)

        def append() -> None:
            resources: list[Any] = []
            with asyncio.Runner() as loop:
                replica = own_adapter(recipe, context.binding, context.connection, counter, loop, resources,
                                      watch=context.watch)
                try:
                    for message in messages:
                        replica.add(session_id, message)
                finally:
                    for resource in resources:
                        close_quietly(resource, loop.run)
        pool = ThreadPoolExecutor(1)
        try:
            return pool.submit(append)
        finally:
            pool.shutdown(wait=False)
