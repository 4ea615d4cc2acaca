"""Every report file of a run (the text renderings of its summary are :mod:`.renderings`').

pytest writes junit.xml and pytest-html writes report.html for a run that got going; this module
names all four files, clears those of an earlier run, writes summary.json and summary.md always,
and a junit.xml of its own when no scenario ran (a usage or Redis error), so CI always has
something to publish. Whatever a store's text holds, the files stay well-formed: characters XML
cannot carry are escaped, Markdown gets no raw control characters, and credentials are redacted.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from dataclasses import dataclass
from xml.etree import ElementTree
from pathlib import Path
from typing import Callable

from ..errors import UsageError
from ..redaction import Redactor
from .renderings import render_comment, render_markdown
from .results import CAPTURE_LIMIT, Outcome, RunSummary, cap

# the permission bits a new file here goes without (the umask), read once, at import, as only setting it reads it
_UMASK = os.umask(0o022)
os.umask(_UMASK)

MAX_KEYS_WITHOUT_TTL = 200
# characters XML 1.0 cannot hold
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


@dataclass(frozen=True)
class ReportPaths:
    directory: Path

    @property
    def junit(self) -> Path:
        return self.directory / "junit.xml"

    @property
    def html(self) -> Path:
        return self.directory / "report.html"

    @property
    def summary_md(self) -> Path:
        return self.directory / "summary.md"

    @property
    def summary_json(self) -> Path:
        return self.directory / "summary.json"

    @property
    def comment_md(self) -> Path:
        """A pull request's comment on the run, written only with --baseline."""
        return self.directory / "comment.md"

    def all(self) -> tuple[Path, ...]:
        return (self.junit, self.html, self.summary_md, self.summary_json, self.comment_md)


def prepare_report_dir(paths: ReportPaths, shown: str) -> list[Path]:
    """Create the report directory (returning the directories made), check it can be written, and
    remove an earlier run's reports, so that a run stopping before pytest leaves no stale one."""
    created: list[Path] = []
    directory = paths.directory
    try:
        for parent in reversed([directory, *directory.parents]):
            if not parent.exists():
                try:
                    parent.mkdir()
                    created.append(parent)
                except FileExistsError:
                    pass   # another run sharing the directory made it meanwhile
        if not directory.is_dir():
            raise UsageError(f"--report-dir {shown!r} is not a directory: give a directory for the reports")
        descriptor, probe = tempfile.mkstemp(dir=directory, prefix=".memory-regression-write-check-")
        os.close(descriptor)   # a name no other account can foresee, made with O_EXCL: nothing to follow
        os.unlink(probe)
    except OSError as exc:
        raise UsageError(f"--report-dir {shown!r} cannot be written: {exc.strerror or exc}; give a "
                         "directory this user can write to") from None
    clear_old_reports(paths)
    return created


def clear_old_reports(paths: ReportPaths) -> None:
    """Remove the files of an earlier run (symlinks included, never followed), so that nothing stale
    sits beside this run's reports."""
    for path in paths.all():
        try:
            if path.is_symlink() or path.is_file():
                path.unlink()
        except OSError:
            pass


def written_reports(paths: ReportPaths) -> dict[str, str]:
    names = {"junit": paths.junit, "html": paths.html, "summary_md": paths.summary_md,
             "summary_json": paths.summary_json, "comment_md": paths.comment_md}
    return {name: str(path) for name, path in names.items() if path.is_file() and not path.is_symlink()}


def xml_safe(text: str) -> str:
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def write_atomically(path: Path, text: str) -> None:
    """Write beside ``path`` and rename over it: a reader sees the old file or the new one, and a
    symlink at ``path`` is replaced, never followed. The file beside it is made by ``mkstemp`` (a name
    no other account can foresee, created with O_EXCL), so that in a directory others may write no one
    can plant a link there for the run to write through; it gets the mode a new file gets (umask)."""
    descriptor, partial = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".partial")
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            os.fchmod(file.fileno(), 0o666 & ~_UMASK)
            file.write(text)
        os.replace(partial, path)
    finally:
        Path(partial).unlink(missing_ok=True)


def error_junit(summary: RunSummary) -> str:
    """junit.xml for a run that judged no scenario: one errored case saying why."""
    from junitparser import Error, JUnitXml, TestCase, TestSuite

    message = xml_safe(summary.message or summary.status.value)
    case = TestCase("configuration", classname="memory_regression")
    error = Error(message=message.splitlines()[0] if message else "", type_=summary.status.value)
    error.text = message
    case.result = [error]
    suite = TestSuite("memory-regression")
    suite.add_testcase(case)
    suite.update_statistics()
    xml = JUnitXml()
    xml.add_testsuite(suite)
    return _xml_text(xml._elem)


def _xml_text(root: ElementTree.Element) -> str:
    return "<?xml version='1.0' encoding='utf-8'?>\n" + ElementTree.tostring(root, encoding="unicode")


