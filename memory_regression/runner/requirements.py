"""``--requirements``: the store's dependencies, installed into the runner's environment before the run
(the action's image has only the suite). A requirements file must exist; pip's own arguments are taken
only in an explicit form, so that a missing file is never looked up on the index as a package name."""

from __future__ import annotations

import importlib
import shlex
import subprocess
import sys
from pathlib import Path

from ..errors import UsageError

PIP_OUTPUT_SHOWN = 3000
PIP_PREFIX = "pip:"


def pip_arguments(spec: str, workdir: Path) -> list[str]:
    """What ``--requirements`` asks pip to install: a requirements file that must exist, or, only in an
    explicit form, pip's own arguments (a value starting with ``-``, or with ``pip:`` before them).
    A missing file is never taken for a package name: that name could be anyone's on the index."""
    if spec.startswith("-"):
        return shlex.split(spec)
    if spec.startswith(PIP_PREFIX):
        return shlex.split(spec[len(PIP_PREFIX):])
    if not (workdir / spec).is_file():
        raise UsageError(f"--requirements {spec!r}: no such file in {workdir} (give a requirements file, "
                         f"or pip arguments explicitly: '{PIP_PREFIX} package==1.0', '-r file.txt')")
    return ["-r", spec]


def install_requirements(target: list[str]) -> str | None:
    """pip-install ``target``; return pip's complaint if it failed."""
    print(f"memory-regression: installing requirements: pip install {shlex.join(target)}", flush=True)
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--disable-pip-version-check",
                           "--no-input", *target], capture_output=True, text=True)
    if done.returncode == 0:
        importlib.invalidate_caches()   # what it installed is found by the spec check and the workers' imports
        return None
    output = (done.stdout + done.stderr).strip()
    return (f"installing requirements failed (pip install {shlex.join(target)} exited with "
            f"{done.returncode}); fix the requirements input or file. pip said:\n{output[-PIP_OUTPUT_SHOWN:]}")
