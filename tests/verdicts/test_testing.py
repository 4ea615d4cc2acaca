"""The suite as a class to subclass in the user's own pytest run (memory_regression/testing.py): a
class that names its store in one fixture gets every scenario as a test, with the outcomes the
runner gives the same store with the same options; a broken store fails the scenario that catches
it, with its diagnosis; a factory the workers cannot import and an option the runner refuses fail
every test, saying what to fix."""

import re
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

from memory_regression.groups import suite_files
from tests.conftest import ROOT

OPTIONS = {"groups": "core,count-window", "window-sizes": "5"}


def user_run(tmp_path, body):
    """pytest on a test module of the user's that holds ``body``; its outcomes by test name, and its output."""
    (tmp_path / "test_user_store.py").write_text(textwrap.dedent("""
        import pytest
        from memory_regression.testing import MemoryStoreSuite
        from tests.stores.broken import OffByOneTrim
        from tests.stores.correct import ListStore
        """) + textwrap.dedent(body), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", "-q",
                           f"--junitxml={tmp_path / 'junit.xml'}", "-W", "error::pytest.PytestRemovedIn10Warning",
                           "test_user_store.py"], cwd=tmp_path, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, timeout=300)
    outcomes = {}
    for case in ET.parse(tmp_path / "junit.xml").iter("testcase"):
        outcome = next((child.tag for child in case if child.tag in ("failure", "error", "skipped")), "passed")
        outcomes[(case.get("classname").rsplit(".", 1)[-1], case.get("name"))] = (outcome, case)
    return outcomes, done.stdout + done.stderr


def suite_class(name, store):
    """A test class of the user's that runs the suite on ``store`` with OPTIONS."""
    return f"""
        class {name}(MemoryStoreSuite):
            @pytest.fixture
            def store_factory(self):
                return {store}

            @pytest.fixture
            def suite_options(self):
                return {OPTIONS!r}
        """


def test_every_scenario_is_a_test_with_the_runners_outcome(tmp_path, run_suite):
    outcomes, output = user_run(tmp_path, suite_class("TestListStore", "ListStore"))
    scenarios = [name for path in suite_files() for name in re.findall(r"^def (test_\w+)", path.read_text(), re.M)]
    assert sorted(name for _, name in outcomes) == sorted(scenarios), output
    direct = run_suite("--store", "tests/stores/correct.py:ListStore",
                       *(argument for name, value in OPTIONS.items() for argument in (f"--{name}", value)))
    expected = {}
    for result in direct.summary["results"]:
        expected.setdefault(result["scenario"], set()).add(result["outcome"])
    for scenario in scenarios:
        outcome, case = outcomes[("TestListStore", scenario)]
        if scenario not in expected:
            assert outcome == "skipped", (scenario, output)
            assert "not among the groups of suite_options" in case.find("skipped").get("message"), output
        else:
            assert outcome == ("skipped" if expected[scenario] == {"skipped"} else "passed"), (scenario, expected)
    assert sum(outcome == "passed" for outcome, _ in outcomes.values()) == sum(
        seen != {"skipped"} for seen in expected.values()) > 5


def test_a_broken_store_fails_the_scenario_that_catches_it_with_its_diagnosis(tmp_path):
    outcomes, output = user_run(tmp_path, suite_class("TestOffByOne", "OffByOneTrim"))
    failed = {name: case for (_, name), (outcome, case) in outcomes.items() if outcome == "failure"}
    assert set(failed) == {"test_count_window_keeps_last_n"}, output
    text = failed["test_count_window_keeps_last_n"].find("failure").text
    assert "test_count_window.py::test_count_window_keeps_last_n[N=5]: N=5, after 6 appends: kept 6 messages" in text
    assert "reports: " in text and "testing.py" not in text, text


def test_what_the_runner_cannot_take_fails_every_test_saying_what_to_fix(tmp_path):
    outcomes, output = user_run(tmp_path, """
        class TestLambda(MemoryStoreSuite):
            @pytest.fixture
            def store_factory(self):
                return lambda redis_url: ListStore(redis_url)


        class TestBadOption(MemoryStoreSuite):
            @pytest.fixture
            def store_factory(self):
                return ListStore

            @pytest.fixture
            def suite_options(self):
                return {"window-sizes": "0"}


        class TestNoFactory(MemoryStoreSuite):
            pass
        """)
    texts = {}
    for (cls, _), (outcome, case) in outcomes.items():
        assert outcome in ("failure", "error"), (cls, output)
        texts.setdefault(cls, set()).add(next(child.get("message") for child in case))
    wanted = {"TestLambda": "which the suite's worker processes cannot import by name: return a class or factory "
                            "function defined at the top level of a module",
              "TestBadOption": "the suite could not judge the store (usage error): --window-sizes '0': '0' is not a "
                               "whole number of at least 1 (example: --window-sizes 5,10,50)",
              "TestNoFactory": "TestNoFactory must override the store_factory fixture, returning your store's class "
                               "or factory"}
    for cls, phrase in wanted.items():
        assert texts[cls] and all(phrase in text for text in texts[cls]), (cls, texts[cls])


def test_a_plain_project_names_its_store_as_text_and_imports_nothing_of_it(tmp_path):
    """A project as a new user has it: the store in app/memory.py, the test in tests/, no pytest.ini and
    nothing on PYTHONPATH but the tool. Importing the store in the test module fails (pytest puts
    tests/ on sys.path, not the root), which docs/running.md says; naming it as --store does passes."""
    (tmp_path / "app").mkdir()
    (tmp_path / "tests").mkdir()
    (tmp_path / "app" / "memory.py").write_text((ROOT / "examples/stores/count_window.py").read_text())
    body = f"""
        import pytest
        from memory_regression.testing import MemoryStoreSuite

        class TestAsText(MemoryStoreSuite):
            @pytest.fixture
            def store_factory(self):
                return "app/memory.py:CountWindowStore"

            @pytest.fixture
            def suite_options(self):
                return {OPTIONS!r}
        """
    (tmp_path / "tests" / "test_memory.py").write_text(textwrap.dedent(body))
    (tmp_path / "tests" / "test_imported.py").write_text("from app.memory import CountWindowStore\n")
    pytest_command = Path(sys.executable).parent / "pytest"   # as users run it (python -m puts the root on sys.path)
    done = subprocess.run([str(pytest_command), "-p", "no:cacheprovider", "-p", "no:xdist", "-q", "-rfE",
                           "--continue-on-collection-errors", "tests/"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)})
    assert "ModuleNotFoundError: No module named 'app'" in done.stdout, done.stdout
    assert re.search(r"^ERROR tests/test_imported\.py", done.stdout, re.M), done.stdout
    assert "FAILED" not in done.stdout and re.search(r"\b\d+ passed", done.stdout), done.stdout[-3000:]