def relative_path(path: str | None, root: Path) -> str | None:
    """``path`` relative to ``root``, or None when it lies outside (or there is none)."""
    if not path:
        return None
    try:
        return Path(path).resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return None


def suite_name(summary: RunSummary) -> str:
    """The junit test suite's name: the matrix point the run covered (window sizes and policy,
    profiles), so that the junit files of a matrix of runs, merged, still say where each case ran."""
    if not summary.window_sizes:   # stopped before the settings were read
        return "memory-regression"
    sizes = ",".join(map(str, summary.window_sizes))
    profiles = ",".join(profile["name"] for profile in summary.profiles)
    return f"memory-regression (window sizes {sizes}; window policy {summary.window_policy}; profiles {profiles})"


def place_junit_cases(summary: RunSummary, text: str, source_root: Path | None) -> str:
    """Name junit.xml's suite after the matrix point, and point every test case at the store's
    definition (``file`` relative to ``source_root``, ``line``): where the action's annotations
    point, so that reporter actions place theirs in the user's code, not in the suite's files. A
    scenario whose call judged nothing (the suite's own code raised) is an error there, not a
    failure. Takes the text pytest wrote and returns the new one."""
    root = ElementTree.fromstring(text)
    suites = [root] if root.tag == "testsuite" else root.iter("testsuite")
    source = relative_path(summary.store_file, source_root) if source_root is not None else None
    differing = {d["case"]: d["message"] for d in summary.engine_differences()} if summary.engines else {}
    difference = {_junit_key(r.nodeid): differing[r.case] for r in summary.results if r.case in differing}
    judged_nothing = {_junit_key(r.nodeid) for r in summary.results if r.outcome is Outcome.ERROR}
    for suite in suites:
        suite.set("name", suite_name(summary))
        for case in suite.iter("testcase"):
            key = (case.get("classname", "").rsplit(".", 1)[-1], case.get("name"))
            failure = case.find("failure")
            if failure is not None and key in judged_nothing:
                failure.tag = "error"   # the suite's own code failed in the call: an error, as pytest's setup errors
                for count, change in (("failures", -1), ("errors", 1)):
                    suite.set(count, str(int(suite.get(count, "0")) + change))
            if source:
                case.set("file", source)
                if summary.store_line:
                    case.set("line", str(summary.store_line))
            message = difference.get(key)
            if message:
                properties = case.find("properties")
                if properties is None:
                    properties = ElementTree.SubElement(case, "properties")
                ElementTree.SubElement(properties, "property", name="engine_difference", value=message)
    return _xml_text(root)


def _junit_key(nodeid: str) -> tuple[str, str]:
    """How junit.xml names a scenario: its module (the last part of ``classname``) and its name."""
    path, _, name = nodeid.partition("::")
    return path.rsplit("/", 1)[-1].removesuffix(".py"), name


def write_all(summary: RunSummary, paths: ReportPaths, redactor: Redactor, source_root: Path | None = None,
              pytest_junit: Path | None = None) -> list[str]:
    """summary.json and summary.md, and junit.xml: the one pytest wrote at ``pytest_junit`` (in the
    run's own directory) with its cases placed at the store's definition under ``source_root``, or
    one saying why no scenario was judged. Every file is replaced in one step, so that a run sharing
    the report directory never reads or leaves a half-written one. The paths written go into the
    summary first. Each file is tried whatever became of the others; returns those that could not
    be written, each with why (a full disk: "summary.json: File too large")."""
    unwritten: list[str] = []

    def attempt(path: Path, render: Callable[[], str]) -> None:
        try:
            write_atomically(path, render())
        except OSError as exc:
            unwritten.append(f"{path.name}: {exc.strerror or exc}")
        except ElementTree.ParseError as exc:   # pytest's junit.xml, cut short by the same cause
            unwritten.append(f"{path.name}: pytest's junit.xml could not be read ({exc})")

    try:
        paths.directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return [f"{paths.directory}: {exc.strerror or exc}"]
    if not summary.results:
        attempt(paths.junit, lambda: error_junit(summary))
    elif pytest_junit is not None and pytest_junit.is_file():
        attempt(paths.junit, lambda: place_junit_cases(summary, pytest_junit.read_text(encoding="utf-8"), source_root))
    if summary.message:   # a run's message may hold the store's traceback (an import that failed)
        summary.message = cap(summary.message, CAPTURE_LIMIT, "this message")
    compared = summary.comparison is not None
    summary.report_files = {**written_reports(paths), "summary_md": str(paths.summary_md),
                            "summary_json": str(paths.summary_json),
                            **({"comment_md": str(paths.comment_md)} if compared else {})}
    attempt(paths.summary_json, lambda: redactor.text(json.dumps(summary.to_json(), indent=2, ensure_ascii=False)))
    attempt(paths.summary_md, lambda: redactor.text(render_markdown(summary)))
    if compared:
        attempt(paths.comment_md, lambda: redactor.text(render_comment(summary)))
    return unwritten


