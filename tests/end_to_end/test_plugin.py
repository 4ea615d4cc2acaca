"""The suite as a pytest plugin: plain pytest runs it, other pytest runs never see it, an unknown
capability in a scenario's marker and a broken installation are the suite's errors, and plain
pytest without a store says what to give."""

import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from tests.conftest import GOOD, ONE_SCENARIO, ROOT


def test_unknown_capability_in_a_marker_is_a_suite_error(tmp_path):
    done, summary = run_with_edited_suite(tmp_path, "test_ttl.py", lambda text: text.replace(
        '@pytest.mark.requires("ttl")\ndef test_append_refreshes_ttl', '@pytest.mark.requires("tll")\n'
        'def test_append_refreshes_ttl'))
    assert done.returncode == 2, done.stdout + done.stderr
    assert summary["status"] == "suite error"
    assert "@pytest.mark.requires('tll') names no capability" in summary["message"]


@pytest.mark.parametrize("where", [["suite"],
                                   ["-p", "memory_regression.plugin", "--pyargs", "memory_regression.suite"]])
def test_plain_pytest_runs_the_suite(tmp_path, where):
    done = subprocess.run([sys.executable, "-m", "pytest", *where, "--store", GOOD, "--report-dir",
                           str(tmp_path), "-q", *ONE_SCENARIO], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "summary.json").is_file() and (tmp_path / "report.html").is_file()


def test_other_pytest_runs_never_see_the_plugin(tmp_path):
    """A user's own tests, in the environment that has the suite installed, with a fixture named
    ``stores`` (as one of the scenarios' is) and a ``--store`` option of their own: the suite's plugin
    must stay out."""
    (tmp_path / "conftest.py").write_text(textwrap.dedent("""\
        import pytest

        def pytest_addoption(parser):
            parser.addoption("--store", default="shelf")

        @pytest.fixture
        def stores():
            return ["kept"]
        """), encoding="utf-8")
    (tmp_path / "test_app.py").write_text(textwrap.dedent("""\
        def test_uses_its_own_stores_fixture(stores, pytestconfig):
            assert stores == ["kept"] and pytestconfig.getoption("--store") == "shelf"
        """), encoding="utf-8")
    for extra in ([], ["--store", "warehouse"]):
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *extra],
                              cwd=tmp_path, capture_output=True, text=True, timeout=120,
                              env={**os.environ, "PYTEST_ADDOPTS": ""})
        if extra:
            assert done.returncode == 1 and "'warehouse' == 'shelf'" in done.stdout, done.stdout + done.stderr
        else:
            assert done.returncode == 0, done.stdout + done.stderr
        assert "memory-regression" not in done.stdout + done.stderr
    assert not (tmp_path / "memory-reports").exists(), "the plugin wrote reports"


def run_with_edited_suite(tmp_path, module, edit):
    """Run the runner on a copy of the suite whose ``module`` was changed by ``edit``."""
    shutil.copytree(ROOT / "suite", tmp_path / "suite")
    path = tmp_path / "suite" / module
    edited = edit(path.read_text(encoding="utf-8"))
    assert edited != path.read_text(encoding="utf-8"), "the edit changed nothing"
    path.write_text(edited, encoding="utf-8")
    script = ("import sys, pathlib; import memory_regression.cli as cli, memory_regression.plugin as plugin; "
              f"plugin.suite_directory = lambda: pathlib.Path({str(tmp_path / 'suite')!r}); "
              f"sys.exit(cli.main(['--store', {GOOD!r}, '--report-dir', {str(tmp_path / 'reports')!r}]))")
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    return done, json.loads((tmp_path / "reports" / "summary.json").read_text())


def test_a_broken_suite_installation_is_reported(tmp_path):
    """A scenario module that cannot be imported is a configuration error, not an interruption."""
    done, summary = run_with_edited_suite(tmp_path, "test_ttl.py",
                                          lambda text: text + "import a_module_nobody_installed\n")
    assert done.returncode == 2, done.stdout + done.stderr
    assert summary["status"] == "suite error"
    assert "a_module_nobody_installed" in summary["message"]


def test_plain_pytest_without_a_store_says_so():
    done = subprocess.run([sys.executable, "-m", "pytest", "suite", "-q"], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == pytest.ExitCode.USAGE_ERROR, done.stdout + done.stderr
    assert "give --store" in done.stderr
