"""The one frame filter: a failure shows the scenario's lines and the store's frames, never the
harness's between them (building stores, calling them, racing them, timing them, checking what they
returned).

:func:`without_harness_frames` re-links the traceback of a scenario's exception, and of every
exception it was raised from, during or with (an exception group's), leaving out the harness's
frames: the ``memory_regression`` package's, and those of the suite's files other than the
scenarios themselves (their checks and fixtures). The worker applies it to
every scenario's failure before pytest renders it (``--full-trace`` keeps every frame), so that
pytest's report, the verdict's details and every report that quotes them show the same frames.
"""

from __future__ import annotations

import os
import traceback
from types import TracebackType
from typing import Iterator

from ..groups import PACKAGE_DIRECTORY, suite_directory

HARNESS = os.path.join(PACKAGE_DIRECTORY, "")   # with a trailing separator: files inside
SUITE = os.path.join(suite_directory(), "")


def harness_frame(filename: str, function: str) -> bool:
    """Whether ``function`` of ``filename`` is the harness's: the package's, or a suite file's
    function other than a scenario (``test_*``)."""
    if filename.startswith(SUITE):
        return not function.startswith("test_")
    return filename.startswith(HARNESS)


def without_harness_frames(exc: BaseException) -> None:
    """Leave the harness's frames out of ``exc``'s traceback and of those of the exceptions chained
    to it. A traceback that holds nothing else is left whole: the failure is then the harness's own,
    and its frames are all there is to show; unless the exception is a store's of another language
    (``frames_in_notes``), whose frames are the notes it carries, or a check's finding (an
    AssertionError the harness raised of what the store did: one of several that Hypothesis found,
    a rule of the state machine its only frames), whose message is all it has to say."""
    pending, seen = [exc], set()
    while pending:
        for chained in exception_chain(pending.pop()):
            if id(chained) in seen:
                continue
            seen.add(id(chained))
            kept = _relinked(chained.__traceback__)
            if kept is not None or getattr(chained, "frames_in_notes", False) or isinstance(chained, AssertionError):
                chained.__traceback__ = kept
            pending.extend(getattr(chained, "exceptions", ()))


def _relinked(tb: TracebackType | None) -> TracebackType | None:
    """The frames of ``tb`` that are not the harness's, linked in order; None if none are."""
    kept: list[TracebackType] = []
    while tb is not None:
        if not harness_frame(tb.tb_frame.f_code.co_filename, tb.tb_frame.f_code.co_name):
            kept.append(tb)
        tb = tb.tb_next
    for entry, following in zip(kept, [*kept[1:], None]):
        entry.tb_next = following
    return kept[0] if kept else None


def exception_chain(exc: BaseException | None) -> Iterator[BaseException]:
    """``exc`` and the exceptions it was raised from or during, each once."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


def user_traceback(exc: BaseException, hidden: tuple[str, ...] = ()) -> str:
    """The traceback of an exception raised by user code, as the traceback module prints it, without
    the harness's or importlib's frames, nor those under the directories ``hidden``."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if not harness_frame(f.filename, f.name) and not f.filename.startswith(("<frozen", *hidden))]
    lines = traceback.format_list(frames) + traceback.format_exception_only(type(exc), exc)
    return "Traceback (most recent call last):\n" + "".join(lines)


def exception_line(exc: BaseException) -> str:
    """The line naming ``exc`` and its message (the last of what the traceback module prints of it, a
    SyntaxError's included), without the notes Hypothesis adds (the steps of a stateful run)."""
    notes = {line for note in getattr(exc, "__notes__", None) or [] for line in str(note).splitlines()}
    lines = [line for line in "".join(traceback.format_exception_only(type(exc), exc)).strip().splitlines()
             if line not in notes]
    return lines[-1] if lines else type(exc).__name__
