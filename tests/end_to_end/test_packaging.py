"""What users install is what is tested: the wheel built from this checkout, installed on its own (not
the editable checkout), runs the example store; it ships the scenarios, the suite's pytest.ini and the
Node.js driver, and its metadata names the distribution and an SPDX license.

The wheel is built with the setuptools the test extras install (no build isolation: tests reach no
index) and installed with ``--no-deps --no-index --target``: its dependencies are the ones this
environment already has, its own code only what the wheel holds."""

import json
import os
import shutil
import subprocess
import sys
import zipfile
from email.parser import Parser

from memory_regression.groups import known_groups
from tests.conftest import ROOT

EXAMPLE = "examples/stores/count_window.py"


def run(*command, **options):
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, **options)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def test_the_wheel_installed_on_its_own_runs_the_example_store(tmp_path):
    checkout = tmp_path / "checkout"   # a copy: building writes build/ and *.egg-info into the source tree
    shutil.copytree(ROOT, checkout, ignore=shutil.ignore_patterns(".git", ".venv*", "node_modules", "memory-reports",
                                                                    "__pycache__", "*.egg-info", "build", "tests"))
    run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q",
        "-w", str(tmp_path / "dist"), str(checkout))
    wheel, = (tmp_path / "dist").glob("memory_regression-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        metadata = Parser().parsestr(archive.read(next(n for n in names if n.endswith(".dist-info/METADATA")))
                                     .decode())
    assert {"memory_regression/suite/pytest.ini", "memory_regression/suite/test_core.py",
            "memory_regression/contract/drivers/node/driver.mjs",
            "memory_regression/contract/drivers/node/package.json", "memory_regression/frameworks/__init__.py"} <= names
    assert not [n for n in names if "/test/" in n or n.startswith("tests/")], "the driver's own tests ship"
    assert metadata["Name"] == "memory-regression" and metadata["License-Expression"] == "MIT"

    installed = tmp_path / "installed"
    run(sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "-q", "--target", str(installed),
        str(wheel))
    project = tmp_path / "project"    # a user's project: the example store, and no checkout on the path
    project.mkdir()
    shutil.copy(ROOT / EXAMPLE, project / "memory.py")
    env = {**os.environ, "PYTHONPATH": str(installed)}
    where = run(sys.executable, "-c", "import memory_regression.suite as s, memory_regression as m; "
                "print(m.__file__); print(s.__file__)", cwd=project, env=env).stdout.split()
    assert all(path.startswith(str(installed)) for path in where), where
    done = subprocess.run([sys.executable, str(installed / "bin" / "memory-regression"), "--store",
                           "memory.py:CountWindowStore"], cwd=project, env=env, capture_output=True, text=True,
                          timeout=300)
    summary = json.loads((project / "memory-reports" / "summary.json").read_text())
    assert done.returncode == 0 and summary["status"] == "passed", done.stdout[-3000:] + done.stderr
    assert summary["totals"]["failed"] == summary["totals"]["errors"] == 0, summary["totals"]
    assert {r["group"] for r in summary["results"]} == set(known_groups()), "a scenario file did not ship"
