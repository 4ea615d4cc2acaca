"""The GitHub Actions glue on its own: inputs, escaping, annotations, outputs and the job summary."""

import re
from pathlib import Path

import pytest

from memory_regression.reports import github
from memory_regression.reports.files import ReportPaths
from memory_regression.reports.results import Outcome, RunSummary, ScenarioResult, Status
from tests.conftest import read_outputs

FLAGS = [("--store", False), ("--window-sizes", False), ("--allow-flush", True), ("--redis", False)]

# a run without --baseline compares nothing: those outputs are empty
WITHOUT_BASELINE = {"regressions": "", "new-failures": "", "fixed": ""}


def failure(index):
    return ScenarioResult(f"t{index}", f"s{index}", "core", "", [], Outcome.FAILED, f"m{index}")


def test_inputs_fill_flags_the_command_line_did_not_give():
    environ = {"INPUT_STORE": "app/m.py:S", "INPUT_WINDOW-SIZES": "3,4", "INPUT_ALLOW-FLUSH": "true",
               "INPUT_REDIS": "", "INPUT_PYTEST-ARGS": "-k 'count window' -x"}
    args, extra = github.inputs_as_args(environ, FLAGS, ["--window-sizes=9"])
    assert args == ["--store=app/m.py:S", "--allow-flush"]
    assert extra == ["-k", "count window", "-x"]
    args, _ = github.inputs_as_args({"INPUT_REDIS": "-x"}, FLAGS, [])   # a value that looks like a flag
    assert args == ["--redis=-x"]
    args, _ = github.inputs_as_args({"INPUT_ALLOW-FLUSH": "false"}, FLAGS, [])
    assert args == []


def test_escaping_follows_the_workflow_command_rules():
    assert github.escape_data("100% done\r\nnext") == "100%25 done%0D%0Anext"
    assert github.escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"
    line = github.annotation("lost message 1\nexpected | actual", "memory regression: t::x[N=5]",
                             "app/m.py", 12)
    assert line == ("::error file=app/m.py,line=12,title=memory regression%3A t%3A%3Ax[N=5]::"
                    "lost message 1%0Aexpected | actual")


def test_annotations_stop_at_ten_and_point_at_the_store(tmp_path):
    summary = RunSummary(Status.FAILED, results=[failure(i) for i in range(12)],
                         store_file=str(tmp_path / "app/m.py"), store_line=3)
    lines = github.annotations(summary, tmp_path)
    assert len([line for line in lines if line.startswith("::error ")]) == 10
    assert lines[0].startswith("::error file=app/m.py,line=3,title=")
    assert lines[-1].startswith("::notice ") and "2 more failures" in lines[-1]


def test_a_run_that_judged_nothing_gets_one_annotation(tmp_path):
    lines = github.annotations(RunSummary(Status.USAGE_ERROR, "no store given"), tmp_path)
    assert lines == ["::error title=memory regression%3A usage error::no store given"]


def test_a_redis_error_after_failures_is_annotated_first(tmp_path):
    summary = RunSummary(Status.REDIS_ERROR, "Redis went away during t0", results=[failure(0)])
    lines = github.annotations(summary, tmp_path)
    assert [line.split("::")[2] for line in lines] == ["Redis went away during t0", "m0"]


def test_outputs_cannot_add_lines(tmp_path):
    github.write_outputs({"html-path": "reports\ninjected=1", "total": "3"}, str(tmp_path / "out"))
    assert read_outputs(tmp_path / "out") == {"html-path": "reports\ninjected=1", "total": "3"}


