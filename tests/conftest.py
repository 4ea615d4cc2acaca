"""Helpers for this project's own tests: run the suite the way a user does, and read what it wrote."""

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ENTRYPOINT = ROOT / "entrypoint.py"
RUN_TIMEOUT_S = 300


def pytest_addoption(parser):
    parser.addoption("--corpus-runs", type=int, default=1,
                     help="how many times to run every store of the corpus (flakiness check)")


def pytest_generate_tests(metafunc):
    if "corpus_run" in metafunc.fixturenames:
        runs = metafunc.config.getoption("--corpus-runs")
        metafunc.parametrize("corpus_run", range(runs), ids=[f"run{i + 1}" for i in range(runs)])


@dataclass
class SuiteRun:
    exit_code: int
    output: str
    report_dir: Path

    @property
    def summary(self) -> dict:
        return json.loads((self.report_dir / "summary.json").read_text(encoding="utf-8"))

    def failing_scenarios(self) -> set[str]:
        return {r["scenario"] for r in self.summary["results"] if r["outcome"] in ("failed", "error")}


@pytest.fixture
def run_suite(tmp_path):
    """Run entrypoint.py in a subprocess with the given arguments; reports go under tmp_path."""
    def run(*args, cwd=ROOT, env=None, report_dir=None):
        report_dir = report_dir or tmp_path / "reports"
        command = [sys.executable, str(ENTRYPOINT), "--report-dir", str(report_dir), *args]
        environment = {**os.environ, **(env or {})}
        done = subprocess.run(command, cwd=cwd, env=environment, capture_output=True, text=True,
                              timeout=RUN_TIMEOUT_S)
        return SuiteRun(done.returncode, done.stdout + done.stderr, report_dir)
    return run
