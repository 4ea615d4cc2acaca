"""How the verdict tests run the tool: each run in a process of its own, forked from a server process
that has imported the tool, pytest and the Redis client once (multiprocessing's forkserver), with
its scenarios in that process (``-- -n 0``, a mode the runner offers users too).

A run through ``python entrypoint.py`` pays an interpreter and about 0.4 s of imports, and its
worker as much again: about 1 s of CPU before its first scenario, which the corpus pays a hundred
times over. A forked run starts from the server's imports, in a fresh copy of it, so no run sees
another's state: the store's module and the suite's are imported anew by each, as a user's run
imports them. What this path does not exercise, worker processes and their supervision, signals,
and the interpreter's start, the end-to-end tests do, each through a real ``entrypoint.py``.
"""

from __future__ import annotations

import atexit
import multiprocessing
import os
import runpy
import sys
import traceback
from pathlib import Path

# what every run imports before its first scenario, the runner's side and the worker's
PRELOAD = ["memory_regression.cli", "memory_regression.runner.run", "memory_regression.worker.plugin",
           "memory_regression.plugin", "memory_regression.harness.fixtures", "memory_regression.stateful",
           "xdist.plugin", "pytest_html.plugin", "hypothesis", "redis", "redis.asyncio", "redis.cluster", "tiktoken",
           __name__]
_CONTEXT = multiprocessing.get_context("forkserver")
_CONTEXT.set_forkserver_preload(PRELOAD)


def run_forked(entrypoint: Path, argv: list[str], environ: dict[str, str], cwd: Path, output: Path,
               timeout_s: float) -> int:
    """Run ``entrypoint argv`` in a forked process with ``environ`` in ``cwd``, its output (stdout
    and stderr, unbuffered, in order) to ``output``; its exit status, as a subprocess's (a signal's
    negated number), killed past ``timeout_s``."""
    process = _CONTEXT.Process(target=_entrypoint, args=(str(entrypoint), argv, environ, str(cwd), str(output)))
    process.start()
    try:
        process.join(timeout_s)
    finally:
        if process.exitcode is None:
            process.kill()
            process.join()
    return process.exitcode


def _entrypoint(entrypoint: str, argv: list[str], environ: dict[str, str], cwd: str, output: str) -> None:
    """In the forked process: what ``python entrypoint argv`` does, then exit as it would."""
    descriptor = os.open(output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(descriptor, 1)
    os.dup2(descriptor, 2)
    os.close(descriptor)
    for stream in (sys.stdout, sys.stderr):
        stream.reconfigure(line_buffering=True, write_through=True)
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(environ)
    sys.argv = [entrypoint, *argv]
    code: object = 0
    try:
        runpy.run_path(entrypoint, run_name="__main__")
    except SystemExit as exit_:
        code = exit_.code
    except BaseException:   # as the interpreter would: the traceback, and status 1
        traceback.print_exc()
        code = 1
    atexit._run_exitfuncs()
    if code is not None and not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    os._exit(code or 0)