def test_publish_writes_outputs_and_summary(tmp_path, capsys):
    (tmp_path / "out").touch()
    (tmp_path / "sum").write_text("earlier step\n")
    paths = ReportPaths(tmp_path / "r")
    paths.directory.mkdir()
    paths.summary_md.write_text("## Memory regression: passed\n")
    summary = RunSummary(Status.PASSED, conformance_level="core+ttl",
                         results=[ScenarioResult("t1", "s1", "core", "", [], Outcome.PASSED),
                                  ScenarioResult("t2", "s2", "core", "", [], Outcome.PASSED),
                                  ScenarioResult("t3", "s3", "ttl", "", ["ttl"], Outcome.SKIPPED)],
                         report_files={"junit": str(paths.junit), "html": str(paths.html)})
    github.publish(summary, paths, {"GITHUB_OUTPUT": str(tmp_path / "out"),
                                    "GITHUB_STEP_SUMMARY": str(tmp_path / "sum")}, tmp_path)
    assert read_outputs(tmp_path / "out") == {
        "total": "3", "passed": "2", "failed": "0", "skipped": "1", "errors": "0", "warnings": "0",
        "conformance-level": "core+ttl", "engine-differences": "0", **WITHOUT_BASELINE, "junit-path": "r/junit.xml",
        "html-path": "r/report.html"}
    assert (tmp_path / "sum").read_text() == "earlier step\n## Memory regression: passed\n"
    assert capsys.readouterr().out == ""


def test_warnings_are_warning_annotations_at_most_ten_and_an_output():
    """A warning (a cost, a transient effect) is a ::warning annotation naming its guarantee, not an
    ::error; GitHub shows 10 a step, so the rest are counted in a notice."""
    warned = [ScenarioResult(f"test_f.py::t{i}", f"t{i}", "footprint", "", [], Outcome.PASSED,
                             warnings=[{"guarantee": "bounded-storage", "text": f"grew {i}×: 100%"}])
              for i in range(12)]
    summary = RunSummary(Status.PASSED, results=warned)
    lines = github.annotations(summary, Path("/w"))
    assert lines[0] == ("::warning title=memory regression warning (bounded-storage)%3A test_f.py%3A%3At0::"
                        "grew 0×: 100%25")
    assert sum(line.startswith("::warning ") for line in lines) == 10 and not any("::error" in line for line in lines)
    assert lines[-1] == ("::notice title=memory regression::2 more warnings: see the job summary and the HTML "
                         "report")
    assert github.outputs(summary, Path("/w"))["warnings"] == "12"


def test_workspace_defaults_to_the_working_directory():
    assert github.workspace_dir({}) == Path.cwd()
    assert github.workspace_dir({"GITHUB_WORKSPACE": "/github/workspace"}) == Path("/github/workspace")


def test_only_the_string_true_means_github_actions():
    assert github.is_github_actions({"GITHUB_ACTIONS": "true"})
    assert not github.is_github_actions({"GITHUB_ACTIONS": "1"}) and not github.is_github_actions({})


def test_an_input_is_read_by_its_action_name_trimmed():
    environ = {"INPUT_WINDOW-SIZES": "  5,20 \n", "INPUT_PYTEST_ARGS": "-x", "INPUT_STORE": ""}
    assert github.input_value(environ, "window-sizes") == "5,20"
    assert github.input_value(environ, "pytest args") == "-x"
    assert github.input_value(environ, "store") == "" and github.input_value(environ, "redis") == ""


def test_a_flag_given_as_two_arguments_wins_over_its_input_and_switches_ignore_case():
    environ = {"INPUT_STORE": "app/m.py:S", "INPUT_REDIS": "server", "INPUT_ALLOW-FLUSH": "TRUE"}
    args, extra = github.inputs_as_args(environ, FLAGS, ["--store", "other.py:T"])
    assert args == ["--allow-flush", "--redis=server"]     # in the order of the flags
    assert extra == []


def test_a_secret_is_masked_escaped():
    assert github.mask("pa%ss\nword") == "::add-mask::pa%25ss%0Aword"


def test_commands_stay_stopped_until_the_block_ends_even_by_an_exception(capsys):
    with pytest.raises(RuntimeError), github.commands_stopped():
        print("::error::from the store")
        raise RuntimeError("store crashed")
    first, inside, last = capsys.readouterr().out.splitlines()
    token = first.removeprefix("::stop-commands::")
    assert first.startswith("::stop-commands::") and len(token) == 32
    assert inside == "::error::from the store" and last == f"::{token}::"
    with github.commands_stopped():
        pass
    assert capsys.readouterr().out.splitlines()[0] != first, "the token must not be guessable from an earlier run"


