"""The runner: ``memory-regression --store SPEC [options] [-k EXPR] [-- pytest args]``.

It runs the suite with pytest in this process, then exits with the status the plugin wrote into
summary.json: 0 all passed, 1 some failed, 2 usage or configuration error, 3 Redis could not be
started or reached, 130 interrupted. Everything else lives in the plugin.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pytest

from .reports import EXIT_USAGE, RunSummary, write_error_junit, write_summaries
from .settings import OPTIONS


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
        epilog="Other arguments (-k EXPR, -x, and everything after --) go to pytest. Exit status: "
               "0 passed, 1 failed, 2 usage error, 3 Redis unavailable, 130 interrupted.")
    parser.add_argument("-h", "--help", action="store_true", help="show this help and exit")
    for option in OPTIONS:
        if option.is_switch:
            parser.add_argument(option.flag, action="store_true", help=option.help)
        else:
            parser.add_argument(option.flag, default=option.default, metavar=option.metavar,
                                help=f"{option.help} (default: {option.default})"
                                if option.default is not None else option.help)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    ours, _rest = _parser().parse_known_args(args[:args.index("--")] if "--" in args else args)
    if ours.help:
        _parser().print_help()
        return 0
    if "--" in args:
        args.remove("--")
    if ours.store is None:
        args += ["--store", ""]  # so the plugin runs, and reports the missing store like any usage error
    report_dir = Path.cwd() / ours.report_dir
    summary_json = report_dir / "summary.json"
    summary_json.unlink(missing_ok=True)
    suite = suite_directory()
    pytest_status = pytest.main([str(suite), "-c", str(suite / "pytest.ini"), "--rootdir", str(suite),
                                 "-v", "--tb=short", *args])
    if summary_json.is_file():
        return int(json.loads(summary_json.read_text(encoding="utf-8"))["exit_code"])
    # pytest stopped before the plugin could start (an argument pytest does not know, say)
    summary = RunSummary(status="usage error", exit_code=EXIT_USAGE, store=ours.store,
                         message=f"pytest rejected the arguments (its exit status {int(pytest_status)}); "
                                 "see the message above")
    write_summaries(summary, report_dir)
    write_error_junit(summary, report_dir)
    return EXIT_USAGE
