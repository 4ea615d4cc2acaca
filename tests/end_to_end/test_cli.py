"""The runner's manners on the command line: help, version, errors on stderr, suggestions for a
mistyped flag, colour only when wanted, --list, requirements, inputs named in an action, and
files written only where asked."""

import json
import os
import re
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

import pytest

import memory_regression
from tests.conftest import ENTRYPOINT, ONE_SCENARIO, ROOT, read_outputs
from tests.unit.test_cli import COUNTERS, COUNTER_FAULTS

COUNT_STORE = str(ROOT / "examples/stores/count_window.py") + ":CountWindowStore"


def runner(*args, cwd, env=None):
    """The runner with stdout and stderr kept apart."""
    environment = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    for name in [n for n in environment if n.startswith(("INPUT_", "GITHUB_"))]:
        if name not in (env or {}):
            del environment[name]
    return subprocess.run([sys.executable, str(ENTRYPOINT), *args], cwd=cwd, env=environment,
                          capture_output=True, text=True, timeout=180)


def test_help_shows_the_options_and_the_contract(tmp_path):
    done = runner("--help", cwd=tmp_path)
    assert done.returncode == 0 and done.stderr == ""
    for text in ("--store SPEC", "--window-sizes", "--window-policy RULES", "--list", "-k EXPR", "The store contract",
                 "max_messages (also max_history", "append_message", "get_history", "clear_session"):
        assert text in done.stdout, text
    assert list(tmp_path.iterdir()) == []


