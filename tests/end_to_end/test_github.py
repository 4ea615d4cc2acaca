"""The GitHub Actions glue in a run as an action sees it: a store that forges workflow commands, a
Redis URL that carries a password, and output files that cannot be written."""

import os
import re
import subprocess
import sys

import pytest

from tests.conftest import ROOT, RedisServer, read_outputs


def test_workflow_commands_reach_the_log_in_order_with_what_child_processes_print():
    """Outside the image (which sets PYTHONUNBUFFERED) the runner's stdout, a pipe, is block-buffered:
    each command must be flushed before anything else (a child process, another stream) can write
    to the log ahead of it."""
    child = "import subprocess, sys; subprocess.run([sys.executable, '-c', 'print(\"{}\")'])"
    script = "\n".join([
        "import subprocess, sys", "from pathlib import Path", "from memory_regression.reports import github",
        "from memory_regression.reports.files import ReportPaths",
        "from memory_regression.reports.results import RunSummary, Status",
        "with github.commands_stopped():", "    " + child.format("::error::forged"),
        child.format("between"),
        "summary = RunSummary(Status.USAGE_ERROR, 'no store')",
        "github.announce(summary, Path.cwd(), github.publish(summary, ReportPaths(Path('nowhere')), {}, Path.cwd()))",
        child.format("after")])
    environ = {name: value for name, value in os.environ.items() if name != "PYTHONUNBUFFERED"}
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=environ, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    token = lines[0].removeprefix("::stop-commands::")
    assert lines == [f"::stop-commands::{token}", "::error::forged", f"::{token}::", "between",
                     "::error title=memory regression%3A usage error::no store", "after"]


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
                       "-k", "round_trip_keeps")
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
    assert set(outputs) == {"total", "passed", "failed", "skipped", "errors", "warnings", "conformance-level",
                            "engine-differences", "regressions", "new-failures", "fixed", "junit-path", "html-path"}
    assert outputs["junit-path"] == f"{report_dir}/junit.xml"


@pytest.fixture
def password_server():
    server = RedisServer("--requirepass", "Pa55-word-in-url")
    yield server
    server.stop()


def test_a_password_in_the_redis_url_is_shown_nowhere(run_suite, tmp_path, password_server):
    url = password_server.url(userinfo="default:Pa55-word-in-url")
    result = as_action(run_suite, tmp_path, "--store", "tests.stores.hostile:PrintsItsUrl", "--redis", url,
                       "-k", "round_trip_keeps or fresh")
    assert result.exit_code == 1, result.output
    assert "connecting to redis://***@127.0.0.1" in result.output, "the store's print is not shown redacted"
    shown = [line for line in result.output.splitlines() if "Pa55-word-in-url" in line]
    assert shown == ["::add-mask::Pa55-word-in-url"], "only the mask command may carry the password"
    for path in [*result.report_dir.iterdir(), tmp_path / "out", tmp_path / "sum"]:
        text = path.read_text(encoding="utf-8")
        assert "Pa55-word-in-url" not in text, path
    assert re.search(r"could not use redis://\*\*\*@127\.0\.0\.1", result.summary["failures"][0]["message"])


def test_a_password_that_is_a_word_is_redacted_as_the_secret_and_node_ids_stay_whole(run_suite, tmp_path):
    """The password ``test``: redacted in the store's URL and wherever it stands alone, but node ids
    (``test_core.py::test_...``) are not cut to ``***_core.py::***_...``, so that runs compare."""
    server = RedisServer("--requirepass", "test")
    try:
        result = as_action(run_suite, tmp_path, "--store", "tests.stores.hostile:PrintsItsUrl", "--redis",
                           server.url(userinfo="default:test"), "-k", "round_trip_keeps")
    finally:
        server.stop()
    assert result.exit_code == 1, result.output
    nodeid = "test_core.py::test_round_trip_keeps_role_content_and_order"
    assert [r["nodeid"] for r in result.summary["results"]] == [nodeid]
    assert "connecting to redis://***@127.0.0.1" in result.output
    assert nodeid in (tmp_path / "sum").read_text()
    assert "***_core.py" not in result.output


def test_a_key_left_without_ttl_reaches_summary_json_and_the_job_summary(run_suite, tmp_path):
    """The store's list expires but its ``:last-active`` key does not: the worker finds that key
    after the scenario, and summary.json and the job summary name it with its scenario, though the
    scenario passed. Only the round trip ran, so the level (in summary.json and the outputs) is
    core, not the other capabilities the store has, none of whose scenarios ran."""
    result = as_action(run_suite, tmp_path, "--store", "tests.stores.broken:CompanionKeyWithoutTTL",
                       "-k", "round_trip_keeps")
    assert result.exit_code == 0, result.output
    summary = result.summary
    nodeid = "test_core.py::test_round_trip_keeps_role_content_and_order"
    assert [r["nodeid"] for r in summary["results"]] == [nodeid]
    keys = summary["keys_without_ttl"]
    assert len(keys) == 1, f"expected the :last-active key alone (the list has its TTL): {keys}"
    assert re.fullmatch(rf"mrs:[0-9a-f]{{8}}:messages:round-trip:last-active \({re.escape(nodeid)}\)", keys[0])
    assert f"Keys left without a TTL (1): `{keys[0]}`" in (tmp_path / "sum").read_text(encoding="utf-8")
    assert summary["capabilities"] == ["clear", "core", "count-window", "namespace", "ttl"]
    assert summary["conformance_level"] == "core"
    assert read_outputs(tmp_path / "out")["conformance-level"] == "core"


