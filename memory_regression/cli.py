"""The runner: ``memory-regression --store SPEC [options] [-k EXPR] [-- pytest args]``.

It takes its flags from the command line and, inside a GitHub Action, from ``INPUT_*`` variables
(the command line wins); builds the settings; installs the user's requirements; hands a
:class:`~.run.SuiteRun` to pytest, which runs the scenarios in supervised worker processes; gives
the files it wrote to the owner of the working directory; publishes outputs, the job summary and
annotations on GitHub; and exits with the run's status: 0 all passed, 1 some failed, 2 usage or
configuration error, 3 Redis could not be started or went away, 130 interrupted.

Only the standard library is imported before the signal handlers are installed, so an interrupt
at any moment ends with exit status 130 and reports that say so.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any, Mapping

from .interrupts import INTERRUPTS

PIP_OUTPUT_SHOWN = 3000
PYTEST_PLUGINS = ("xdist", "metadata", "html")   # pytest-xdist, and pytest-html with what it needs


def _parser(options: Any) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="memory-regression", add_help=False,
        description="Run the memory-regression suite against your store and a real Redis server.",
        epilog="Other arguments (-k EXPR, -x, and everything after --) go to pytest. Inside a GitHub "
               "Action, inputs named like the flags (window-sizes, pytest-args, ...) fill in the flags "
               "not given. Exit status: 0 passed, 1 failed, 2 usage error, 3 Redis unavailable, "
               "130 interrupted.")
    parser.add_argument("-h", "--help", action="store_true", help="show this help and exit")
    for option in options:
        if option.is_switch:
            parser.add_argument(option.flag, dest=option.key, action="store_true", help=option.help)
        else:
            parser.add_argument(option.flag, dest=option.key, default=option.default, metavar=option.metavar,
                                help=f"{option.help} (default: {option.default})"
                                if option.default is not None else option.help)
    return parser


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


def hand_over(paths: list[Path], workdir: Path) -> None:
    """Give what the run wrote to the owner of the working directory when we run as root (a
    container), so the user, or a later workflow step, can read and delete it. Only the files and
    directories the run wrote are touched, and a symlink is never followed."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return
    owner = workdir.stat()
    if owner.st_uid == 0:
        return
    for path in paths:
        try:
            if not path.is_symlink():
                os.chown(path, owner.st_uid, owner.st_gid, follow_symlinks=False)
        except OSError:
            pass


