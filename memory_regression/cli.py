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
import difflib
import json
import os
import shlex
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Mapping, NoReturn

from .runner import utf8_mode
from .runner.interrupts import INTERRUPTS

PYTEST_PLUGINS = ("xdist", "metadata", "html")   # pytest-xdist, and pytest-html with what it needs


class ArgumentsRejected(Exception):
    """The command line cannot be read; the message says what to fix (a usage error, exit 2)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise ArgumentsRejected(message)


def _parser(options: Any, contract: str) -> argparse.ArgumentParser:
    parser = _Parser(
        prog="memory-regression", add_help=False, allow_abbrev=False,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        usage="memory-regression --store SPEC [options] [-k EXPR] [-x] [-- PYTEST ARGS]",
        description="Run the memory-regression suite against your store and a real Redis server.",
        epilog=f"The store contract:\n{contract}\n\n"
               "Everything after -- goes to pytest (for example: -- -n 0 --pdb). Inside a GitHub Action, "
               "inputs named\nlike the flags (window-sizes, pytest-args, ...) fill in the flags not given.\n"
               "Exit status: 0 passed, 1 failed (or did not finish), 2 usage error (or reports not written),\n"
               "3 Redis unavailable, 130 interrupted.")
    parser.add_argument("-h", "--help", action="store_true", help="show this help and exit")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    parser.add_argument("--list", action="store_true",
                        help="bind the store and list its capabilities, the profiles, and the scenarios "
                             "that would run or be skipped, without running any (writes no report)")
    for option in options:
        if option.is_switch:
            parser.add_argument(option.flag, dest=option.key, action="store_true", help=option.help)
        else:
            parser.add_argument(option.flag, dest=option.key, default=option.default, metavar=option.metavar,
                                help=f"{option.help} (default: {option.default})"
                                if option.default is not None else option.help)
    parser.add_argument("-k", dest="keyword", metavar="EXPR", help="run only the scenarios whose names match "
                        "EXPR (pytest -k), for example -k 'count_window or ttl'")
    parser.add_argument("-x", dest="exitfirst", action="store_true", help="stop at the first failing scenario")
    return parser


def attached_values(args: list[str], value_flags: set[str]) -> list[str]:
    """``--groups -concurrency`` as ``--groups=-concurrency``: argparse takes an argument that starts
    with a single '-' for a flag of its own, not for the value of the flag before it."""
    attached: list[str] = []
    for arg in args:
        if attached and attached[-1] in value_flags and arg.startswith("-") and not arg.startswith("--"):
            attached[-1] = f"{attached[-1]}={arg}"
        else:
            attached.append(arg)
    return attached


def rejected_arguments(rest: list[str], parser: argparse.ArgumentParser) -> str:
    """What to say about arguments the runner does not know, with the closest flag it does."""
    first = rest[0]
    if not first.startswith("-"):
        hint = f"; to name the store, give --store {first}" if ":" in first else ""
        return f"unexpected argument {first!r}: options take the form --name VALUE{hint}"
    name = first.partition("=")[0]
    flags = [flag for action in parser._actions for flag in action.option_strings]
    close = difflib.get_close_matches(name, flags, n=1)
    hint = f"; did you mean {close[0]}?" if close else ""
    return (f"unknown option {name}{hint} (see memory-regression --help; pytest's own options go after --, "
            "for example: -- -n 0)")


def keyword_expressions(values: Mapping[str, Any], pytest_args: list[str]) -> list[str]:
    """The -k expressions of a run: the runner's own, and any among the pytest arguments."""
    found = [values["keyword"]] if values.get("keyword") else []
    for index, arg in enumerate(pytest_args):
        if arg == "-k" and index + 1 < len(pytest_args):
            found.append(pytest_args[index + 1])
        elif arg.startswith("-k") and len(arg) > 2:
            found.append(arg[2:])
    return found


# pytest's options that write a file or a directory where they are told (the runner gives junit.xml and
# report.html their places itself), each with what it writes when given no value
WRITING_OPTIONS = {"--basetemp": None, "--debug": "pytestdebug.log", "--junit-xml": None, "--junitxml": None,
                   "--html": None, "--report-log": None, "--log-file": None}


def writes_outside(pytest_args: list[str], report_dir: Path, workdir: Path) -> str | None:
    """What is wrong with pytest arguments that would write outside the report directory (pytest
    empties a --basetemp it is given, whatever it holds), said before the run starts; None if none do."""
    for index, arg in enumerate(pytest_args):
        flag, equals, value = arg.partition("=")
        if flag not in WRITING_OPTIONS:
            continue
        if not equals:
            following = pytest_args[index + 1] if index + 1 < len(pytest_args) else None
            takes_next = WRITING_OPTIONS[flag] is None or (following is not None and not following.startswith("-"))
            value = following if takes_next and following is not None else WRITING_OPTIONS[flag]
        if value is None:
            continue   # pytest says what is missing
        target = (workdir / value).resolve()
        if target != report_dir and report_dir not in target.parents:
            return (f"pytest's {flag} {value!r} would write outside the report directory {report_dir}"
                    + (" (pytest empties the directory a --basetemp names)" if flag == "--basetemp" else "")
                    + ": give a path under the report directory, or leave it out")
    return None


