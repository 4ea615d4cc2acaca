"""The report files made from a summary: every field of summary.json, the latency and footprint
figures wherever they are shown, and the files write_all leaves. (A real run's keys without a
TTL reach summary.json and the job summary in tests/end_to_end/test_github.py.)"""

import json
import os
import re
import stat
import xml.etree.ElementTree as ET

import pytest

from memory_regression.redaction import Redactor
from memory_regression.reports.figures import size_text
from memory_regression.reports.renderings import render_markdown, render_terminal
from memory_regression.reports.files import ReportPaths, prepare_report_dir, write_all, write_atomically
from memory_regression.reports.results import Outcome, RunSummary, ScenarioResult, Status
from tests.unit.summaries import SAMPLE_GROUPS, sample_summary


ROUND_TRIP = ScenarioResult("test_core.py::test_round_trip", "test_round_trip", "core", "", [],
                            Outcome.PASSED, duration_s=0.5)


# -- summary.json -----------------------------------------------------------------------------------

SUMMARY_JSON_FIELDS = {  # as docs/reports.md lists them
    "status", "exit_code", "message", "store", "store_file", "store_line", "capabilities", "shape", "unfilled",
    "observations", "proposals", "fixes", "conformance_level", "backend", "backend_warning", "window_sizes",
    "window_policy", "groups", "profiles", "totals", "capability_scenarios", "matrix", "results", "failures",
    "warnings", "keys_without_ttl", "leftovers", "duration_s", "report_files", "latency", "footprint"}


def result_json(nodeid, scenario, group, point, requires, outcome, message="", details="", duration_s=0.0,
                findings=()):
    return {"nodeid": nodeid, "scenario": scenario, "group": group, "point": point, "requires": requires,
            "outcome": outcome, "message": message, "details": details, "duration_s": duration_s,
            "findings": list(findings), "guarantees": [], "warnings": []}


def test_summary_json_has_every_field_with_its_value():
    data = sample_summary().to_json()
    assert set(data) == SUMMARY_JSON_FIELDS
    results = [
        result_json("test_core.py::test_round_trip", "test_round_trip", "core", "", [], "passed", duration_s=0.5),
        result_json("test_count_window.py::test_last_n[N=5]", "test_last_n", "count-window", "N=5",
                    ["count-window"], "failed", "kept 6 messages, expected 5", "expected: m2..m6\nactual: m1..m6",
                    0.25),
        result_json("test_count_window.py::test_last_n[N=20]", "test_last_n", "count-window", "N=20",
                    ["count-window"], "passed", duration_s=0.75, findings=["longest session: 43 messages"]),
        result_json("test_token_window.py::test_suffix[small-4k]", "test_suffix", "token-window", "small-4k",
                    ["token-window"], "skipped", "store lacks token-window"),
        result_json("test_hygiene.py::test_clear_no_keys", "test_clear_no_keys", "hygiene", "",
                    ["clear", "namespace"], "error", "teardown failed: ConnectionError", "Traceback: boom"),
    ]
    assert data == {
        "status": "failed", "exit_code": 1, "message": None, "store": "app/m.py:Store",
        "store_file": "/w/app/m.py", "store_line": 7,
        "capabilities": ["clear", "core", "count-window", "namespace", "ttl"], "shape": None, "unfilled": "",
        "observations": [], "proposals": [], "fixes": {}, "conformance_level": "core+ttl",
        "backend": "redis 7.2.4 (private server)",
        "backend_warning": None, "window_sizes": [5, 20],
        "window_policy": "start-on-user", "groups": list(SAMPLE_GROUPS),
        "profiles": [{"name": "small-4k", "max_tokens": 3072, "counter": "words"}],
        "totals": {"total": 5, "passed": 2, "failed": 1, "skipped": 1, "errors": 1},
        "capability_scenarios": {"core": ["test_round_trip"], "count-window": ["test_last_n"],
                                 "token-window": ["test_suffix"], "clear": ["test_clear_no_keys"],
                                 "namespace": ["test_clear_no_keys"]},
        "matrix": {"columns": ["—", "N=5", "N=20", "small-4k"], "rows": [
            {"group": "core", "scenario": "test_round_trip", "cells": {"—": "passed"}},
            {"group": "count-window", "scenario": "test_last_n", "cells": {"N=5": "failed", "N=20": "passed"}},
            {"group": "token-window", "scenario": "test_suffix", "cells": {"small-4k": "skipped"}},
            {"group": "hygiene", "scenario": "test_clear_no_keys", "cells": {"—": "error"}}]},
        "results": results,
        "failures": [results[1], results[4]], "warnings": [],
        "keys_without_ttl": ["mrs:1:messages:a:last-active (test_core.py::test_round_trip)"], "leftovers": [],
        "duration_s": 3.5, "report_files": {"junit": "/w/r/junit.xml"}, "latency": [], "footprint": [],
    }
    json.dumps(data)   # every value is plain JSON: no enum, no dataclass


