"""The GitHub Actions glue on its own: inputs, escaping, annotations, outputs and the job summary."""

from pathlib import Path

from memory_regression import github

FLAGS = [("--store", False), ("--window-sizes", False), ("--allow-flush", True), ("--redis", False)]


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
    failures = [{"nodeid": f"t{i}", "message": f"m{i}", "details": ""} for i in range(12)]
    summary = {"status": "failed", "failures": failures, "store_file": str(tmp_path / "app/m.py"),
               "store_line": 3}
    lines = github.annotations(summary, tmp_path)
    assert len([line for line in lines if line.startswith("::error ")]) == 10
    assert lines[0].startswith("::error file=app/m.py,line=3,title=")
    assert lines[-1].startswith("::notice ") and "2 more failures" in lines[-1]


def test_usage_errors_get_one_annotation(tmp_path):
    lines = github.annotations({"status": "usage error", "exit_code": 2, "message": "no store given"}, tmp_path)
    assert lines == ["::error title=memory regression%3A usage error::no store given"]


def test_publish_writes_outputs_and_summary(tmp_path, capsys):
    (tmp_path / "out").touch()
    (tmp_path / "sum").write_text("earlier step\n")
    (tmp_path / "summary.md").write_text("## Memory regression: passed\n")
    summary = {"status": "passed", "failures": [], "conformance_level": "core+ttl",
               "totals": {"total": 3, "passed": 2, "failed": 0, "skipped": 1, "errors": 0},
               "report_files": {"junit": str(tmp_path / "r/junit.xml"), "html": str(tmp_path / "r/report.html")}}
    github.publish(summary, tmp_path / "summary.md",
                   {"GITHUB_OUTPUT": str(tmp_path / "out"), "GITHUB_STEP_SUMMARY": str(tmp_path / "sum")}, tmp_path)
    assert (tmp_path / "out").read_text().splitlines() == [
        "total=3", "passed=2", "failed=0", "skipped=1", "errors=0", "conformance-level=core+ttl",
        "junit-path=r/junit.xml", "html-path=r/report.html"]
    assert (tmp_path / "sum").read_text() == "earlier step\n## Memory regression: passed\n"
    assert capsys.readouterr().out == ""


def test_workspace_defaults_to_the_working_directory():
    assert github.workspace_dir({}) == Path.cwd()
    assert github.workspace_dir({"GITHUB_WORKSPACE": "/github/workspace"}) == Path("/github/workspace")