def test_an_annotation_points_at_a_file_and_line_only_when_it_has_them():
    assert github.annotation("m", "t", "app/m.py") == "::error file=app/m.py,title=t::m"
    assert github.annotation("m", "t", None, 12) == "::error title=t::m"
    assert github.annotation("m", "t", "a:b,c.py", 0) == "::error file=a%3Ab%2Cc.py,title=t::m"
    assert github.escape_data("a\rb") == "a%0Db"


@pytest.mark.parametrize("status", list(Status), ids=str)
def test_every_status_but_passed_and_failed_is_annotated_as_the_run_error(tmp_path, status):
    lines = github.annotations(RunSummary(status), tmp_path)
    if status in (Status.PASSED, Status.FAILED):
        assert lines == []
    else:
        assert lines == [f"::error title=memory regression%3A {status.value}::{status.value}"]


def test_a_failure_annotation_carries_message_and_details_escaped(tmp_path):
    summary = RunSummary(Status.FAILED, results=[
        ScenarioResult("test_core.py::t[N=5]", "t", "core", "N=5", [], Outcome.FAILED, "lost 1%", "exp: a\nact: b"),
        ScenarioResult("test_core.py::u", "u", "core", "", [], Outcome.PASSED),
        ScenarioResult("test_core.py::v", "v", "core", "", [], Outcome.ERROR, "setup failed: E"),
        ScenarioResult("test_core.py::w", "w", "core", "", [], Outcome.SKIPPED, "store lacks ttl")],
        store_file=str(tmp_path / "app" / "m.py"), store_line=4)
    assert github.annotations(summary, tmp_path) == [
        "::error file=app/m.py,line=4,title=memory regression%3A test_core.py%3A%3At[N=5]::lost 1%25%0Aexp: a%0Aact: b",
        "::error file=app/m.py,line=4,title=memory regression%3A test_core.py%3A%3Av::setup failed: E"]


def test_a_store_outside_the_workspace_is_not_pointed_at(tmp_path):
    summary = RunSummary(Status.FAILED, results=[failure(0)], store_file="/elsewhere/m.py", store_line=3)
    assert github.annotations(summary, tmp_path / "workspace") == ["::error title=memory regression%3A t0::m0"]


@pytest.mark.parametrize("count, errors, more", [(9, 9, 0), (10, 10, 0), (11, 10, 1), (25, 10, 15)])
def test_failure_annotations_are_capped_at_ten(tmp_path, count, errors, more):
    lines = github.annotations(RunSummary(Status.FAILED, results=[failure(i) for i in range(count)]), tmp_path)
    assert [line.split("::")[2] for line in lines[:errors]] == [f"m{i}" for i in range(errors)]
    assert len(lines) == errors + bool(more)
    if more:
        assert lines[-1] == (f"::notice title=memory regression::{more} more failures: see the job summary "
                             "and the HTML report")


def test_the_run_error_takes_one_of_the_ten(tmp_path):
    summary = RunSummary(Status.INTERRUPTED, "interrupted by SIGINT", results=[failure(i) for i in range(10)])
    lines = github.annotations(summary, tmp_path)
    assert [line.split("::")[2] for line in lines[:-1]] == ["interrupted by SIGINT", *(f"m{i}" for i in range(9))]
    assert lines[-1].startswith("::notice title=memory regression::1 more failures")


def test_outputs_are_the_totals_the_level_and_the_report_paths(tmp_path):
    outcomes = {"P": Outcome.PASSED, "F": Outcome.FAILED, "S": Outcome.SKIPPED, "E": Outcome.ERROR}
    summary = RunSummary(Status.FAILED, conformance_level="core+clear", results=[
        ScenarioResult(f"t{i}", f"t{i}", "core", "", [], outcomes[letter]) for i, letter in enumerate("PEFPSEFEPE")],
        report_files={"junit": str(tmp_path / "r" / "junit.xml"), "html": str(tmp_path / "r" / "report.html")})
    assert github.outputs(summary, tmp_path) == {
        "total": "10", "passed": "3", "failed": "2", "skipped": "1", "errors": "4", "warnings": "0",
        "conformance-level": "core+clear", **WITHOUT_BASELINE,
        "engine-differences": "0", "junit-path": "r/junit.xml", "html-path": "r/report.html"}
    assert github.outputs(summary, tmp_path / "r") == {**github.outputs(summary, tmp_path),
                                                      "junit-path": "junit.xml", "html-path": "report.html"}


