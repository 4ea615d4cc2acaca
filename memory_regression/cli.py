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
import json
import os
import shlex
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Mapping

from .runner import utf8_mode
from .runner.interrupts import INTERRUPTS
from .reports.ownership import hand_over
from .runner.command_line import (ArgumentsRejected, attached_values, keyword_expressions, keyword_problem, parser_of,
                                  rejected_arguments, writes_outside)

PYTEST_PLUGINS = ("xdist", "metadata", "html")   # pytest-xdist, and pytest-html with what it needs


@dataclass(frozen=True)
class _Given:
    """The options as the runner was given them (:meth:`Runner._options`)."""

    values: dict[str, Any]
    after: list[str]            # pytest's own arguments (after --, and an action's pytest-args input)
    in_action: bool
    pytest_from_inputs: bool    # some of those came from the pytest-args input
    kept: bool                  # the project's table gave some
    problem: str | None         # what is wrong with them, said once the reports have somewhere to go
    parser: argparse.ArgumentParser


@dataclass(frozen=True)
class _Plan:
    """What the run is, every option checked (:meth:`Runner._plan`)."""

    settings: Any
    run_timeout: float
    baseline: tuple[str, dict, Any] | None
    requirements: list[str] | None


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
        self.write_baseline: tuple[str, Path] | None = None   # --write-baseline: the path as given, and where
        self.redactor: Any = None
        self.credentials: list[str] = []   # the CI tokens taken from the environment (.credentials)
        self.summary: Any = None           # the RunSummary, once finished
        self.facts: Any = None             # what its status was decided on (runner.verdict.RunFacts)
        self.listing = False               # --list: bind the store and list the scenarios, run none
        self.values: dict[str, Any] | None = None   # the options as given: flags, inputs, the project's table
        self.phrase: Callable[[str], str] = lambda text: text   # in an action: names inputs, not flags

    def start(self, stack: contextlib.ExitStack) -> int | None:
        """Everything up to the end of the pytest session; an exit status when there is nothing to
        run (--help, --version, no arguments at all)."""
        from .errors import UsageError
        from .reports.results import Status

        given = self._options()
        values = given.values
        if not self.argv and not given.in_action and not given.kept and not given.problem:
            print(given.parser.format_usage() + "memory-regression: error: give the store to test, for example "
                  "--store app/memory.py:ChatMemory, or keep it in pyproject.toml's [tool.memory-regression] "
                  "table (see memory-regression --help)", file=sys.stderr)
            return int(Status.USAGE_ERROR.exit_code)
        if values.get("help"):
            given.parser.print_help()
            return 0
        if values.get("version"):
            from . import __version__
            print(f"memory-regression {__version__}")
            return 0
        self._guard(values, stack)
        try:
            plan = self._plan(values, given)
            self._prepare(plan)
        except UsageError as exc:
            self.stopped = (Status.USAGE_ERROR, str(exc))
            return None
        self._launch(plan, given)
        return None

    def _options(self) -> "_Given":
        """The options as given: the arguments (an action's inputs among them, where it runs as one), then the
        project's [tool.memory-regression] table under them; a problem with any of them is kept for later,
        when the reports have somewhere to go."""
        from .errors import UsageError
        from .contract.rules import contract_summary
        from .options import OPTIONS
        from .reports import github
        from .runner import project_table

        args = self.argv
        before, after = (args[:args.index("--")], args[args.index("--") + 1:]) if "--" in args else (args, [])
        parser = parser_of(OPTIONS, contract_summary())
        in_action, pytest_from_inputs = github.runs_as_action(self.environ), []
        if in_action:   # messages name the inputs the values came from, not flags nobody typed
            typed = {arg.partition("=")[0] for arg in before}
            self.phrase = github.input_namer([o.flag for o in OPTIONS if o.flag not in typed])
            from_inputs, pytest_from_inputs = github.inputs_as_args(
                self.environ, [(o.flag, o.is_switch) for o in OPTIONS], before)
            before, after = before + from_inputs, after + pytest_from_inputs
        try:
            before = attached_values(before, {option.flag for option in OPTIONS if not option.is_switch})
            parsed, rest = parser.parse_known_args(before)
            values = vars(parsed)
            problem = rejected_arguments(rest, parser) if rest else None
        except ArgumentsRejected as exc:   # the defaults, so that the usage error has reports to go to
            values, problem = vars(parser.parse_known_args([])[0]), str(exc)
        try:   # the project's [tool.memory-regression] table, under the flags and inputs given
            kept = project_table.read(Path(values["working_directory"] or "."), OPTIONS)
        except UsageError as exc:
            kept, problem = {}, problem or str(exc)
        flags = {arg.partition("=")[0] for arg in before}
        values.update({key: value for key, value in kept.items() if f"--{key.replace('_', '-')}" not in flags})
        self.values = values
        return _Given(values, after, in_action, bool(pytest_from_inputs), bool(kept), problem, parser)

    def _guard(self, values: dict[str, Any], stack: contextlib.ExitStack) -> None:
        """Before anything of the run starts: the CI credentials withdrawn from the environment, the secrets
        the output must never show (masked on GitHub, where the step's log is as public as the action's)."""
        from .redaction import Redactor, url_secrets
        from .reports import github, files as reports
        from .runner.credentials import withdraw

        self.listing = values["list"]
        self.paths = None if self.listing else reports.ReportPaths(self.workdir / values["report_dir"])
        INTERRUPTS.check()   # from here on, an interrupt has reports to go to
        self.store = values["store"]
        self.credentials = withdraw()   # before any process of the run starts: none inherits them
        urls = [*str(values["redis"]).split(","), str(values["service_url"] or "")]
        self.redactor = Redactor([*(secret for entry in urls for secret in url_secrets(entry)), *self.credentials])
        if github.is_github_actions(self.environ):
            for secret in self.redactor.secrets:
                print(github.mask(secret), flush=True)
            stack.enter_context(github.commands_stopped())

    def _plan(self, values: dict[str, Any], given: "_Given") -> "_Plan":
        """Every option checked, from the working directory (entered here), with the report directory
        prepared: a UsageError saying what to fix, the first found."""
        from .errors import UsageError
        from .reports import files as reports
        from .reports.baseline import DEFAULT_FAIL_ON, check_fail_on
        from .reports.baseline_file import DEADLINE_S, load_baseline
        from .runner import requirements
        from .settings import Settings, parse_timeout

        if values["working_directory"]:
            try:
                os.chdir(values["working_directory"])
            except OSError as exc:
                raise UsageError(f"--working-directory {values['working_directory']!r}: {exc.strerror}") from None
        self.workdir = Path.cwd()
        if not self.listing:
            self.paths = reports.ReportPaths(self.workdir / values["report_dir"])
            self.created = reports.prepare_report_dir(self.paths, values["report_dir"])
        problem = given.problem or next(filter(None, map(keyword_problem, keyword_expressions(values, given.after))),
                                        None)
        if not problem and self.paths is not None:
            problem = writes_outside(given.after, self.paths.directory.resolve(), self.workdir)
        if problem:
            raise UsageError(problem)
        settings = Settings.from_mapping(values, self.workdir)
        run_timeout = parse_timeout(values["run_timeout"], "--run-timeout")
        fail_on_failure = str(values["fail_on_failure"]).strip().lower()
        if fail_on_failure not in ("true", "false"):
            raise UsageError(f"--fail-on-failure {values['fail_on_failure']!r}: use true or false")
        self.fail_on_failure = fail_on_failure == "true"
        if values["write_baseline"]:
            target = self.workdir / values["write_baseline"]
            if not target.parent.is_dir():
                raise UsageError(f"--write-baseline {values['write_baseline']!r}: its directory "
                                 f"{str(target.parent)!r} does not exist")
            self.write_baseline = (values["write_baseline"], target)
        fail_on = check_fail_on(values["fail_on_regression"] or ",".join(DEFAULT_FAIL_ON))
        if values["fail_on_regression"] and not values["baseline"]:   # a workflow's first run has no baseline yet
            print(self.phrase("memory-regression: --fail-on-regression applies to a run compared with a "
                              "baseline; without --baseline this run fails on any failing scenario"),
                  file=sys.stderr, flush=True)
        with INTERRUPTS.raising():   # a pipe may take its time: Ctrl-C and SIGTERM end the wait
            baseline = ((values["baseline"], load_baseline(self.workdir / values["baseline"], values["baseline"],
                                                           min(DEADLINE_S, run_timeout)),
                         fail_on) if values["baseline"] else None)
        pip = requirements.pip_arguments(values["requirements"], self.workdir) if values["requirements"] else None
        return _Plan(settings, run_timeout, baseline, pip)

    def _prepare(self, plan: "_Plan") -> None:
        """The store's requirements installed, then its spec checked from its source: a typo is said before
        Redis and the workers start, after the requirements, which may provide the store's package, or Node.js."""
        from .contract.specs import check_spec
        from .errors import UsageError
        from .runner import requirements

        if plan.requirements:
            with INTERRUPTS.raising():
                problem = requirements.install_requirements(plan.requirements)
            if problem:
                raise UsageError(problem)
        check_spec(plan.settings.store_spec, self.workdir)

    def _launch(self, plan: "_Plan", given: "_Given") -> None:
        """The pytest session of the run: the suite's scenarios, with only the plugins it uses, in the
        runner and its workers (other pytest plugins the environment has, and their start-up time, stay
        out of the scenarios)."""
        import pytest

        from .plugin import suite_directory
        from .reports import github
        from .reports.results import Status
        from .runner.run import SuiteRun

        INTERRUPTS.check()
        self.run = SuiteRun(plan.settings, listing=self.listing, phrase=self.phrase, secrets=self.credentials,
                            source_root=github.workspace_dir(self.environ), owns_process=True,
                            run_timeout=plan.run_timeout, baseline=plan.baseline)
        suite = suite_directory()
        os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
        plugins = [arg for name in PYTEST_PLUGINS for arg in ("-p", name)]
        values = given.values
        selection = [*(["-k", values["keyword"]] if values["keyword"] else []),
                     *(["-x"] if values["exitfirst"] else [])]
        output = ["-p", "no:terminal"] if self.listing else ["-v", "--tb=short"]   # a listing is printed at the end
        pytest.main([str(suite), "-c", str(suite / "pytest.ini"), "--rootdir", str(suite), *plugins, *output,
                     *selection, *given.after], plugins=[self.run])
        if not self.run.configured:   # pytest refused the arguments before the run began
            from_inputs = given.in_action and given.pytest_from_inputs
            named = "the pytest-args input" if from_inputs else "the arguments after --"
            self.run.stop(Status.USAGE_ERROR, f"pytest did not accept {named} ({shlex.join(given.after)}): "
                                              f"{self.run.rejected or 'see its message above'}")

    def finish(self) -> int:
        """Write what is left to write, hand the files over, publish on GitHub, and say the status:
        an error on stderr, a listing on stdout."""
        from .reports import github, renderings, files as reports
        from .redaction import Redactor
        from .reports.results import ExitCode, RunSummary, Status
        from .runner.verdict import RunFacts, decide

        INTERRUPTS.hold()
        if self.run is not None:
            self.run.conclude()
            summary, self.facts = self.run.summary, self.run.facts
        else:
            redact = self.redactor.text if self.redactor else (lambda text: text)
            summary = RunSummary(store=self.store)
            stopped = (self.stopped[0], redact(self.stopped[1])) if self.stopped else None
            self.facts = RunFacts(summary, 0, started=False, stopped=stopped,
                                  interrupted_by=INTERRUPTS.received)
            decide(summary, self.facts, self.phrase)
            if self.paths is not None:   # what cannot be written is left out: the error says why the run stopped
                reports.write_all(summary, self.paths, self.redactor or Redactor(), github.workspace_dir(self.environ))
        if self.paths is not None:
            written = [Path(p) for p in reports.written_reports(self.paths).values()]
            hand_over([*self.created, *written], self.workdir)
        self.summary = summary
        listed = self.listing and summary.status is Status.NOT_RUN and bool(summary.results)
        if summary.status not in (Status.PASSED, Status.FAILED) and not listed:
            print(f"memory-regression: {summary.status}: {summary.message}", file=sys.stderr, flush=True)
        if self.listing and (listed or summary.fixes) and self.values is not None:
            from .runner.project_table import render
            from .options import OPTIONS
            kept = render(self.values, OPTIONS, summary.fixes)   # what to keep in pyproject.toml, fixes applied
            fixed = ", with the fixes above," if summary.fixes else ""
            try:
                print((renderings.render_listing(summary) + "\n\n" if listed else "")
                      + f"To keep these options{fixed} paste this into pyproject.toml:\n\n{kept}", flush=True)
            except BrokenPipeError:   # piped into head: the rest is not wanted, and not an error
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        if listed:
            return 0
        if summary.status is Status.FAILED and not self.fail_on_failure:   # a run cut off is no verdict
            return int(ExitCode.PASSED)
        return int(summary.exit_code)

    def written_baseline(self) -> list[str]:
        """Write --write-baseline's file from a run that judged the store; what could not be written,
        with why (nothing written for a run that judged nothing, which says so)."""
        from .reports.baseline import baseline_json
        from .reports.files import write_atomically
        from .reports.results import Status

        if self.write_baseline is None or self.summary is None:
            return []
        given, path = self.write_baseline
        if self.summary.status not in (Status.PASSED, Status.FAILED):
            print(f"memory-regression: --write-baseline {given!r}: not written, as the run judged nothing "
                  f"({self.summary.status})", file=sys.stderr, flush=True)
            return []
        try:
            write_atomically(path, json.dumps(baseline_json(self.summary.to_json()), indent=2, ensure_ascii=False)
                             + "\n")
        except OSError as exc:
            return [f"{given} (--write-baseline): {exc.strerror or exc}"]
        hand_over([path], self.workdir)
        print(f"baseline: {path}", flush=True)
        return []

    def unwritten(self, files: list[str]) -> int:
        """GitHub's files could not be written after the reports were: the reports are written again
        to say so (status "report error"), and that is the exit status."""
        from .reports import github, files as reports
        from .redaction import Redactor
        from .runner.verdict import decide

        if not self.facts.unwritten:
            self.facts = replace(self.facts, unwritten=tuple(files))
            decide(self.summary, self.facts, self.phrase)
            reports.write_all(self.summary, self.paths, self.redactor or Redactor(), github.workspace_dir(self.environ))
        print(f"memory-regression: {self.summary.status}: {self.summary.message}", file=sys.stderr, flush=True)
        return int(self.summary.exit_code)


def main(argv: list[str] | None = None, environ: Mapping[str, str] | None = None) -> int:
    if argv is None:   # the command line of this process: it may start again in UTF-8 mode
        utf8_mode.ensure()
    INTERRUPTS.install()
    runner = Runner(list(sys.argv[1:] if argv is None else argv), os.environ if environ is None else environ)
    from .reports import github
    published = github.is_github_actions(runner.environ)
    unpublished: list[str] = []
    with contextlib.ExitStack() as stack:   # on GitHub, the stop-commands window: whatever is printed in it is text
        try:
            code = runner.start(stack)
            if code is not None:
                return code
        except KeyboardInterrupt:
            pass
        code = runner.finish()
        unwritten = runner.written_baseline()
        published = published and runner.paths is not None
        if published:
            unpublished = github.publish(runner.summary, runner.paths, runner.environ,
                                         github.workspace_dir(runner.environ))
        if unwritten or unpublished:   # a file the user asked for is missing: no verdict of the step may rest on it
            code = runner.unwritten(unwritten + unpublished)
    if published:   # after the window, the annotations alone, each escaped
        github.announce(runner.summary, github.workspace_dir(runner.environ), unpublished)
    INTERRUPTS.ignore()
    return code