def test_summary_json_of_a_run_that_judged_nothing():
    data = RunSummary(Status.USAGE_ERROR, "no store given").to_json()
    assert data == {
        "status": "usage error", "exit_code": 2, "message": "no store given", "store": None, "store_file": None,
        "store_line": None, "capabilities": [], "shape": None, "unfilled": "", "observations": [], "proposals": [],
        "fixes": {}, "conformance_level": "none", "backend": None,
        "backend_warning": None, "window_sizes": [], "window_policy": None, "groups": [], "profiles": [], "results": [],
        "keys_without_ttl": [],
        "leftovers": [], "duration_s": 0.0, "report_files": {},
        "totals": {"total": 0, "passed": 0, "failed": 0, "skipped": 0, "errors": 0},
        "capability_scenarios": {}, "matrix": {"columns": [], "rows": []}, "failures": [], "warnings": [],
        "latency": [], "footprint": []}


def test_to_json_leaves_the_summary_as_it_was():
    summary = sample_summary()
    summary.to_json()
    assert summary == sample_summary()
    assert summary.results[1].outcome is Outcome.FAILED


# -- figures: latency and footprint ----------------------------------------------------------------

def operation(p50, p95, p99, floor, budget=None):
    """A latency figure's operation, its floor a constant ``floor`` ms."""
    return {"p50_ms": p50, "p95_ms": p95, "p99_ms": p99, "floor_p50_ms": floor, "floor_p95_ms": floor,
            "floor_p99_ms": floor, "ratio_p50": round(p50 / floor, 2), "ratio_p95": round(p95 / floor, 2),
            "ratio_p99": round(p99 / floor, 2), "budget_ms": budget}


LATENCY = {"kind": "latency", "window": "N=5", "samples": 200, "content_bytes": 200, "history_messages": 5,
           "append": operation(0.2, 0.4, 0.5, 0.1, 5.0), "load": operation(0.3, 0.6, 0.9, 0.2)}
FOOTPRINT = {"kind": "footprint", "window": "N=5", "messages": 5, "keys": 1, "bytes": 1700, "bytes_per_message": 340.0,
             "content_bytes_per_message": 255.0, "overhead_ratio": 1.33, "appends_after": 50, "bytes_after": 15600,
             "growth": 9.18, "bound": 4, "bounded": False}
UNWINDOWED = {"kind": "footprint", "window": "unwindowed", "messages": 20, "keys": 2, "bytes": 7000,
              "bytes_per_message": 350.0, "content_bytes_per_message": 255.0, "overhead_ratio": 1.37}


def measured_summary(engines=()) -> RunSummary:
    """A run whose latency and footprint scenarios recorded figures (on each of ``engines``)."""
    results = []
    for engine in engines or [""]:
        tail = f"-{engine}]" if engine else "]"
        results += [
            ScenarioResult(f"test_latency.py::test_latency[N=5{tail}", "test_latency", "latency", "N=5", [],
                           Outcome.FAILED, "append p95 over budget", engine=engine, measurements=[dict(LATENCY)]),
            ScenarioResult(f"test_footprint.py::test_bounded[N=5{tail}", "test_bounded", "footprint", "N=5", [],
                           Outcome.FAILED, "9.2×", engine=engine, measurements=[dict(FOOTPRINT)]),
            ScenarioResult(f"test_footprint.py::test_bounded[{engine}]" if engine
                           else "test_footprint.py::test_bounded", "test_bounded", "footprint", "", [],
                           Outcome.PASSED, engine=engine, measurements=[dict(UNWINDOWED)])]
    return RunSummary(Status.FAILED, results=results, window_sizes=[5],
                      engines=[{"name": e, "title": e, "description": e} for e in engines])


def without_kind(figure: dict) -> dict:
    return {key: value for key, value in figure.items() if key != "kind"}