def test_report_paths_outside_the_workspace_or_not_written_are_empty_outputs(tmp_path):
    outside = RunSummary(Status.USAGE_ERROR, report_files={"junit": "/elsewhere/junit.xml"})
    assert github.outputs(outside, tmp_path) == {
        "total": "0", "passed": "0", "failed": "0", "skipped": "0", "errors": "0", "warnings": "0",
        "conformance-level": "none", **WITHOUT_BASELINE,
        "engine-differences": "0", "junit-path": "", "html-path": ""}


def test_outputs_are_appended_each_in_a_block_of_its_own(tmp_path):
    out = tmp_path / "out"
    out.write_text("earlier=1\n")
    github.write_outputs({"a": "1", "b": "two\nlines"}, str(out))
    lines = out.read_text().splitlines()
    assert lines[0] == "earlier=1" and len(lines) == 8
    first, second = lines[1].split("<<"), lines[4].split("<<")
    assert first[0] == "a" and lines[2:4] == ["1", first[1]]
    assert second[0] == "b" and lines[5:] == ["two", "lines", second[1]]
    assert re.fullmatch(r"memory_regression_[0-9a-f]{16}", first[1]) and first[1] != second[1]


def test_without_github_files_publish_writes_nothing_and_announce_prints_the_annotations(tmp_path, capsys):
    paths = ReportPaths(tmp_path / "r")
    paths.directory.mkdir()
    paths.summary_md.write_text("## Memory regression: failed\n")
    summary = RunSummary(Status.FAILED, results=[failure(0)])
    assert github.publish(summary, paths, {}, tmp_path) == []
    assert capsys.readouterr().out == ""
    github.announce(summary, tmp_path, [])
    assert capsys.readouterr().out == "::error title=memory regression%3A t0::m0\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r"]


@pytest.mark.parametrize("line", ["7\n::error::forged", "7", 7.0, True, 0, -3, [7]])
def test_an_annotation_gives_a_line_only_when_it_is_a_positive_whole_number(line):
    """A store program's greeting says the line: whatever else it holds is left out, never printed."""
    shown = github.annotation("m", "t", "app/store.mjs", line)
    assert shown == "::error file=app/store.mjs,title=t::m"
    assert github.annotation("m", "t", "app/store.mjs", 12) == "::error file=app/store.mjs,line=12,title=t::m"


def test_publish_without_summary_md_appends_nothing(tmp_path):
    (tmp_path / "sum").write_text("earlier step\n")
    github.publish(RunSummary(Status.PASSED), ReportPaths(tmp_path / "r"),
                   {"GITHUB_STEP_SUMMARY": str(tmp_path / "sum")}, tmp_path)
    assert (tmp_path / "sum").read_text() == "earlier step\n"


MIB = 1024 * 1024
CUT = "\n\n_(cut at 1 MiB)_\n"


@pytest.mark.parametrize("content, appended", [
    ("x" * MIB, "x" * MIB),
    ("x" * (MIB + 1), "x" * (MIB - 200) + CUT),
    ("x" + "é" * (MIB // 2), "x" + "é" * ((MIB - 202) // 2) + CUT),   # the cut splits an é: it is left out
], ids=["at-the-limit", "over-it", "mid-character"])
def test_a_job_summary_over_1_mib_is_cut(tmp_path, content, appended):
    paths = ReportPaths(tmp_path / "r")
    paths.directory.mkdir()
    paths.summary_md.write_text(content, encoding="utf-8")
    github.publish(RunSummary(Status.PASSED), paths, {"GITHUB_STEP_SUMMARY": str(tmp_path / "sum")}, tmp_path)
    assert (tmp_path / "sum").read_text(encoding="utf-8") == appended
