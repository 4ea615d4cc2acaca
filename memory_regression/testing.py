"""The suite as a class to subclass in your own pytest run, as langchain-tests' standard suites are:

    import pytest
    from memory_regression.testing import MemoryStoreSuite
    from my_app.memory import RedisMemory

    class TestRedisMemory(MemoryStoreSuite):
        @pytest.fixture
        def store_factory(self):
            return RedisMemory        # what --store names: a class or factory at a module's top level,
                                      # or the text --store takes ("my_app/memory.py:RedisMemory")

        @pytest.fixture
        def suite_options(self):      # optional: the runner's options, named as the action's inputs
            return {"window-sizes": "5,20", "groups": "default"}

Each scenario of the suite is a test of the class, of the same name and docstring (what it checks,
and what to look for when it fails). The first of them runs the suite for the class once, exactly
as ``memory-regression --store`` runs it: its own worker processes and Redis server, the same
binding, capabilities, skips, supervision and verdicts, and its reports in a directory of pytest's
``tmp_path_factory``. Then every test says how its scenario went, over all its runs (one per window
size, model profile or engine): failed when any failed, with each one's message and details;
skipped when all were skipped, with the reason; passed otherwise, with a warning (a
:class:`GuaranteeWarning`) for each guarantee a run found broken. A run that could not judge the
store (a usage error, Redis not reachable) errors every test with the runner's message.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import json
import os
import subprocess
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import pytest

from .groups import scenario_group, suite_files
from .reports.results import ExitCode


class GuaranteeWarning(UserWarning):
    """A scenario passed, but found a guarantee broken: a cost or a transient effect (the runner's
    ``--strict``, in ``suite_options``, fails it instead)."""


RUNNER = "import sys\nfrom memory_regression.cli import main\nsys.exit(main())"
FAILED_OUTCOMES = ("failed", "error")
_RUNS: dict[tuple, "SuiteRunResult"] = {}   # (test class, the runner's arguments) -> its run, once per session


def store_spec(factory: Any) -> str:
    """What ``--store`` names for ``factory``: ``package.module:NAME`` when its module is importable
    by that name, else ``path/to/file.py:NAME``. A factory the runner's processes cannot import by
    name (a lambda, a class defined in a function) fails the tests, saying so."""
    module = inspect.getmodule(factory)
    name = getattr(factory, "__qualname__", None) or getattr(factory, "__name__", None)
    if module is None or not name or getattr(module, name, None) is not factory:
        pytest.fail(f"store_factory returned {factory!r}, which the suite's worker processes cannot import by name: "
                    "return a class or factory function defined at the top level of a module", pytrace=False)
    try:
        spec = importlib.util.find_spec(module.__name__) if module.__name__ != "__main__" else None
    except (ImportError, ValueError):   # a module without a spec (run as a script, made by exec)
        spec = None
    if spec is not None and spec.origin and Path(spec.origin) == Path(module.__file__ or ""):
        return f"{module.__name__}:{name}"
    return f"{inspect.getsourcefile(factory)}:{name}"


def option_arguments(options: dict[str, Any]) -> list[str]:
    """``suite_options`` as the runner's arguments: ``{"window-sizes": "5,20", "strict": True}`` is
    ``--window-sizes 5,20 --strict``; a switch set False is left out."""
    arguments: list[str] = []
    for name, value in options.items():
        flag = f"--{name.removeprefix('--')}"
        if value is True:
            arguments.append(flag)
        elif value is not False and value is not None:
            arguments += [flag, str(value)]
    return arguments


@dataclass
class SuiteRunResult:
    """A run of the suite for one test class: its summary.json, its exit status, its report directory."""

    summary: dict[str, Any]
    exit_code: int
    report_dir: Path

    def check(self, scenario: str) -> None:
        """Pass, skip or fail as ``scenario`` went over all its runs."""
        if self.exit_code not in (ExitCode.PASSED, ExitCode.FAILED):
            pytest.fail(f"the suite could not judge the store ({self.summary.get('status')}): "
                        f"{self.summary.get('message')}\nreports: {self.report_dir}", pytrace=False)
        runs = [result for result in self.summary.get("results", []) if result["scenario"] == scenario]
        failed = [result for result in runs if result["outcome"] in FAILED_OUTCOMES]
        if failed:
            pytest.fail("\n\n".join(f"{result['nodeid']}: {result['message']}\n{result['details']}".rstrip()
                                    for result in failed) + f"\n\nreports: {self.report_dir}", pytrace=False)
        if not runs:
            pytest.skip("not run: its group is not among the groups of suite_options")
        if all(result["outcome"] == "skipped" for result in runs):
            pytest.skip("; ".join(sorted({result["message"] for result in runs})))
        for result in runs:   # a cost or a transient effect: pytest lists it under the warnings
            for warning in result.get("warnings", []):
                warnings.warn(GuaranteeWarning(f"{result['nodeid']}: {warning['guarantee']}: {warning['text']}"),
                              stacklevel=1)


def run_suite(arguments: list[str], report_dir: Path) -> SuiteRunResult:
    """Run ``memory-regression`` with ``arguments``, its reports in ``report_dir``, in a process of its
    own that imports what this one can (its ``sys.path``)."""
    environ = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    done = subprocess.run([sys.executable, "-c", RUNNER, *arguments, "--report-dir", str(report_dir)], env=environ,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
    summary_file = report_dir / "summary.json"
    if not summary_file.is_file():   # the runner refused its arguments before it wrote anything
        return SuiteRunResult({"status": "usage error", "message": done.stdout.strip()[-3000:]}, done.returncode,
                              report_dir)
    return SuiteRunResult(json.loads(summary_file.read_text(encoding="utf-8")), done.returncode, report_dir)


def _scenario_test(name: str, docstring: str | None) -> Callable[..., None]:
    def scenario(self: Any, memory_suite_run: SuiteRunResult) -> None:
        memory_suite_run.check(name)
    scenario.__name__ = scenario.__qualname__ = name
    scenario.__doc__ = docstring
    return scenario


class MemoryStoreSuite:
    """Subclass it as ``Test<YourStore>`` and override :meth:`store_factory` (and, if you like,
    :meth:`suite_options`): every scenario of the suite becomes a test of your class."""

    @pytest.fixture
    def store_factory(self) -> Any:
        """Your store: the class or factory ``--store`` would name, or what ``--store`` takes as text
        (``"app/memory.py:ChatMemory"``, ``"app.memory:ChatMemory"``), read from pytest's root directory:
        then your test module imports nothing of your application."""
        pytest.fail(f"{type(self).__name__} must override the store_factory fixture, returning your store's class "
                    "or factory", pytrace=False)

    @pytest.fixture
    def suite_options(self) -> dict[str, Any]:
        """The runner's options, by the names of the action's inputs (``window-sizes``, ``groups``,
        ``redis``, ``strict``, ...): none, the defaults."""
        return {}

    @pytest.fixture
    def memory_suite_run(self, store_factory: Any, suite_options: dict[str, Any], request: pytest.FixtureRequest,
                         tmp_path_factory: pytest.TempPathFactory) -> SuiteRunResult:
        """The suite's run for this class and these fixtures' values, once: the first test runs it,
        the others read it. A store named as text is read from pytest's root directory (suite_options'
        working-directory, if it names one, wins)."""
        named = (["--store", store_factory, "--working-directory", str(request.config.rootpath)]
                 if isinstance(store_factory, str) else ["--store", store_spec(store_factory)])
        arguments = [*named, *option_arguments(suite_options)]
        key = (type(self), *arguments)
        if key not in _RUNS:
            _RUNS[key] = run_suite(arguments, tmp_path_factory.mktemp(f"{type(self).__name__}-reports"))
        return _RUNS[key]


def _add_scenarios() -> None:
    """One test of :class:`MemoryStoreSuite` per scenario of the suite's files, in their order."""
    for path in suite_files():
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                if hasattr(MemoryStoreSuite, node.name):
                    raise RuntimeError(f"two scenarios named {node.name} ({scenario_group(path.name)})")
                setattr(MemoryStoreSuite, node.name, _scenario_test(node.name, ast.get_docstring(node)))


_add_scenarios()
