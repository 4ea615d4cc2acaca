"""A baseline (``--baseline``) as untrusted input: read within a size cap and a deadline, then parsed into a
typed, validated structure, all before any scenario runs.

A baseline is a file someone else's run wrote, often an artifact of another branch or a fork's pull
request. Whatever it holds ends as a usage error that names what is wrong (exit 2, reports written), never
a crash after the run: a pipe or a device that delivers nothing within :data:`DEADLINE_S` (a FIFO no
program writes), or more than :data:`MAX_BYTES` (``/dev/zero``), JSON nested past what the parser can
follow, and every field of another type or out of its range (checked by pydantic's models below, which
name the field). The comparison (:mod:`.baseline`) then reads only what these models let through: node
ids and words of one line each, figures that are finite positive numbers. What it renders of them is
escaped all the same (:mod:`.renderings`, :mod:`.html_report`).
"""

from __future__ import annotations

import json
import os
import select
import stat
import time
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from ..errors import UsageError

MAX_BYTES = 16 * 1024 * 1024   # a summary.json of 5,000 results, each with a message of 2,000 characters
DEADLINE_S = 10.0              # for a pipe or a device to deliver the whole file
# a run of every scenario at ten window sizes on three engines has about 3,000 results; at these bounds, what a
# comparison copies of a baseline into this run's reports (its node ids gone, its warnings gone) stays near 3 MB
MAX_RESULTS = 5_000
ERRORS_SHOWN = 3
HINT = "give the summary.json an earlier run wrote (or its --write-baseline file)"

# one line of printable text: a node id, a name, a word of the level; no control character, no newline
Line = Annotated[str, StringConstraints(max_length=300, pattern=r"^[^\x00-\x1f\x7f-\x9f\u2028\u2029]*$")]
Word = Annotated[str, StringConstraints(max_length=100, pattern=r"^[a-z0-9][a-z0-9-]*$")]
Level = Annotated[str, StringConstraints(max_length=1000, pattern=r"^[a-z0-9][a-z0-9-]*(\+[a-z0-9][a-z0-9-]*)*$")]
Text = Annotated[str, StringConstraints(max_length=10_000)]
Figure = Annotated[float, Field(ge=0, le=1e12, allow_inf_nan=False)]


class _Model(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)


class Result(_Model):
    nodeid: Line
    outcome: Literal["passed", "failed", "error", "skipped"]
    engine: Line | None = None
    scenario: Line = ""
    point: Line = ""
    message: Text = ""
    requires: list[Word] = []
    guarantees: list[Word] = []


class Warning(_Model):
    nodeid: Line
    guarantee: Word
    text: Text = ""


class Ratios(_Model):
    ratio_p50: Figure | None = None
    ratio_p95: Figure | None = None


class Latency(_Model):
    nodeid: Line
    engine: Line | None = None
    append: Ratios | None = None
    load: Ratios | None = None


class Footprint(_Model):
    nodeid: Line
    engine: Line | None = None
    bytes_per_message: Figure | None = None


class Named(_Model):
    name: Line


class Baseline(_Model):
    """What a comparison reads of a summary.json, each field typed and bounded."""

    results: list[Result] = Field(min_length=1, max_length=MAX_RESULTS)
    status: Line = ""
    store: Line | None = None
    backend: Line | None = None
    engines: list[Named] = Field(default=[], max_length=100)
    window_sizes: list[Annotated[int, Field(ge=1, le=10_000)]] = Field(default=[], max_length=1000)
    window_policy: Line | None = None
    profiles: list[Named] = Field(default=[], max_length=1000)
    groups: list[Word] = Field(default=[], max_length=100)
    conformance_level: Level = "none"
    warnings: list[Warning] = Field(default=[], max_length=MAX_RESULTS)
    latency: list[Latency] = Field(default=[], max_length=MAX_RESULTS)
    footprint: list[Footprint] = Field(default=[], max_length=MAX_RESULTS)


def read_bounded(path: Path, limit: int = MAX_BYTES, deadline_s: float = DEADLINE_S) -> bytes:
    """The bytes of ``path``, at most ``limit`` of them; a file that is no regular file (a pipe, a FIFO, a
    device) must deliver them, to its end, within ``deadline_s``. Raises OSError, or ValueError saying
    which bound was passed. Opening never blocks (O_NONBLOCK: a FIFO with no writer opens at once)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        regular = stat.S_ISREG(mode)
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(21, "Is a directory")
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        end = time.monotonic() + deadline_s
        chunks: list[bytes] = []
        size = 0
        while True:
            if not regular:
                left = end - time.monotonic()
                if left <= 0 or not poller.poll(left * 1000):
                    raise ValueError(f"it delivered {size} bytes and no end within {deadline_s:g} s (a pipe or a "
                                     "FIFO that nothing writes to the end?)")
            try:
                chunk = os.read(fd, 1 << 16)
            except BlockingIOError:
                continue
            if not chunk:
                return b"".join(chunks)
            size += len(chunk)
            if size > limit:
                raise ValueError(f"it is larger than {limit // (1024 * 1024)} MB")
            chunks.append(chunk)
    finally:
        os.close(fd)


def load_baseline(path: Path, given: str, deadline_s: float = DEADLINE_S) -> dict[str, Any]:
    """The baseline at ``path``, validated, as the comparison reads it; or a usage error naming what is wrong
    (``given``: the path as the user gave it)."""
    where = f"--baseline {given!r}"
    try:
        raw = read_bounded(path, deadline_s=deadline_s)
    except FileNotFoundError:
        raise UsageError(f"{where}: no such file ({HINT})") from None
    except OSError as exc:
        raise UsageError(f"{where}: cannot be read: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise UsageError(f"{where}: not read: {exc} ({HINT})") from None
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise UsageError(f"{where}: not UTF-8 text ({exc.reason} at byte {exc.start}): {HINT}") from None
    except RecursionError:
        raise UsageError(f"{where}: JSON nested deeper than Python can read: {HINT}") from None
    except ValueError as exc:
        raise UsageError(f"{where}: not JSON ({exc}): {HINT}") from None
    if not isinstance(data, dict):
        raise UsageError(f"{where}: not a summary.json of a run (its JSON is no object): {HINT}")
    if data.get("results") == []:
        raise UsageError(f"{where}: a run that judged nothing (status {str(data.get('status'))[:100]!r}): give the "
                         "summary.json of a run whose scenarios ran")
    try:
        return Baseline.model_validate(data).model_dump()
    except ValidationError as exc:
        errors = exc.errors(include_url=False, include_input=False)
        shown = "; ".join(f"{_field(error['loc'])}: {error['msg']}" for error in errors[:ERRORS_SHOWN])
        more = f" (and {len(errors) - ERRORS_SHOWN} more)" if len(errors) > ERRORS_SHOWN else ""
        raise UsageError(f"{where}: not a summary.json of a run: {shown}{more}; {HINT}") from None
    except RecursionError:
        raise UsageError(f"{where}: JSON nested deeper than Python can read: {HINT}") from None


def _field(loc: tuple[Any, ...]) -> str:
    """A field's place as a path: ``results[3].nodeid``."""
    return "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc).lstrip(".") or "the file"