def test_fail_on_failure_false_lets_the_step_pass_when_scenarios_fail_only(run_suite, tmp_path):
    result = as_action(run_suite, tmp_path, "--store", "tests.stores.broken:WhitespaceStripped", "-k",
                       "round_trip_keeps", inputs={"FAIL-ON-FAILURE": "false"})
    assert result.exit_code == 0, result.output
    assert (result.summary["status"], result.summary["exit_code"]) == ("failed", 1)
    outputs = read_outputs(tmp_path / "out")
    assert {name: outputs[name] for name in ("total", "passed", "failed", "skipped", "errors", "conformance-level")} \
        == {"total": "1", "passed": "0", "failed": "1", "skipped": "0", "errors": "0", "conformance-level": "none"}
    errors = [line for line in result.output.splitlines() if line.startswith("::error ")]
    assert len(errors) == 1 and ",title=memory regression%3A test_core.py%3A%3Atest_round_trip_keeps_role_content_" \
        "and_order::" in errors[0], errors
    assert "## Memory regression: failed" in (tmp_path / "sum").read_text(encoding="utf-8")
    usage = run_suite("--store", "tests.stores.correct:Nope", "--fail-on-failure", "false",
                      report_dir=tmp_path / "usage")
    assert usage.exit_code == 2, "a run that could not judge the store must fail the step:\n" + usage.output


def test_github_files_that_cannot_be_written_fail_a_passing_step_saying_which(run_suite, tmp_path):
    """A full disk, or a path that is no file: the step's outputs and job summary are missing, so a
    passing run must not pass the step; an error annotation names what could not be written."""
    (tmp_path / "out").mkdir()   # open() of a directory fails as a full disk's write does: OSError
    result = run_suite("--store", "tests.stores.correct:ListStore", "-k", "round_trip_keeps",
                       env={"GITHUB_ACTIONS": "true", "GITHUB_OUTPUT": str(tmp_path / "out"),
                            "GITHUB_STEP_SUMMARY": str(tmp_path / "out"), "GITHUB_WORKSPACE": str(ROOT)})
    assert result.exit_code == 2, result.output
    assert result.summary["status"] == "report error"
    assert result.summary["message"].startswith("the reports could not all be written (the step's outputs "
                                                "(GITHUB_OUTPUT): Is a directory; the job summary"), result.summary
    assert "The run itself was passed: 1 passed" in result.summary["message"]
    errors = [line for line in result.output.splitlines() if line.startswith("::error ")]
    assert errors == [
        "::error title=memory regression%3A report error::could not write the step's outputs (GITHUB_OUTPUT): "
        "Is a directory",
        "::error title=memory regression%3A report error::could not write the job summary (GITHUB_STEP_SUMMARY): "
        "Is a directory"], errors


HOSTILE_PROGRAM = f"cmd:{sys.executable} tests/stores/hostile_program.py"


def after_the_window(output: str) -> list[str]:
    """The lines a run printed after its stop-commands window closed: what GitHub reads as commands."""
    lines = output.splitlines()
    token = next(line for line in lines if line.startswith("::stop-commands::")).removeprefix("::stop-commands::")
    return lines[lines.index(f"::{token}::") + 1:]


def test_a_programs_greeting_cannot_put_a_command_into_an_annotation(run_suite, tmp_path):
    """The greeting's ``line`` claims to be a line number and carries a newline and a command: it is no
    number, so the failure's annotation gives no line, and the command never starts a line of its own."""
    result = as_action(run_suite, tmp_path, "--store", f"{HOSTILE_PROGRAM} greeting-line", "-k", "round_trip_keeps")
    assert result.exit_code == 1, result.output
    after = after_the_window(result.output)
    assert [line.split(" ")[0] for line in after] == ["::error"], after
    assert "line=" not in after[0] and "file=tests/stores/hostile_program.py," in after[0], after[0]


def test_nothing_of_the_stores_is_printed_after_the_window_when_githubs_files_fail(run_suite, tmp_path):
    """The program cannot load its store and says so with a command; GitHub's output file cannot be written
    (a directory, as a store can make it): the report error that says so carries the store's message, and
    is printed inside the window, with only the escaped annotations after it."""
    (tmp_path / "out").mkdir()
    result = run_suite("--store", f"{HOSTILE_PROGRAM} load-error",
                       env={"GITHUB_ACTIONS": "true", "GITHUB_OUTPUT": str(tmp_path / "out"),
                            "GITHUB_WORKSPACE": str(ROOT)})
    assert result.exit_code == 2, result.output
    assert result.summary["status"] == "report error" and "no store here" in result.summary["message"]
    after = after_the_window(result.output)
    assert after and all(line.startswith("::error title=memory regression%3A ") for line in after), after