def test_summary_json_carries_the_figures_at_the_top_and_not_in_the_results():
    data = measured_summary().to_json()
    assert data["latency"] == [{"nodeid": "test_latency.py::test_latency[N=5]", "scenario": "test_latency",
                                "point": "N=5", "outcome": "failed", **without_kind(LATENCY)}]
    assert data["footprint"] == [
        {"nodeid": "test_footprint.py::test_bounded[N=5]", "scenario": "test_bounded", "point": "N=5",
         "outcome": "failed", **without_kind(FOOTPRINT)},
        {"nodeid": "test_footprint.py::test_bounded", "scenario": "test_bounded", "point": "", "outcome": "passed",
         **without_kind(UNWINDOWED)}]
    assert all("measurements" not in result for result in data["results"])
    json.dumps(data)


def test_with_several_engines_each_figure_names_its_engine():
    data = measured_summary(("server", "valkey")).to_json()
    assert [(f["engine"], f["nodeid"]) for f in data["latency"]] == [
        ("server", "test_latency.py::test_latency[N=5-server]"),
        ("valkey", "test_latency.py::test_latency[N=5-valkey]")]
    assert [f["engine"] for f in data["footprint"]] == ["server", "server", "valkey", "valkey"]


def test_junit_properties_of_the_figures():
    latency, footprint, unwindowed = measured_summary().results
    assert latency.properties() == [("append_p95_ms", "0.4"), ("append_p95_floor_ratio", "4.0"),
                                    ("load_p95_ms", "0.6"), ("load_p95_floor_ratio", "3.0")]
    assert footprint.properties() == [("bytes_per_message", "340.0"), ("footprint_growth", "9.18")]
    assert unwindowed.properties() == [("bytes_per_message", "350.0")]
    assert ROUND_TRIP.properties() == []


def test_summary_md_has_a_latency_and_a_footprint_table():
    text = render_markdown(measured_summary())
    tables = text[text.index("### Latency"):text.index("### First failures")]
    assert tables.splitlines() == [
        "### Latency", "",
        "Milliseconds, p50 / p95 / p99, beside the raw Redis floor measured in the same run (RPUSH and LRANGE of "
        "the same sizes through redis-py on the same server); × floor: the store's p50 and p95 as multiples of the "
        "floor's.", "",
        "| where | samples | append | RPUSH floor | × floor | load | LRANGE floor | × floor | budget (p95) |",
        "|---|---|---|---|---|---|---|---|---|",
        "| N=5 | 200 | 0.200 / 0.400 / 0.500 | 0.100 / 0.100 / 0.100 | 2× / 4× | 0.300 / 0.600 / 0.900 | "
        "0.200 / 0.200 / 0.200 | 1.5× / 3× | append 5 ms |", "",
        "### Storage footprint", "",
        "MEMORY USAGE (SAMPLES 0) of the session's keys after its first messages (a full window; 10 under a roomy "
        "one), per message against the content's size, and after the rest (ten windows' worth; twice the "
        "messages).", "",
        "| where | messages | bytes | per message | content per message | overhead | growth |",
        "|---|---|---|---|---|---|---|",
        "| N=5 | 5 | 1.7 KB | 340 B | 255 B | 1.33× | 15.2 KB after 50 appends: 9.18× (at most 4×) |",
        "| unwindowed | 20 | 6.8 KB | 350 B | 255 B | 1.37× | no window, not judged |", ""]
    several = render_markdown(measured_summary(("server", "valkey")))
    assert "| N=5 on valkey | 200 | 0.200 / 0.400 / 0.500 |" in several


def test_terminal_summary_has_a_line_per_figure():
    lines = [line for line in render_terminal(measured_summary()).splitlines() if line.startswith(("  latency",
                                                                                                  "  footprint"))]
    assert lines == [
        "  latency N=5: append 0.200 / 0.400 / 0.500 ms (2× / 4× the floor at p50 / p95), load 0.300 / 0.600 / 0.900 "
        "ms (1.5× / 3×)",
        "  footprint N=5: 340 B per message (255 B of content, 1.33×); 15.2 KB after 50 appends: 9.18× (at most 4×)",
        "  footprint unwindowed: 350 B per message (255 B of content, 1.37×); no window, not judged"]


@pytest.mark.parametrize("size, text", [(812, "812 B"), (1700, "1.7 KB"), (4 * 1024 * 1024, "4.0 MB")])
def test_sizes_as_a_person_reads_them(size, text):
    assert size_text(size) == text


