"""The runner: ``memory-regression --store SPEC [options] [-k EXPR] [-- pytest args]``.

It takes its flags from the command line and, inside a GitHub Action, from ``INPUT_*``
variables (the command line wins); installs the user's requirements; runs the suite with pytest
in this process; hands the report files to the owner of the working directory; publishes
outputs, the job summary and annotations on GitHub; and exits with the status the plugin wrote
into summary.json: 0 all passed, 1 some failed, 2 usage or configuration error, 3 Redis could
not be started or reached, 130 interrupted.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Mapping

import pytest

from . import github
from .reports import EXIT_FAILED, EXIT_PASSED, EXIT_USAGE, RunSummary, write_error_junit, write_summaries
from .settings import OPTIONS, Option

RUNNER_OPTIONS: tuple[Option, ...] = (
    Option("--requirements", None, "your store's dependencies, installed before the run: a requirements "
           "file, or pip arguments", "FILE|ARGS"),
    Option("--working-directory", None, "run from this directory (store paths and --report-dir are "
           "relative to it)", "DIR"),
    Option("--fail-on-failure", "true", "false: exit 0 when scenarios fail (usage and Redis errors "
           "still exit 2 and 3)", "true|false"),
)
PIP_OUTPUT_SHOWN = 3000


def suite_directory() -> Path:
    try:
        from . import suite  # installed: the suite ships as memory_regression.suite
        return Path(suite.__file__).parent
    except ImportError:  # a checkout: suite/ beside the package
        return Path(__file__).resolve().parent.parent / "suite"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="memory-regression", add_help=False,
        description="Run the memory-regression suite against your store and a real Redis server.",
        epilog="Other arguments (-k EXPR, -x, and everything after --) go to pytest. Inside a GitHub "
               "Action, inputs named like the flags (window-sizes, pytest-args, ...) fill in the flags "
               "not given. Exit status: 0 passed, 1 failed, 2 usage error, 3 Redis unavailable, "
               "130 interrupted.")
    parser.add_argument("-h", "--help", action="store_true", help="show this help and exit")
    for option in OPTIONS + RUNNER_OPTIONS:
        if option.is_switch:
            parser.add_argument(option.flag, dest=option.dest, action="store_true", help=option.help)
        else:
            parser.add_argument(option.flag, dest=option.dest, default=option.default, metavar=option.metavar,
                                help=f"{option.help} (default: {option.default})"
                                if option.default is not None else option.help)
    return parser


def _pytest_args(parsed: argparse.Namespace, rest: list[str]) -> list[str]:
    """The plugin's options as parsed, then everything the runner does not know."""
    args: list[str] = []
    for option in OPTIONS:
        value = getattr(parsed, option.dest)
        if option.is_switch:
            args += [option.flag] if value else []
        else:
            args += [option.flag, "" if value is None else str(value)]  # an empty --store is reported
    return args + rest


def install_requirements(spec: str) -> str | None:
    """pip-install a requirements file or pip arguments; return pip's complaint if it failed."""
    target = ["-r", spec] if Path(spec).is_file() else shlex.split(spec)
    print(f"memory-regression: installing requirements: pip install {shlex.join(target)}", flush=True)
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--disable-pip-version-check",
                           "--no-input", *target], capture_output=True, text=True)
    if done.returncode == 0:
        return None
    output = (done.stdout + done.stderr).strip()
    return (f"installing requirements failed (pip install {shlex.join(target)} exited with "
            f"{done.returncode}); fix the requirements input or file. pip said:\n{output[-PIP_OUTPUT_SHOWN:]}")


def hand_over(report_dir: Path, workdir: Path) -> None:
    """Give the reports to the owner of the working directory when we run as root (a container),
    so the user, or a later workflow step, can read and delete them."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0 or not report_dir.exists():
        return
    owner = workdir.stat()
    if owner.st_uid == 0:
        return
    paths = [report_dir, *report_dir.rglob("*")]
    parent = report_dir.parent
    while parent != workdir and workdir in parent.parents and parent.stat().st_uid == 0:
        paths.append(parent)
        parent = parent.parent
    for path in paths:
        os.chown(path, owner.st_uid, owner.st_gid, follow_symlinks=False)


def _stop_early(report_dir: Path, store: str | None, message: str) -> int:
    """A usage error found by the runner itself: write the reports the plugin would have written."""
    print(f"memory-regression: usage error: {message}", file=sys.stderr, flush=True)
    summary = RunSummary(status="usage error", exit_code=EXIT_USAGE, store=store, message=message)
    write_summaries(summary, report_dir)
    write_error_junit(summary, report_dir)
    return EXIT_USAGE


def main(argv: list[str] | None = None, environ: Mapping[str, str] | None = None) -> int:
    environ = os.environ if environ is None else environ
    args = list(sys.argv[1:] if argv is None else argv)
    before, after = (args[:args.index("--")], args[args.index("--") + 1:]) if "--" in args else (args, [])
    on_github = github.is_github_actions(environ)
    if on_github:
        flags = [(o.flag, o.is_switch) for o in OPTIONS + RUNNER_OPTIONS]
        from_inputs, pytest_from_inputs = github.inputs_as_args(environ, flags, before)
        before, after = before + from_inputs, after + pytest_from_inputs
    parsed, rest = _parser().parse_known_args(before)
    if parsed.help:
        _parser().print_help()
        return 0

    if parsed.memory_working_directory:
        try:
            os.chdir(parsed.memory_working_directory)
        except OSError as exc:
            return _stop_early(Path.cwd() / parsed.memory_report_dir, parsed.memory_store,
                               f"--working-directory {parsed.memory_working_directory!r}: {exc.strerror}")
    workdir = Path.cwd()
    report_dir = workdir / parsed.memory_report_dir
    summary_json = report_dir / "summary.json"
    summary_json.unlink(missing_ok=True)

    fail_on_failure = str(parsed.memory_fail_on_failure).strip().lower()
    if fail_on_failure not in ("true", "false"):
        code = _stop_early(report_dir, parsed.memory_store,
                           f"--fail-on-failure {parsed.memory_fail_on_failure!r}: use true or false")
    elif parsed.memory_requirements and (problem := install_requirements(parsed.memory_requirements)):
        code = _stop_early(report_dir, parsed.memory_store, problem)
    else:
        suite = suite_directory()
        pytest_status = pytest.main([str(suite), "-c", str(suite / "pytest.ini"), "--rootdir", str(suite),
                                     "-v", "--tb=short", *_pytest_args(parsed, rest), *after])
        if summary_json.is_file():
            code = int(json.loads(summary_json.read_text(encoding="utf-8"))["exit_code"])
        else:  # pytest stopped before the plugin started (an argument pytest does not know, say)
            code = _stop_early(report_dir, parsed.memory_store,
                               f"pytest rejected the arguments (its exit status {int(pytest_status)}); "
                               "see its message above")

    hand_over(report_dir, workdir)
    if on_github:
        github.publish(json.loads(summary_json.read_text(encoding="utf-8")), report_dir / "summary.md",
                       environ, github.workspace_dir(environ))
    if code == EXIT_FAILED and fail_on_failure == "false":
        return EXIT_PASSED
    return code