def keyword_problem(expression: str) -> str | None:
    """What is wrong with a -k expression pytest cannot read, said before the run starts: the workers
    read it, and a worker that cannot stops the run with an internal error. None when pytest reads it."""
    try:
        from _pytest.mark.expression import Expression
    except ImportError:   # another pytest: it will say so itself
        return None
    try:
        Expression.compile(expression)
    except SyntaxError as exc:
        hint = (" and no '=': a window is chosen with --window-sizes (--window-sizes 5 runs N=5 only)"
                if "=" in expression else "")
        return (f"-k {expression!r}: pytest cannot read it ({exc.msg}, at column {exc.offset}); -k takes words of "
                f"the scenarios' ids joined with and, or, not and parentheses{hint}")
    return None


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
        from .reports import github, files as reports
        from .runner import project_table
        from .runner import requirements as requirements_module
        from .reports.baseline import DEFAULT_FAIL_ON, check_fail_on
        from .reports.baseline_file import DEADLINE_S, load_baseline
        from .errors import UsageError
        from .contract.rules import contract_summary
        from .runner.credentials import withdraw
        from .contract.specs import check_spec
        from .redaction import Redactor, url_secrets
        from .reports.results import Status
        from .options import OPTIONS
        from .settings import Settings, parse_timeout

        args = self.argv
        before, after = (args[:args.index("--")], args[args.index("--") + 1:]) if "--" in args else (args, [])
        parser = _parser(OPTIONS, contract_summary())
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
        given = {arg.partition("=")[0] for arg in before}
        values.update({key: value for key, value in kept.items() if f"--{key.replace('_', '-')}" not in given})
        self.values = values
        if not args and not in_action and not kept and not problem:
            print(parser.format_usage() + "memory-regression: error: give the store to test, for example "
                  "--store app/memory.py:ChatMemory, or keep it in pyproject.toml's [tool.memory-regression] "
                  "table (see memory-regression --help)", file=sys.stderr)
            return int(Status.USAGE_ERROR.exit_code)
        if values.get("help"):
            parser.print_help()
            return 0
        if values.get("version"):
            from . import __version__
            print(f"memory-regression {__version__}")
            return 0
        self.listing = values["list"]
        self.paths = None if self.listing else reports.ReportPaths(self.workdir / values["report_dir"])
        INTERRUPTS.check()   # from here on, an interrupt has reports to go to
        self.store = values["store"]
        self.credentials = withdraw()   # before any process of the run starts: none inherits them
        urls = [*str(values["redis"]).split(","), str(values["service_url"] or "")]
        self.redactor = Redactor([*(secret for entry in urls for secret in url_secrets(entry)), *self.credentials])
        if github.is_github_actions(self.environ):   # a run: step's log is as public as the action's
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
        try:
            if not self.listing:
                self.paths = reports.ReportPaths(self.workdir / values["report_dir"])
                self.created = reports.prepare_report_dir(self.paths, values["report_dir"])
            problem = problem or next(filter(None, map(keyword_problem, keyword_expressions(values, after))), None)
            if not problem and self.paths is not None:
                problem = writes_outside(after, self.paths.directory.resolve(), self.workdir)
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
            requirements = (requirements_module.pip_arguments(values["requirements"], self.workdir)
                            if values["requirements"] else None)
        except UsageError as exc:
            self.stopped = (Status.USAGE_ERROR, str(exc))
            return None
        if requirements:
            with INTERRUPTS.raising():
                problem = requirements_module.install_requirements(requirements)
            if problem:
                self.stopped = (Status.USAGE_ERROR, problem)
                return None
        try:   # a typo is said before Redis and the workers start; after the requirements, which may provide
            check_spec(settings.store_spec, self.workdir)   # the store's package, or Node.js
        except UsageError as exc:
            self.stopped = (Status.USAGE_ERROR, str(exc))
            return None

        import pytest

        from .plugin import suite_directory
        from .runner.run import SuiteRun

        INTERRUPTS.check()
        self.run = SuiteRun(settings, listing=self.listing, phrase=self.phrase, secrets=self.credentials,
                            source_root=github.workspace_dir(self.environ), owns_process=True,
                            run_timeout=run_timeout, baseline=baseline)
        suite = suite_directory()
        # only the plugins the suite uses, in the runner and its workers: other pytest plugins the
        # environment has (and their start-up time) stay out of the scenarios
        os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
        plugins = [arg for name in PYTEST_PLUGINS for arg in ("-p", name)]
        selection = [*(["-k", values["keyword"]] if values["keyword"] else []),
                     *(["-x"] if values["exitfirst"] else [])]
        output = ["-p", "no:terminal"] if self.listing else ["-v", "--tb=short"]   # a listing is printed at the end
        pytest.main([str(suite), "-c", str(suite / "pytest.ini"), "--rootdir", str(suite), *plugins, *output,
                     *selection, *after], plugins=[self.run])
        if not self.run.configured:   # pytest refused the arguments before the run began
            given = "the pytest-args input" if in_action and pytest_from_inputs else "the arguments after --"
            self.run.stop(Status.USAGE_ERROR, f"pytest did not accept {given} ({shlex.join(after)}): "
                                              f"{self.run.rejected or 'see its message above'}")
        return None

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