class Runner:
    """One invocation of the runner, from arguments to exit status."""

    def __init__(self, argv: list[str], environ: Mapping[str, str]):
        self.argv = argv
        self.environ = environ
        self.run: Any = None               # the SuiteRun, once pytest is started
        self.stopped: tuple[Any, str] | None = None   # (status, message) of a run stopped before pytest
        self.paths: Any = None
        self.created: list[Path] = []      # directories the run made for its reports
        self.workdir = Path.cwd()
        self.store: str | None = None
        self.fail_on_failure = True
        self.redactor: Any = None
        self.summary: Any = None           # the RunSummary, once finished

    def start(self, stack: contextlib.ExitStack) -> int | None:
        """Everything up to the end of the pytest session; an exit status only for --help."""
        from . import github, reports
        from .contract import UsageError
        from .redaction import Redactor, url_secrets
        from .results import Status
        from .settings import OPTIONS, Settings

        args = self.argv
        before, after = (args[:args.index("--")], args[args.index("--") + 1:]) if "--" in args else (args, [])
        if github.is_github_actions(self.environ):
            from_inputs, pytest_from_inputs = github.inputs_as_args(
                self.environ, [(o.flag, o.is_switch) for o in OPTIONS], before)
            before, after = before + from_inputs, after + pytest_from_inputs
        parser = _parser(OPTIONS)
        parsed, rest = parser.parse_known_args(before)
        if parsed.help:
            parser.print_help()
            return 0
        values = vars(parsed)
        self.paths = reports.ReportPaths(self.workdir / values["report_dir"])   # until --working-directory
        INTERRUPTS.check()   # from here on, an interrupt has reports to go to
        self.store = values["store"]
        self.redactor = Redactor(url_secrets(str(values["redis"])))
        if github.is_github_actions(self.environ):
            for secret in self.redactor.secrets:
                print(github.mask(secret), flush=True)
            stack.enter_context(github.commands_stopped())
        if values["working_directory"]:
            try:
                os.chdir(values["working_directory"])
            except OSError as exc:
                self.stopped = (Status.USAGE_ERROR,
                                f"--working-directory {values['working_directory']!r}: {exc.strerror}")
                return None
        self.workdir = Path.cwd()
        self.paths = reports.ReportPaths(self.workdir / values["report_dir"])
        try:
            self.created = reports.prepare_report_dir(self.paths, values["report_dir"])
            settings = Settings.from_mapping(values, self.workdir)
            fail_on_failure = str(values["fail_on_failure"]).strip().lower()
            if fail_on_failure not in ("true", "false"):
                raise UsageError(f"--fail-on-failure {values['fail_on_failure']!r}: use true or false")
            self.fail_on_failure = fail_on_failure == "true"
        except UsageError as exc:
            self.stopped = (Status.USAGE_ERROR, str(exc))
            return None
        if values["requirements"]:
            with INTERRUPTS.raising():
                problem = install_requirements(values["requirements"])
            if problem:
                self.stopped = (Status.USAGE_ERROR, problem)
                return None

        import pytest

        from .plugin import suite_directory
        from .run import SuiteRun

        INTERRUPTS.check()
        self.run = SuiteRun(settings)
        suite = suite_directory()
        # only the plugins the suite uses, in the runner and its workers: other pytest plugins the
        # environment has (and their start-up time) stay out of the scenarios
        os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
        plugins = [arg for name in PYTEST_PLUGINS for arg in ("-p", name)]
        pytest.main([str(suite), "-c", str(suite / "pytest.ini"), "--rootdir", str(suite), *plugins, "-v",
                     "--tb=short", *rest, *after], plugins=[self.run])
        if not self.run.configured:   # pytest refused the arguments before the run began
            self.run.stop(Status.USAGE_ERROR, f"pytest rejected the arguments {shlex.join(rest + after)!r}; "
                                              "see its message above")
        return None

    def finish(self) -> int:
        """Write what is left to write, hand the files over, publish on GitHub, and say the status."""
        from . import reports
        from .redaction import Redactor
        from .results import ExitCode, RunSummary, Status

        INTERRUPTS.hold()
        if self.run is not None:
            self.run.conclude()
            summary = self.run.summary
        else:
            status, message = self.stopped or (Status.INTERRUPTED, "")
            if status is Status.INTERRUPTED or INTERRUPTS.received:
                by = f" by {INTERRUPTS.received}" if INTERRUPTS.received else ""
                status, message = Status.INTERRUPTED, f"the run was interrupted{by} before any scenario ran"
            summary = RunSummary(status, self.redactor.text(message) if self.redactor else message,
                                 store=self.store)
            print(f"memory-regression: {summary.status}: {summary.message}", file=sys.stderr, flush=True)
            if self.paths is not None:
                with contextlib.suppress(OSError):   # a report directory that cannot be written
                    reports.write_all(summary, self.paths, self.redactor or Redactor())
        if self.paths is not None:
            written = [Path(p) for p in reports.written_reports(self.paths).values()]
            hand_over([*self.created, *written], self.workdir)
        self.summary = summary
        if summary.exit_code == ExitCode.FAILED and not self.fail_on_failure:
            return int(ExitCode.PASSED)
        return int(summary.exit_code)


def main(argv: list[str] | None = None, environ: Mapping[str, str] | None = None) -> int:
    INTERRUPTS.install()
    runner = Runner(list(sys.argv[1:] if argv is None else argv), os.environ if environ is None else environ)
    with contextlib.ExitStack() as stack:
        try:
            code = runner.start(stack)
            if code is not None:
                return code
        except KeyboardInterrupt:
            pass
        code = runner.finish()
    from . import github
    if github.is_github_actions(runner.environ) and runner.paths is not None:
        github.publish(runner.summary, runner.paths, runner.environ, github.workspace_dir(runner.environ))
    INTERRUPTS.ignore()
    return code
