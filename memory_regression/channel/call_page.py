"""The page of memory where a worker keeps the call of the store it is in, for the runner to read.

A worker writes each call of the store (method, shortened arguments, start) into a small file
mapped into memory (:class:`CallPage`), not into a message: the runner (:func:`read_call`) must see
a call that hangs even when no thread of the worker can run (C code that holds the GIL), and cut it
off past the call timeout (:mod:`.supervisor`).
"""

from __future__ import annotations

import mmap
import os
import reprlib
import struct
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator


CALL_PAGE_SIZE = 4096
# a sequence number (odd while the worker writes), the call's start (time.monotonic(), which is the
# same clock in every process; 0 when the worker is in no call) and the length of the call's text
_CALL_HEADER = struct.Struct("<Qdi")
_ARGUMENTS = reprlib.Repr()   # arguments as a verdict shows them: strings cut in the middle, lists short
_ARGUMENTS.maxstring = _ARGUMENTS.maxother = 60
_ARGUMENTS.maxlist = _ARGUMENTS.maxtuple = 3
_ARGUMENTS.maxdict, _ARGUMENTS.maxlevel = 4, 2


def call_page_path(directory: Path, worker: str, pid: int) -> Path:
    """Where a worker keeps the store call it is in; named by pid too, so that a worker's page is
    never reused (the runner reads it while the process lives)."""
    return directory / f"{worker}-{pid}.call"


class CallPage:
    """A worker's end of its call page: :meth:`watch` wraps each call of the store (the
    :class:`~.adapter.StoreAdapter`'s watch) and writes the call's text and start into a small
    file mapped into memory, a few microseconds a call, for the runner's :func:`read_call`. With
    ``path`` None (the scenarios run in the runner, ``-n 0``) the page is private: nothing reads it
    and nothing is cut off."""

    def __init__(self, path: Path | None):
        if path is None:
            self._page = mmap.mmap(-1, CALL_PAGE_SIZE)
        else:
            descriptor = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
            try:
                os.ftruncate(descriptor, CALL_PAGE_SIZE)
                self._page = mmap.mmap(descriptor, CALL_PAGE_SIZE)
            finally:
                os.close(descriptor)
        self._sequence = 0
        self._lock = threading.Lock()   # a concurrency scenario's writer threads call the store at once

    @contextmanager
    def watch(self, method: str, args: tuple) -> Iterator[None]:
        self._write(time.monotonic(), f"{method}({', '.join(map(_ARGUMENTS.repr, args))})")
        try:
            yield
        finally:
            self.clear()

    def clear(self) -> None:
        """The worker is in no call of the store: one left running in a thread of its own is not this one's."""
        self._write(0.0, "")

    def _write(self, started: float, text: str) -> None:
        data = text.encode("utf-8", "replace")[:CALL_PAGE_SIZE - _CALL_HEADER.size]
        with self._lock:
            self._sequence += 2
            _CALL_HEADER.pack_into(self._page, 0, self._sequence - 1, started, len(data))
            self._page[_CALL_HEADER.size:_CALL_HEADER.size + len(data)] = data
            struct.pack_into("<Q", self._page, 0, self._sequence)


@dataclass(frozen=True)
class Call:
    """The store call a worker is in, as its page says."""

    text: str                        # append('long-history', 'user', 'long 0042')
    started: float                   # time.monotonic()


def read_call(path: Path) -> Call | None:
    """The call the worker of ``path`` is in: None when it is in none, or the page cannot be read.
    A read that overlaps a write (the sequence number odd, or changed under it) is tried again: a
    worker that writes is not stuck."""
    for _attempt in range(3):
        try:
            descriptor = os.open(path, os.O_RDONLY)
        except OSError:
            return None
        try:
            data = os.pread(descriptor, CALL_PAGE_SIZE, 0)
            again = os.pread(descriptor, 8, 0)
        finally:
            os.close(descriptor)
        if len(data) < CALL_PAGE_SIZE:
            return None
        sequence, started, length = _CALL_HEADER.unpack_from(data)
        if sequence % 2 == 0 and again == data[:8]:
            text = data[_CALL_HEADER.size:_CALL_HEADER.size + length].decode("utf-8", "replace")
            return Call(text, started) if started else None
    return None
