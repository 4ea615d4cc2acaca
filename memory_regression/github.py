"""GitHub Actions glue: inputs in, outputs, job summary and annotations out.

A Docker container action receives each input as ``INPUT_<NAME>``, uppercased with hyphens kept
(``INPUT_WINDOW-SIZES``), which a shell cannot read; this module turns them into the runner's
flags (flags given on the command line win). After the run it writes the outputs to
``$GITHUB_OUTPUT``, appends summary.md to ``$GITHUB_STEP_SUMMARY`` and prints ``::error``
annotations, at most 10, escaped as the runner requires.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Mapping

MAX_ANNOTATIONS = 10          # GitHub shows 10 errors per step and drops the rest
STEP_SUMMARY_LIMIT = 1024 * 1024


def is_github_actions(environ: Mapping[str, str]) -> bool:
    return environ.get("GITHUB_ACTIONS") == "true"


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
            args += [flag, value]
    return args, shlex.split(input_value(environ, "pytest-args"))


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(message: str, title: str, file: str | None = None, line: int | None = None) -> str:
    props = [f"file={escape_property(file)}"] if file else []
    if file and line:
        props.append(f"line={line}")
    props.append(f"title={escape_property(title)}")
    return f"::error {','.join(props)}::{escape_data(message)}"


def annotations(summary: dict, workspace: Path) -> list[str]:
    """One ``::error`` per failing scenario (at most 10), or one for a run that did not start."""
    store_file = summary.get("store_file")
    relative = None
    if store_file:
        try:
            relative = str(Path(store_file).resolve().relative_to(workspace.resolve()))
        except ValueError:
            relative = None
    line = summary.get("store_line")
    if summary.get("exit_code") in (2, 3):  # the run stopped before judging any scenario
        return [annotation(summary.get("message") or summary["status"], f"memory regression: {summary['status']}",
                           relative, line)]
    failures = summary.get("failures", [])
    lines = [annotation(f"{f['message']}\n{f['details']}".strip(), f"memory regression: {f['nodeid']}",
                        relative, line) for f in failures[:MAX_ANNOTATIONS]]
    if len(failures) > MAX_ANNOTATIONS:
        lines.append(f"::notice title=memory regression::{len(failures) - MAX_ANNOTATIONS} more failures: "
                     "see the job summary and the HTML report")
    return lines


def _workspace_relative(path: str | None, workspace: Path) -> str:
    if not path:
        return ""
    try:
        return str(Path(path).resolve().relative_to(workspace.resolve()))
    except ValueError:
        return str(path)


def outputs(summary: dict, workspace: Path) -> dict[str, str]:
    totals = summary.get("totals", {})
    files = summary.get("report_files", {})
    values = {name: str(totals.get(name, 0)) for name in ("total", "passed", "failed", "skipped", "errors")}
    values["conformance-level"] = summary.get("conformance_level", "none")
    values["junit-path"] = _workspace_relative(files.get("junit"), workspace)
    values["html-path"] = _workspace_relative(files.get("html"), workspace)
    return values


def publish(summary: dict, summary_md: Path, environ: Mapping[str, str], workspace: Path) -> None:
    """Write outputs and the job summary, and print the annotations."""
    output_file = environ.get("GITHUB_OUTPUT")
    if output_file:
        with open(output_file, "a", encoding="utf-8") as handle:
            for name, value in outputs(summary, workspace).items():
                handle.write(f"{name}={value}\n")
    summary_file = environ.get("GITHUB_STEP_SUMMARY")
    if summary_file and summary_md.is_file():
        text = summary_md.read_text(encoding="utf-8")
        if len(text.encode()) > STEP_SUMMARY_LIMIT:  # summary.md is cut before this; a guard all the same
            text = text.encode()[:STEP_SUMMARY_LIMIT - 200].decode(errors="ignore") + "\n\n_(cut at 1 MiB)_\n"
        with open(summary_file, "a", encoding="utf-8") as handle:
            handle.write(text)
    for line in annotations(summary, workspace):
        print(line, flush=True)


def workspace_dir(environ: Mapping[str, str]) -> Path:
    return Path(environ.get("GITHUB_WORKSPACE") or os.getcwd())
