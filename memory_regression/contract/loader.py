"""Finding and importing what ``--store`` (or ``--token-counter``) names: ``path/to/file.py:NAME``
or ``package.module:NAME``, with a usage error that says what to fix when it is not there, and the
user's own traceback when it fails to import."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import sys
import traceback
from pathlib import Path
from typing import Any

from ..errors import UsageError
from .frames import user_traceback


# set in the Docker image: a store file that is not found there is most often a directory not mounted
IN_IMAGE = "MEMORY_REGRESSION_IN_IMAGE"


def split_spec(spec: str, what: str = "store") -> tuple[str, str, bool]:
    """``file.py:NAME`` or ``package.module:NAME`` as (module part, name, whether it is a path)."""
    module_part, sep, name = spec.rpartition(":")
    if not sep or not module_part or not name:
        raise UsageError(
            f"--{what} {spec!r} is not of the form path/to/file.py:NAME or package.module:NAME")
    return module_part, name, module_part.endswith(".py") or "/" in module_part or "\\" in module_part


def missing_module(spec: str, module_part: str, workdir: Path, what: str = "store") -> UsageError:
    return UsageError(f"--{what} {spec!r}: no module {module_part!r} importable from {workdir} "
                      "(give a path ending in .py, or run from the directory that holds the package)")


def missing_file(spec: str, module_part: str, workdir: Path, what: str = "store") -> UsageError:
    hint = ""
    if os.environ.get(IN_IMAGE) and not os.environ.get("GITHUB_ACTIONS"):
        hint = (f" (inside the image the store's files come from a mounted directory: run docker run -v "
                f"\"$PWD:{workdir}\" -w {workdir} ... from the directory that holds {module_part})")
    return UsageError(f"--{what} {spec!r}: no file {module_part} under the working directory {workdir}{hint}")


def load_object(spec: str, workdir: Path, what: str = "store") -> tuple[Any, Path | None]:
    """Resolve ``file.py:NAME`` or ``package.module:NAME``; return the object and its source file."""
    module_part, name, is_path = split_spec(spec, what)
    if str(workdir) not in sys.path:
        sys.path.insert(0, str(workdir))
    # the user's modules are compiled, never cached beside their files (__pycache__ in the user's
    # tree; in an action, owned by root in the workspace)
    writes_bytecode, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        if is_path:
            path = (workdir / module_part).resolve()
            if not path.is_file():
                raise missing_file(spec, module_part, workdir, what)
            module_name = f"_memory_regression_user_{path.stem}_{abs(hash(str(path)))}"
            module = sys.modules.get(module_name)
            if module is None:
                module_spec = importlib.util.spec_from_file_location(module_name, path)
                module = importlib.util.module_from_spec(module_spec)
                sys.modules[module_name] = module
                try:
                    module_spec.loader.exec_module(module)
                except BaseException:
                    del sys.modules[module_name]
                    raise
        else:
            module = importlib.import_module(module_part)
    except UsageError:
        raise
    except ModuleNotFoundError as exc:
        if exc.name and module_part.startswith(exc.name):
            raise missing_module(spec, module_part, workdir, what) from None
        raise UsageError(f"--{what} {spec!r}: importing it failed:\n{user_traceback(exc)}") from None
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # the user's module raised while importing, SystemExit included
        raise UsageError(f"--{what} {spec!r}: importing it failed:\n{user_traceback(exc)}") from None
    finally:
        sys.dont_write_bytecode = writes_bytecode
    try:
        obj = getattr(module, name)
    except AttributeError:
        public = sorted(n for n in vars(module) if not n.startswith("_"))
        raise UsageError(
            f"--{what} {spec!r}: {module_part} has no attribute {name!r} "
            f"(it defines: {', '.join(public) or 'nothing public'})") from None
    return obj, _source_file(obj, module)


def _source_file(obj: Any, module: Any) -> Path | None:
    """Where ``obj`` is defined: its own module's file (a class a package re-exports is defined in the
    module it came from), else the file of the module it was named in (an instance, a graph)."""
    try:
        source = inspect.getsourcefile(obj)
    except TypeError:   # no class, function or module: built in the module that names it
        source = None
    source = source or getattr(module, "__file__", None)
    return Path(source).resolve() if source else None


def raised_in(exc: BaseException, package: str) -> bool:
    """Whether a frame of ``package`` raised ``exc`` (or passed it on)."""
    frames = traceback.extract_tb(exc.__traceback__)
    return any(f"{os.sep}{package}{os.sep}" in frame.filename for frame in frames)
