"""The GitHub Actions glue: inputs, escaping, annotations, outputs and the job summary on their own,
then a run as an action sees it, with a store that forges workflow commands and a Redis URL that
carries a password."""

import re
from pathlib import Path

import pytest

from memory_regression import github
from memory_regression.reports import ReportPaths
from memory_regression.results import Outcome, RunSummary, ScenarioResult, Status
from tests.conftest import ROOT, RedisServer, read_outputs

FLAGS = [("--store", False), ("--window-sizes", False), ("--allow-flush", True), ("--redis", False)]


def failure(index):
    return ScenarioResult(f"t{index}", f"s{index}", "core", "", [], Outcome.FAILED, f"m{index}")


def test_inputs_fill_flags_the_command_line_did_not_give():
    environ = {"INPUT_STORE": "app/m.py:S", "INPUT_WINDOW-SIZES": "3,4", "INPUT_ALLOW-FLUSH": "true",
               "INPUT_REDIS": "", "INPUT_PYTEST-ARGS": "-k 'count window' -x"}
    args, extra = github.inputs_as_args(environ, FLAGS, ["--window-sizes=9"])
    assert args == ["--store", "app/m.py:S", "--allow-flush"]
    assert extra == ["-k", "count window", "-x"]
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
        "total": "3", "passed": "2", "failed": "0", "skipped": "1", "errors": "0",
        "conformance-level": "core+ttl", "junit-path": "r/junit.xml", "html-path": "r/report.html"}
    assert (tmp_path / "sum").read_text() == "earlier step\n## Memory regression: passed\n"
    assert capsys.readouterr().out == ""


def test_workspace_defaults_to_the_working_directory():
    assert github.workspace_dir({}) == Path.cwd()
    assert github.workspace_dir({"GITHUB_WORKSPACE": "/github/workspace"}) == Path("/github/workspace")


# -- as an action --------------------------------------------------------------------------------

def as_action(run_suite, tmp_path, *args, inputs=None, **options):
    (tmp_path / "out").touch()
    (tmp_path / "sum").touch()
    env = {"GITHUB_ACTIONS": "true", "GITHUB_OUTPUT": str(tmp_path / "out"),
           "GITHUB_STEP_SUMMARY": str(tmp_path / "sum"), "GITHUB_WORKSPACE": str(options.get("cwd", ROOT)),
           **{f"INPUT_{name.upper()}": value for name, value in (inputs or {}).items()}}
    return run_suite(*args, env=env, **options)


def test_store_output_cannot_pose_as_workflow_commands(run_suite, tmp_path):
    result = as_action(run_suite, tmp_path, "--store", "tests.stores.hostile:PrintsWorkflowCommands",
                       "-k", "round_trip")
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    stop = next(i for i, line in enumerate(lines) if line.startswith("::stop-commands::"))
    token = lines[stop].split("::")[2]
    resume = lines.index(f"::{token}::")
    forged = [i for i, line in enumerate(lines)
              if line.startswith(("::error title=forged::", "::set-output name=passed::"))]
    assert forged and all(stop < i < resume for i in forged), "a forged command is outside the stopped stretch"
    after = lines[resume + 1:]
    assert [line.split(" ")[0] for line in after] == ["::error"]
    assert "::warning::forged" in after[0] and "%0A" in after[0]    # escaped inside the annotation's text
    assert read_outputs(tmp_path / "out")["passed"] == "0"


def test_a_newline_in_the_report_dir_input_adds_no_output(run_suite, tmp_path):
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    report_dir = "reports\ninjected=1"
    result = as_action(run_suite, tmp_path, "--store", str(ROOT / "tests/stores/correct.py") + ":ListStore",
                       "-k", "fresh", inputs={"REPORT-DIR": report_dir}, cwd=workspace,
                       report_dir=workspace / report_dir, give_report_dir=False)
    assert result.exit_code == 0, result.output
    outputs = read_outputs(tmp_path / "out")
    assert set(outputs) == {"total", "passed", "failed", "skipped", "errors", "conformance-level",
                            "junit-path", "html-path"}
    assert outputs["junit-path"] == f"{report_dir}/junit.xml"


@pytest.fixture
def password_server():
    server = RedisServer("--requirepass", "Pa55-word-in-url")
    yield server
    server.stop()


def test_a_password_in_the_redis_url_is_shown_nowhere(run_suite, tmp_path, password_server):
    url = password_server.url(userinfo="default:Pa55-word-in-url")
    result = as_action(run_suite, tmp_path, "--store", "tests.stores.hostile:PrintsItsUrl", "--redis", url,
                       "-k", "round_trip or fresh")
    assert result.exit_code == 1, result.output
    assert "connecting to redis://***@127.0.0.1" in result.output, "the store's print is not shown redacted"
    shown = [line for line in result.output.splitlines() if "Pa55-word-in-url" in line]
    assert shown == ["::add-mask::Pa55-word-in-url"], "only the mask command may carry the password"
    for path in [*result.report_dir.iterdir(), tmp_path / "out", tmp_path / "sum"]:
        text = path.read_text(encoding="utf-8")
        assert "Pa55-word-in-url" not in text, path
    assert re.search(r"could not use redis://\*\*\*@127\.0\.0\.1", result.summary["failures"][0]["message"])
