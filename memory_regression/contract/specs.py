"""What ``--store`` (and ``--token-counter``) name, in any language: the one place that tells a Python
spec from another language's (:func:`.foreign.is_foreign`), for checking it before anything runs
(:func:`check_spec`) and for loading it (:func:`load_store`, :func:`load_function`); everything else
asks what was loaded.

:func:`check_spec` says, from the source and before a Redis server or a worker starts, that the file
or module exists and defines NAME, so a typo is a usage error at once; the workers then load the
store, which says the rest. Checking imports and runs none of the user's code.
"""

from __future__ import annotations

import ast
import importlib.util
import sys
from importlib.machinery import PathFinder
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ..errors import UsageError
from .foreign import command_of, is_foreign, load_foreign, load_foreign_function, snake
from .loader import load_object, missing_file, missing_module, split_spec


@dataclass(frozen=True)
class Loaded:
    """A store's factory, where it is defined, and how a name the user gave for one of its members or
    parameters is spelled as the factory spells it (another language's camelCase as snake_case)."""

    factory: Callable[..., Any]
    source: Path | None
    spelling: Callable[[str], str]


def load_store(spec: str, workdir: Path, timeout: float) -> Loaded:
    """The store ``spec`` names: a Python class or factory, imported, or another language's, a
    program started (``timeout``: how long it may take to say what the store is)."""
    if is_foreign(spec):
        return Loaded(*load_foreign(spec, workdir, timeout), snake)
    return Loaded(*load_object(spec, workdir), lambda name: name)


def load_function(spec: str, workdir: Path, option: str) -> Any:
    """The function ``spec`` names (``--token-counter``, ``option``): a Python one, or another
    language's, each call a request to its program."""
    if is_foreign(spec):
        return load_foreign_function(spec, workdir, option)
    return load_object(spec, workdir, what=option.lstrip("-"))[0]


def check_spec(spec: str, workdir: Path, what: str = "store") -> None:
    """What can be said of ``spec`` without running any code of the user's, before Redis and the
    workers start: its form, that its file or module exists, and, where its source can be read, that
    it defines NAME at the top level. The workers import it (:func:`load_object`), which says the rest."""
    if what == "store" and is_foreign(spec):   # a program of another language: that it can start
        command_of(spec, workdir)
        return
    module_part, name, is_path = split_spec(spec, what)
    if is_path:
        source = (workdir / module_part).resolve()
        if not source.is_file():
            raise missing_file(spec, module_part, workdir, what)
    else:
        exists, source = _module_source(module_part, workdir)
        if not exists:
            raise missing_module(spec, module_part, workdir, what)
    defined = _top_level_names(source) if source is not None and source.suffix == ".py" else None
    if defined is not None and name not in defined:
        public = sorted(n for n in defined if not n.startswith("_"))
        raise UsageError(f"--{what} {spec!r}: {module_part} has no attribute {name!r} "
                         f"(it defines: {', '.join(public) or 'nothing public'})")


def _module_source(dotted: str, workdir: Path) -> tuple[bool, Path | None]:
    """Whether ``dotted`` exists, found without importing it or its packages (no ``__init__`` runs),
    and its source file where it has one (a built-in, a namespace package or a module an importer of
    its own provides has none)."""
    parts = dotted.split(".")
    found = PathFinder.find_spec(parts[0], [str(workdir), *sys.path])
    if found is None:   # not on the path: perhaps a built-in, or an editable install's own finder
        return importlib.util.find_spec(parts[0]) is not None, None
    for part in parts[1:]:
        if not found.submodule_search_locations:
            return False, None
        found = PathFinder.find_spec(part, list(found.submodule_search_locations))
        if found is None:
            return False, None
    return True, Path(found.origin) if found.origin and found.has_location else None


def _top_level_names(source: Path) -> set[str] | None:
    """The names a module's source binds at its top level (inside if, try, for and with blocks too),
    or None when that cannot be told from the source: unreadable, not Python, a star import, a module
    __getattr__, names made through globals(), exec or setattr."""
    try:
        tree = ast.parse(source.read_bytes())
    except (OSError, SyntaxError, ValueError):
        return None
    if any(isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
           and node.func.id in ("globals", "exec", "setattr") for node in ast.walk(tree)):
        return None
    names: set[str] = set()

    def visit(statements: list) -> bool:
        for node in statements:
            if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                names.add(node.name)
                continue
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                if any(alias.name == "*" for alias in node.names):
                    return False
                names.update(alias.asname or alias.name.split(".")[0] for alias in node.names)
                continue
            targets = (node.targets if isinstance(node, ast.Assign) else
                       [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor)) else
                       [item.optional_vars for item in node.items if item.optional_vars]
                       if isinstance(node, (ast.With, ast.AsyncWith)) else [])
            names.update(name.id for target in targets for name in ast.walk(target) if isinstance(name, ast.Name))
            blocks = [getattr(node, block, []) for block in ("body", "orelse", "finalbody")]
            if not all(visit(block) for block in [*blocks, *(h.body for h in getattr(node, "handlers", []))]):
                return False
        return True
    return names if visit(tree.body) and "__getattr__" not in names else None
