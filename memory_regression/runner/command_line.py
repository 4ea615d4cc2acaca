"""The runner's command line: its parser, flags given their values with = or apart, the arguments it
refuses and why, and what pytest's own arguments may not do (select with a -k expression pytest
cannot read, write outside the report directory)."""

from __future__ import annotations

import argparse
import difflib
from pathlib import Path
from typing import Any, Mapping, NoReturn


class ArgumentsRejected(Exception):
    """The command line cannot be read; the message says what to fix (a usage error, exit 2)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise ArgumentsRejected(message)


def parser_of(options: Any, contract: str) -> argparse.ArgumentParser:
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
