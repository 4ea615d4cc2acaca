"""The package's shape, as docs/architecture.md describes it: its layers import only downwards and no two
modules import each other (import-linter's contracts in pyproject.toml, typing-only imports included), a
few faces at the top and the rest in sub-packages, every module within 450 lines and every function
within 60, and a page that names every sub-package and only modules that exist."""

import ast
import re

from importlinter import cli as import_linter

from tests.conftest import ROOT

PACKAGE = ROOT / "memory_regression"
MAX_MODULE_LINES = 450
MAX_FUNCTION_LINES = 60
MAX_TOP_MODULES = 15
# functions longer than MAX_FUNCTION_LINES, each with why it stays whole (none today)
LONG_FUNCTIONS: dict[str, str] = {}


def modules():
    return [path for path in sorted(PACKAGE.rglob("*.py")) if "suite" not in path.relative_to(PACKAGE).parts]


def test_the_import_contracts_hold(capsys):
    """The layers (highest first: the faces, runner, worker, harness, settings, options, reports,
    reference, contract, frameworks, engines and channel, the base), the frameworks importing nothing of
    the package's layers, and no cycle among any package's modules."""
    status = import_linter.lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True, no_logo=True)
    assert status == import_linter.EXIT_STATUS_SUCCESS, capsys.readouterr().out


def test_few_modules_sit_at_the_top_and_every_module_is_short():
    top = [path.name for path in PACKAGE.glob("*.py")]
    assert len(top) <= MAX_TOP_MODULES, top
    long_modules = {str(path.relative_to(ROOT)): n for path in modules()
                    if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES}
    assert long_modules == {}, long_modules


def test_every_function_is_short_or_says_why_not():
    found = {}
    for path in modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    found[f"{path.relative_to(ROOT)}::{node.name}"] = length
    assert set(found) == set(LONG_FUNCTIONS), found


def test_the_architecture_page_names_every_sub_package_and_only_modules_that_exist():
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    sub_packages = sorted(path.parent.name for path in PACKAGE.glob("*/__init__.py") if path.parent.name != "suite")
    assert [name for name in sub_packages if f"`{name}/`" not in page] == []
    named, missing = set(), []
    for bullet in re.split(r"\n(?=\s*- )", page):   # a module named bare is its bullet's sub-package's
        within = re.search(r"`((?:[\w.-]+/)+)`", bullet)   # the first directory the bullet names
        for name in re.findall(r"`((?:[\w.-]+/)*[\w.-]+\.py)`", bullet):
            places = [base / within.group(1) / name for base in (PACKAGE, ROOT)] if within and "/" not in name else []
            if not any(place.is_file() for place in [*places, PACKAGE / name, ROOT / name]):
                missing.append(name)
            named.add(name)
    assert missing == [], missing
    assert len(named) > 60, "the page names the modules"
