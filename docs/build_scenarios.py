"""Write docs/scenarios.md from the suite's own docstrings.

One section per scenario group (a file of ``suite/``, its module docstring), one entry per scenario:
what it needs (its ``requires`` marker, or core), where it runs (a real server, every window size,
every profile), the guarantees it checks, and its docstring, which says what it checks and what a
failure means. ``tests/unit/test_docs.py`` fails when the page is not what this writes:

    python docs/build_scenarios.py
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memory_regression.groups import scenario_group, suite_files  # noqa: E402

PAGE = ROOT / "docs" / "scenarios.md"
HEADER = """# Scenarios

Written by `docs/build_scenarios.py` from the suite's docstrings (`suite/test_*.py`); edit those,
then run it. Each group is a file of `suite/` and a name for `--groups`; each scenario says what it
checks and, when it fails, what to look for. A scenario whose capability the store lacks is skipped,
saying what to add (see [the contract](contract.md#capabilities-and-the-conformance-level)).
"""


def _constants(tree: ast.Module) -> dict[str, str]:
    """The module's string constants (``REAL_SERVER = "..."``), which markers name."""
    return {target.id: node.value.value for node in tree.body if isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
            for target in node.targets if isinstance(target, ast.Name)}


def _marker(decorator: ast.expr, constants: dict[str, str]) -> tuple[str, list[str]] | None:
    """``@pytest.mark.NAME(args)`` as (NAME, its string arguments), else None."""
    call = decorator if isinstance(decorator, ast.Call) else None
    target = call.func if call else decorator
    if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Attribute)
            and target.value.attr == "mark"):
        return None
    args = [arg.value if isinstance(arg, ast.Constant) else constants.get(getattr(arg, "id", ""), "")
            for arg in (call.args if call else [])]
    return target.attr, [str(arg) for arg in args if arg]


def _module_markers(tree: ast.Module) -> list[ast.expr]:
    """The markers a module puts on every scenario (``pytestmark = ...``, one or a list)."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "pytestmark" for t in node.targets):
            return list(node.value.elts) if isinstance(node.value, (ast.List, ast.Tuple)) else [node.value]
    return []


def _facts(function: ast.FunctionDef, module_markers: list[ast.expr], constants: dict[str, str]) -> list[str]:
    markers: dict[str, list[str]] = {}
    found = (_marker(decorator, constants) for decorator in [*module_markers, *function.decorator_list])
    for name, args in filter(None, found):
        markers.setdefault(name, []).extend(args)
    names = {arg.arg for arg in function.args.args}
    facts = [f"needs {' and '.join(f'`{name}`' for name in markers['requires'])}" if "requires" in markers
             else "core"]
    if "real_server" in markers:
        facts.append(f"on a real server ({', '.join(markers['real_server'])}: skipped on fakeredis)")
    if "window" in names:
        facts.append("at every window size N")
    if "profile" in names:
        facts.append("for every model profile")
    if "guarantees" in markers:
        facts.append(f"checks the guarantee {', '.join(f'`{name}`' for name in markers['guarantees'])} "
                     "(a warning, failed by `--strict`)")
    if "starts_first" in markers:
        facts.append("starts first (it waits on the clock)")
    return facts


def render() -> str:
    parts = [HEADER]
    for path in suite_files():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        group, module_markers, constants = scenario_group(path.name), _module_markers(tree), _constants(tree)
        parts.append(f"## {group}\n\n`suite/{path.name}`\n\n{ast.get_docstring(tree) or ''}\n")
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                parts.append(f"### `{node.name}`\n\n_{'; '.join(_facts(node, module_markers, constants))}._\n\n"
                             f"{ast.get_docstring(node) or ''}\n")
    return "\n".join(parts)


def main() -> int:
    PAGE.write_text(render(), encoding="utf-8")
    print(f"wrote {PAGE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
