"""GitHub Actions glue: inputs in; outputs, job summary and annotations out.

A Docker container action receives each input as ``INPUT_<NAME>``, uppercased with hyphens kept
(``INPUT_WINDOW-SIZES``), which a shell cannot read; this module turns them into the runner's
flags (flags given on the command line win). While the suite runs, GitHub is told to ignore
workflow commands (``::stop-commands::``), so nothing a store prints can pose as one; credentials
are masked in the log. After the run it writes the outputs to ``$GITHUB_OUTPUT`` (in the
multi-line form, so no value can add a line), appends summary.md to ``$GITHUB_STEP_SUMMARY`` and
prints ``::error`` annotations for failures and ``::warning`` ones for warnings, at most 10 of each,
escaped as the runner requires.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shlex
from pathlib import Path
from typing import Callable, Iterator, Mapping

from .files import relative_path, ReportPaths
from .results import RunSummary, Status

MAX_ANNOTATIONS = 10          # GitHub shows 10 errors (and 10 warnings) per step and drops the rest
STEP_SUMMARY_LIMIT = 1024 * 1024


def is_github_actions(environ: Mapping[str, str]) -> bool:
    return environ.get("GITHUB_ACTIONS") == "true"


def runs_as_action(environ: Mapping[str, str]) -> bool:
    """In a step that uses the action, whose inputs GitHub passes as ``INPUT_*`` variables (not a
    ``run:`` step that calls the runner with flags)."""
    return is_github_actions(environ) and any(name.startswith("INPUT_") for name in environ)


def input_namer(flags: list[str]) -> Callable[[str], str]:
    """A function that rewrites a message so that each of ``flags`` reads as the action input it
    came from: ``--window-sizes 'x'`` becomes ``input window-sizes 'x'``."""
    if not flags:
        return lambda text: text
    pattern = re.compile(r"(?<![\w-])(" + "|".join(re.escape(flag) for flag in flags) + r")(?![\w-])")
    return lambda text: pattern.sub(lambda found: f"input {found.group(1).lstrip('-')}", text)


def input_value(environ: Mapping[str, str], name: str) -> str:
    """An input by its action.yml name (``window-sizes``); empty when not given."""
    return environ.get(f"INPUT_{name.upper().replace(' ', '_')}", "").strip()


def inputs_as_args(environ: Mapping[str, str], flags: list[tuple[str, bool]],
                   given: list[str]) -> tuple[list[str], list[str]]:
    """Runner flags from ``INPUT_*`` variables for every flag not already in ``given``, and the
    ``pytest-args`` input split as a shell would.

    ``flags`` holds (flag, is_switch); a switch input is on when it reads ``true``.
    """
    present = {arg.split("=", 1)[0] for arg in given if arg.startswith("--")}
    args: list[str] = []
    for flag, is_switch in flags:
        value = input_value(environ, flag.lstrip("-"))
        if not value or flag in present:
            continue
        if is_switch:
            if value.lower() == "true":
                args.append(flag)
        else:
            args.append(f"{flag}={value}")   # a value may start with '-' (-concurrency, -r file)
    return args, shlex.split(input_value(environ, "pytest-args"))


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(message: str, title: str, file: str | None = None, line: object = None,
               level: str = "error") -> str:
    """A workflow command (``::error``, ``::warning``) whose message and properties are all escaped, and whose
    line is given only when it is what it claims, a positive whole number (a store program's greeting says it)."""
    props = [f"file={escape_property(file)}"] if file else []
    if file and type(line) is int and line > 0:
        props.append(f"line={line}")
    props.append(f"title={escape_property(title)}")
    return f"::{level} {','.join(props)}::{escape_data(message)}"


def mask(secret: str) -> str:
    """The command that makes GitHub hide ``secret`` wherever the log shows it."""
    return f"::add-mask::{escape_data(secret)}"


@contextlib.contextmanager
def commands_stopped() -> Iterator[None]:
    """While inside, GitHub reads no workflow command from the log: whatever a store prints stays text."""
    token = secrets.token_hex(16)
    print(f"::stop-commands::{token}", flush=True)
    try:
        yield
    finally:
        print(f"::{token}::", flush=True)


def annotations(summary: RunSummary, workspace: Path, unpublished: bool = False) -> list[str]:
    """One ``::error`` for a run that could not judge the store (unless ``unpublished``: GitHub's own files
    could not be written, which their errors say), one per failing scenario (at most 10 in all), and a
    notice with the count of those left out; then one ``::warning`` per warning (at most 10), and a notice
    likewise."""
    relative = relative_path(summary.store_file, workspace)
    lines = []
    if summary.status not in (Status.PASSED, Status.FAILED) and not unpublished:
        lines.append(annotation(summary.message or str(summary.status), f"memory regression: {summary.status}",
                                relative, summary.store_line))
    differing = {d["case"]: d["message"] for d in summary.engine_differences()} if summary.engines else {}
    failures = sorted(summary.failures(), key=lambda f: f.case not in differing)   # the differences first
    room = MAX_ANNOTATIONS - len(lines)
    lines += [annotation(f"{f.message}\n{f.details}".strip(), f"memory regression: {f.nodeid}"
                         + (f" ({differing[f.case]})" if f.case in differing else ""),
                         relative, summary.store_line) for f in failures[:room]]
    if len(failures) > room:
        lines.append(f"::notice title=memory regression::{len(failures) - room} more failures: "
                     "see the job summary and the HTML report")
    warnings = summary.warnings()
    lines += [annotation(w["text"], f"memory regression warning ({w['guarantee']}): {w['nodeid']}", relative,
                         summary.store_line, level="warning") for w in warnings[:MAX_ANNOTATIONS]]
    if len(warnings) > MAX_ANNOTATIONS:
        lines.append(f"::notice title=memory regression::{len(warnings) - MAX_ANNOTATIONS} more warnings: "
                     "see the job summary and the HTML report")
    return lines


def outputs(summary: RunSummary, workspace: Path) -> dict[str, str]:
    values = {name: str(count) for name, count in summary.totals().items()}
    values["warnings"] = str(len(summary.warnings()))
    values["conformance-level"] = summary.conformance_level
    values["engine-differences"] = str(len(summary.engine_differences()))
    # with --baseline, what the comparison counts; empty without one, or with one of another store or server
    compared = summary.comparison if summary.comparison and summary.comparison["compared"] else None
    values["regressions"] = str(compared["regressions"]) if compared else ""
    values["new-failures"] = str(len(compared["newly_failing"])) if compared else ""
    values["fixed"] = str(len(compared["fixed"])) if compared else ""
    values["junit-path"] = relative_path(summary.report_files.get("junit"), workspace) or ""
    values["html-path"] = relative_path(summary.report_files.get("html"), workspace) or ""
    return values


def write_outputs(values: Mapping[str, str], path: str) -> None:
    """Append outputs in the multi-line form (``name<<DELIMITER``), which no value can break out of."""
    with open(path, "a", encoding="utf-8") as handle:
        for name, value in values.items():
            delimiter = f"memory_regression_{secrets.token_hex(8)}"
            handle.write(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")


def publish(summary: RunSummary, paths: ReportPaths, environ: Mapping[str, str], workspace: Path) -> list[str]:
    """Write the outputs and the job summary; returns the files of GitHub's that could not be written (a
    full disk), each with why, which :func:`announce` says too."""
    failed = []
    try:
        if environ.get("GITHUB_OUTPUT"):
            write_outputs(outputs(summary, workspace), environ["GITHUB_OUTPUT"])
    except OSError as exc:
        failed.append(f"the step's outputs (GITHUB_OUTPUT): {exc.strerror or exc}")
    summary_file = environ.get("GITHUB_STEP_SUMMARY")
    try:
        if summary_file and paths.summary_md.is_file():
            text = paths.summary_md.read_text(encoding="utf-8")
            if len(text.encode()) > STEP_SUMMARY_LIMIT:  # summary.md is cut before this; a guard all the same
                text = text.encode()[:STEP_SUMMARY_LIMIT - 200].decode(errors="ignore") + "\n\n_(cut at 1 MiB)_\n"
            with open(summary_file, "a", encoding="utf-8") as handle:
                handle.write(text)
    except OSError as exc:
        failed.append(f"the job summary (GITHUB_STEP_SUMMARY): {exc.strerror or exc}")
    return failed


def announce(summary: RunSummary, workspace: Path, failed: list[str]) -> None:
    """Print the annotations, and one error for each of GitHub's files that could not be written: the only
    lines of the run printed after the stop-commands window, each one command whose every value is escaped."""
    for line in annotations(summary, workspace, bool(failed)):
        print(line, flush=True)
    for text in failed:
        print(annotation(f"could not write {text}", "memory regression: report error"), flush=True)


def workspace_dir(environ: Mapping[str, str]) -> Path:
    return Path(environ.get("GITHUB_WORKSPACE") or os.getcwd())