def test_version(tmp_path):
    from importlib.metadata import version
    done = runner("--version", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"memory-regression {memory_regression.__version__}\n"
    assert version("memory-regression") == memory_regression.__version__


def test_no_arguments_print_the_usage_and_write_nothing(tmp_path):
    done = runner(cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("usage: memory-regression --store SPEC")
    assert "give the store to test" in done.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("args, said", [
    (["--windw-sizes", "5"], "unknown option --windw-sizes; did you mean --window-sizes?"),
    (["--report_dir=x"], "unknown option --report_dir; did you mean --report-dir?"),
    (["--pdb"], "unknown option --pdb"),
    (["examples/stores/count_window.py:CountWindowStore"],
     "unexpected argument 'examples/stores/count_window.py:CountWindowStore': options take the form "
     "--name VALUE; to name the store, give --store examples/stores/count_window.py:CountWindowStore"),
    (["--store"], "argument --store: expected one argument"),
])
def test_unknown_arguments_get_our_usage_error(tmp_path, args, said):
    reports = tmp_path / "reports"
    done = runner("--report-dir", str(reports), *args, cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"memory-regression: usage error: {said}" in done.stderr
    assert said not in done.stdout, "the error belongs on stderr"
    assert "pytest.ini" not in done.stdout + done.stderr
    summary = json.loads((tmp_path / ("reports" if args != ["--store"] else "memory-reports")
                          / "summary.json").read_text())
    assert summary["status"] == "usage error" and said in summary["message"]


def test_pytest_arguments_it_rejects_are_named_without_its_usage_text(tmp_path):
    done = runner("--report-dir", str(tmp_path / "r"), "--store", COUNT_STORE, "--", "--no-such-flag",
                  cwd=tmp_path)
    assert done.returncode == 2
    assert ("memory-regression: usage error: pytest did not accept the arguments after -- (--no-such-flag): "
            "unrecognized arguments: --no-such-flag") in done.stderr
    assert "inifile" not in done.stdout + done.stderr and "usage: " not in done.stdout + done.stderr


def test_errors_go_to_stderr(tmp_path):
    done = runner("--report-dir", str(tmp_path / "r"), "--store", "app/nowhere.py:Store", cwd=tmp_path)
    assert done.returncode == 2
    assert "memory-regression: usage error: --store 'app/nowhere.py:Store': no file app/nowhere.py" in done.stderr


@pytest.mark.parametrize("no_color", [False, True])
def test_colour_only_when_wanted(tmp_path, no_color):
    env = {"FORCE_COLOR": "1", **({"NO_COLOR": "1"} if no_color else {})}
    done = runner("--report-dir", str(tmp_path / "r"), "--store", COUNT_STORE, *ONE_SCENARIO, cwd=tmp_path,
                  env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert ("\x1b[" in done.stdout + done.stderr) is not no_color


def test_list_names_capabilities_profiles_and_scenarios_without_running_them(tmp_path):
    """The store below would fail (its window keeps one message too many) and crash nothing: --list
    binds it and says what would run, without running a scenario and without writing a file."""
    done = runner("--list", "--store", "tests.stores.broken:OffByOneTrim", "--window-sizes", "3",
                  "--model-profiles", "small-4k", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("store tests.stores.broken:OffByOneTrim (defined at ")
    assert lines[1] == "shape: one object for all sessions: append(session_id, role, content)"
    assert lines[2].startswith("capabilities: ") and "count-window" in lines[2] and "token-window" not in lines[2]
    assert "  lacks token-window: its factory takes no max_tokens (or token_limit, max_token_limit)" in lines
    assert "window sizes: 3" in lines and "window policy: suffix" in lines
    assert any(line.startswith("profile small-4k: 3584 tokens, counter ") for line in lines)
    assert "scenarios: 28 would run, 14 would be skipped" in lines
    assert "  run   test_count_window.py::test_count_window_keeps_last_n[N=3]" in lines
    assert ("  skip  test_token_window.py::test_token_window_keeps_maximal_suffix[small-4k]: store lacks "
            "token-window: its factory takes no max_tokens (or token_limit, max_token_limit)") in lines
    assert list(tmp_path.iterdir()) == []


def test_list_of_a_store_that_cannot_be_imported(tmp_path):
    (tmp_path / "exits.py").write_text("import os\nos._exit(0)\nclass Store:\n    pass\n")
    done = runner("--list", "--store", "exits.py:Store", cwd=tmp_path)
    assert done.returncode == 2
    # the status is said where the runner could read it: once in about fifty clean-clone runs it could not
    # (stop 34: "the store's process ended while ...", its cause not found), which says no less that is true
    assert re.search(r"the store(?: ended the process with status 0|'s process ended) while it was being imported",
                     done.stderr), done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["exits.py"]


def test_a_missing_requirements_file_is_no_package_name(tmp_path):
    done = runner("--report-dir", str(tmp_path / "r"), "--store", COUNT_STORE,
                  "--requirements", "requirements-missing.txt", cwd=tmp_path)
    assert done.returncode == 2
    assert "--requirements 'requirements-missing.txt': no such file in" in done.stderr
    assert "installing requirements" not in done.stdout + done.stderr, "pip was asked for a package by that name"


def action_environment(tmp_path, **inputs):
    (tmp_path / "output").touch()
    return {"GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": str(tmp_path), "GITHUB_OUTPUT": str(tmp_path / "output"),
            "GITHUB_STEP_SUMMARY": str(tmp_path / "step-summary"),
            **{f"INPUT_{name.upper().replace('_', '-')}": value for name, value in inputs.items()}}


def test_in_an_action_messages_name_the_inputs(tmp_path):
    env = action_environment(tmp_path, store=COUNT_STORE, window_sizes="x", report_dir="r")
    done = runner(cwd=tmp_path, env=env)
    assert done.returncode == 2
    message = json.loads((tmp_path / "r/summary.json").read_text())["message"]
    assert message.startswith("input window-sizes 'x': 'x' is not a whole number"), message
    assert "--window-sizes" not in message
    done = runner(cwd=tmp_path, env=action_environment(tmp_path, report_dir="r"))
    assert "no store given: pass input store " in json.loads((tmp_path / "r/summary.json").read_text())["message"]
    done = runner("--window-sizes", "y", cwd=tmp_path, env=env)   # typed on the command line: the flag
    assert json.loads((tmp_path / "r/summary.json").read_text())["message"].startswith("--window-sizes 'y'")


def test_in_an_action_suffix_with_a_rule_is_an_error_naming_the_input(tmp_path):
    env = action_environment(tmp_path, store=COUNT_STORE, window_policy="suffix,start-on-user", report_dir="r")
    done = runner(cwd=tmp_path, env=env)
    assert done.returncode == 2
    assert json.loads((tmp_path / "r/summary.json").read_text())["message"] == (
        "input window-policy 'suffix,start-on-user': suffix is the policy without rules and combines with none: "
        "give it alone, or the rules alone (example: input window-policy start-on-user,keep-system)")


def test_a_malformed_latency_budget_is_a_usage_error_naming_the_flag_or_the_input(tmp_path):
    done = runner("--store", COUNT_STORE, "--latency-budget-ms", "append=fast", "--report-dir", "r", cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    said = "latency-budget-ms 'append=fast': append='fast' is not a number of milliseconds above 0"
    assert f"--{said}" in done.stderr and "Traceback" not in done.stderr
    assert json.loads((tmp_path / "r/summary.json").read_text())["status"] == "usage error"
    done = runner(cwd=tmp_path, env=action_environment(tmp_path, store=COUNT_STORE, latency_budget_ms="append=fast",
                                                       report_dir="r"))
    assert done.returncode == 2, done.stdout + done.stderr
    assert json.loads((tmp_path / "r/summary.json").read_text())["message"].startswith(f"input {said}")


def test_a_run_runs_only_the_groups_chosen_and_says_which(run_suite):
    result = run_suite("--store", COUNT_STORE, "--groups", "core,ttl")
    assert result.exit_code == 0, result.output
    summary = result.summary
    assert summary["groups"] == ["core", "ttl"]
    assert {r["group"] for r in summary["results"]} == {"core", "ttl"}
    assert "- Groups: core, ttl (left out: " in (result.report_dir / "summary.md").read_text(encoding="utf-8")
    left_out = run_suite("--store", COUNT_STORE, "--groups", "-core", "--list", expect_reports=False)
    assert left_out.exit_code == 0, left_out.output
    assert "groups: " in left_out.output and "test_core.py" not in left_out.output
    assert "test_ttl.py" in left_out.output


def test_an_unknown_group_is_a_usage_error_in_an_action_naming_the_input(tmp_path):
    env = action_environment(tmp_path, store=COUNT_STORE, groups="concurrency,faultz", report_dir="r")
    done = runner(cwd=tmp_path, env=env)
    assert done.returncode == 2
    assert json.loads((tmp_path / "r/summary.json").read_text())["message"].startswith(
        "input groups 'concurrency,faultz': there is no group 'faultz'; the groups are ")


def test_a_run_writes_nothing_outside_its_report_dir(tmp_path):
    """Hypothesis' database (the stateful scenario), pytest's cache and the store's compiled module
    (``__pycache__``, which would be root's in an action's workspace) included."""
    shutil.copy(ROOT / "examples" / "stores" / "count_window.py", tmp_path)
    done = runner("--store", "count_window.py:CountWindowStore", "--window-sizes", "3", "-k",
                  "stateful or fresh_session", cwd=tmp_path, env={"PYTHONDONTWRITEBYTECODE": ""})
    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["count_window.py", "memory-reports"]
    assert sorted(p.name for p in (tmp_path / "memory-reports").iterdir()) == [
        "junit.xml", "report.html", "summary.json", "summary.md"]


def test_an_early_stop_leaves_no_stale_report_and_outputs_name_what_exists(tmp_path):
    (tmp_path / "r").mkdir()
    (tmp_path / "r/report.html").write_text("an earlier run's report")
    done = runner(cwd=tmp_path, env=action_environment(tmp_path, store=COUNT_STORE, window_sizes="0", report_dir="r"))
    assert done.returncode == 2
    assert sorted(p.name for p in (tmp_path / "r").iterdir()) == ["junit.xml", "summary.json", "summary.md"]
    outputs = read_outputs(tmp_path / "output")
    assert outputs["junit-path"] == "r/junit.xml" and outputs["html-path"] == ""


def test_in_an_action_junit_cases_point_where_the_annotations_do(tmp_path):
    """Relative to the workspace (the repository root), also from a working-directory below it."""
    (tmp_path / "svc/app").mkdir(parents=True)
    (tmp_path / "svc/app/memory.py").write_text((ROOT / "examples/stores/count_window.py").read_text())
    env = action_environment(tmp_path, store="app/memory.py:CountWindowStore", working_directory="svc",
                             pytest_args="-k fresh_session")
    done = runner(cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    case = next(ET.parse(tmp_path / "svc/memory-reports/junit.xml").getroot().iter("testcase"))
    assert (case.get("file"), case.get("line")) == ("svc/app/memory.py", "10")
    assert read_outputs(tmp_path / "output")["junit-path"] == "svc/memory-reports/junit.xml"


@pytest.mark.parametrize("spec, error", [
    ("app/memroy.py:Store", "no file app/memroy.py under the working directory"),
    ("app.memroy:Store", "no module 'app.memroy' importable from"),
    ("app/memory.py:Stroe", "app/memory.py has no attribute 'Stroe' (it defines: Store, helper, json)"),
    ("app.memory:Stroe", "app.memory has no attribute 'Stroe' (it defines: Store, helper, json)"),
])
def test_a_mistyped_store_is_a_usage_error_before_anything_starts(tmp_path, spec, error):
    """The store's file, module and name are checked from its source, running none of it, before a
    Redis server or a worker starts: the package's __init__ below would say so if it ran."""
    (tmp_path / "app").mkdir()
    (tmp_path / "app/__init__.py").write_text("raise SystemExit('the package was imported')\n")
    (tmp_path / "app/memory.py").write_text("import json\nclass Store:\n    pass\ndef helper():\n    pass\n")
    started = time.monotonic()
    done = runner("--store", spec, cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert error in done.stderr, done.stderr
    assert "imported" not in done.stdout + done.stderr and "redis:" not in done.stdout
    assert time.monotonic() - started < 10   # an interpreter's start and the check; no server, no worker


def test_a_store_file_missing_in_the_image_says_to_mount_it(tmp_path):
    done = runner("--store", "app/memory.py:Store", cwd=tmp_path, env={"MEMORY_REGRESSION_IN_IMAGE": "1"})
    assert done.returncode == 2
    assert f'inside the image the store\'s files come from a mounted directory: run docker run -v "$PWD:{tmp_path}"' \
        in done.stderr, done.stderr


def test_a_token_counter_is_tried_before_the_run(tmp_path):
    """A counter that returns no whole number of tokens of at least 0, or raises, is a usage error
    before any scenario runs, not a correct store failing on its counts: end to end for one."""
    (tmp_path / "counters.py").write_text(COUNTERS)
    store = ROOT / "examples" / "stores" / "token_window.py"
    done = runner("--store", f"{store}:TokenWindowStore", "--token-counter", "counters.py:floats",
                  "--report-dir", str(tmp_path / "reports"), cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"--token-counter 'counters.py:floats' {COUNTER_FAULTS['floats']}" in done.stderr, done.stderr
    assert json.loads((tmp_path / "reports" / "summary.json").read_text())["totals"]["total"] == 0


@pytest.mark.parametrize("args, said", [
    (["--basetemp", "{outside}"], "pytest's --basetemp '{outside}' would write outside the report directory "
                                  "{reports} (pytest empties the directory a --basetemp names)"),
    (["--debug"], "pytest's --debug 'pytestdebug.log' would write outside the report directory {reports}"),
    (["--debug={outside}/debug.log"], "pytest's --debug '{outside}/debug.log' would write outside"),
])
def test_pytest_arguments_that_write_outside_the_report_directory_are_refused(tmp_path, args, said):
    """pytest empties the directory --basetemp names and --debug writes a log where it is told: after
    --, either is a usage error unless it points under the report directory, and nothing is touched."""
    outside = tmp_path / "precious"
    outside.mkdir()
    (outside / "keep.txt").write_text("mine")
    reports = tmp_path / "reports"
    store = ROOT / "examples" / "stores" / "count_window.py"
    done = runner("--store", f"{store}:CountWindowStore", "--report-dir", str(reports), "--groups", "core", "--",
                  *[arg.format(outside=outside) for arg in args], cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert said.format(outside=outside, reports=reports) in done.stderr, done.stderr
    assert (outside / "keep.txt").read_text() == "mine" and not (tmp_path / "pytestdebug.log").exists()
    inside = runner("--store", f"{store}:CountWindowStore", "--report-dir", str(reports), "--groups", "core", "--",
                    "--basetemp", str(reports / "tmp"), cwd=tmp_path)
    assert inside.returncode == 0, inside.stdout + inside.stderr