def test_report_html_draws_a_chart_per_figure_with_its_numbers():
    from memory_regression.reports.html_report import html_summary
    page = "".join(html_summary(measured_summary()))
    latency = page[page.index("<svg class='memory-latency-chart'"):]
    latency = latency[:latency.index("</svg>")]
    for text in ("append p50", "0.200 ms (2.0× the floor)", "floor 0.100 ms", "load p99", "0.900 ms (4.5× the floor)",
                 "budget (p95): append 5 ms"):
        assert text in latency, text
    assert page.count("<svg class='memory-latency-chart'") == 1
    assert page.count("<svg class='memory-footprint-chart'") == 1   # the unwindowed figure has no growth to draw
    assert "15.2 KB" in page and "growth 9.18× (at most 4×)" in page
    assert "<script" not in page and "src=" not in page   # self-contained, no script
    links = re.findall(r"href=(.)(.*?)\1", page)
    assert links and all(target.startswith("#scenario-") for _quote, target in links), links   # within the page


# -- write_all: the files ---------------------------------------------------------------------------

def test_write_all_writes_the_summary_files_and_names_them(tmp_path):
    """Beside pytest's report.html (and junit.xml, absent here), summary.json and summary.md, redacted;
    report_files names every report there is."""
    directory = tmp_path / "r"
    directory.mkdir()
    (directory / "report.html").write_text("<html></html>")
    summary = sample_summary()
    summary.message = "café: password hunter2 in redis://user:hunter2@db:6379/0"
    markdown = Redactor(["hunter2"]).text(render_markdown(summary))   # redacted as written, after its escaping
    write_all(summary, ReportPaths(directory), Redactor(["hunter2"]))
    assert summary.report_files == {"html": str(directory / "report.html"),
                                    "summary_md": str(directory / "summary.md"),
                                    "summary_json": str(directory / "summary.json")}
    assert sorted(p.name for p in directory.iterdir()) == ["report.html", "summary.json", "summary.md"]
    text = (directory / "summary.json").read_text(encoding="utf-8")
    summary.message = "café: password *** in redis://***@db:6379/0"
    assert json.loads(text) == summary.to_json()
    assert '"message": "café: password' in text, "non-ASCII text is written as it is, not as \\u escapes"
    assert (directory / "summary.md").read_text(encoding="utf-8") == markdown


def test_write_all_of_a_run_that_judged_nothing_adds_junit(tmp_path):
    paths = ReportPaths(tmp_path / "new" / "r")     # a directory, and its parent, that do not exist yet
    summary = RunSummary(Status.REDIS_ERROR, "Redis could not be started")
    write_all(summary, paths, Redactor())
    assert summary.report_files == {"junit": str(paths.directory / "junit.xml"),
                                    "summary_md": str(paths.summary_md), "summary_json": str(paths.summary_json)}
    assert "Redis could not be started" in paths.junit.read_text(encoding="utf-8")
    assert json.loads(paths.summary_json.read_text(encoding="utf-8"))["report_files"] == summary.report_files


def test_the_junit_of_a_run_that_judged_nothing_is_one_errored_case_saying_why(tmp_path):
    paths = ReportPaths(tmp_path / "r")
    write_all(RunSummary(Status.USAGE_ERROR, "no store given\x00\ngive --store FILE:CLASS"), paths, Redactor())
    root = ET.parse(paths.junit).getroot()
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    assert suite.get("name").startswith("memory-regression")   # and the run's windows and profiles
    assert (suite.get("tests"), suite.get("errors")) == ("1", "1")
    [case] = suite.findall("testcase")
    assert (case.get("name"), case.get("classname")) == ("configuration", "memory_regression")
    [error] = case.findall("error")
    assert (error.get("message"), error.get("type")) == ("no store given\\x00", "usage error")
    assert error.text == "no store given\\x00\ngive --store FILE:CLASS"


def test_a_report_is_written_through_no_link_another_account_planted(tmp_path):
    """In a directory others may write, the names the run once wrote beside a report
    (``.summary.json.PID.partial``) and probed the directory with could be foreseen, and a link planted
    there made the run write through it: now the file beside it has a name no one can foresee, made with
    O_EXCL, and the files the links point at stay as they were; the report gets a new file's mode."""
    victim = tmp_path / "victim"
    victim.write_text("kept")
    target = tmp_path / "summary.json"
    for name in (f".{target.name}.{os.getpid()}.partial", f".memory-regression-write-check-{os.getpid()}"):
        (tmp_path / name).symlink_to(victim)
    prepare_report_dir(ReportPaths(tmp_path), str(tmp_path))
    write_atomically(target, "{}")
    assert victim.read_text() == "kept" and target.read_text() == "{}"
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask
    assert sorted(path.name for path in tmp_path.iterdir() if not path.is_symlink()) == ["summary.json", "victim"]
