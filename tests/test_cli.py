"""The runner's manners on the command line: help, version, errors on stderr, suggestions for a
mistyped flag, colour only when wanted, --list, requirements, inputs named in an action, and
files written only where asked."""

import json
import os
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

import pytest

import memory_regression
from memory_regression.cli import pip_arguments
from memory_regression.contract import UsageError
from memory_regression.groups import ALL, describe_groups, known_groups, parse_groups
from memory_regression.profiles import BUILTIN_PROFILES, resolve_counter
from memory_regression.settings import Settings, parse_latency_budget, parse_window_policy
from tests.conftest import ENTRYPOINT, ROOT, read_outputs

COUNT_STORE = str(ROOT / "examples/stores/count_window.py") + ":CountWindowStore"
ONE_SCENARIO = ("-k", "test_fresh_session_is_empty")


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
    assert version("llm-memory-regression") == memory_regression.__version__


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
    assert "scenarios: 27 would run, 13 would be skipped" in lines
    assert "  run   test_count_window.py::test_count_window_keeps_last_n[N=3]" in lines
    assert ("  skip  test_token_window.py::test_token_window_keeps_maximal_suffix[small-4k]: store lacks "
            "token-window: its factory takes no max_tokens (or token_limit, max_token_limit)") in lines
    assert list(tmp_path.iterdir()) == []


def test_list_of_a_store_that_cannot_be_imported(tmp_path):
    (tmp_path / "exits.py").write_text("import os\nos._exit(0)\nclass Store:\n    pass\n")
    done = runner("--list", "--store", "exits.py:Store", cwd=tmp_path)
    assert done.returncode == 2
    assert "the store ended the process with status 0 while it was being imported" in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["exits.py"]


def test_a_missing_requirements_file_is_no_package_name(tmp_path):
    done = runner("--report-dir", str(tmp_path / "r"), "--store", COUNT_STORE,
                  "--requirements", "requirements-missing.txt", cwd=tmp_path)
    assert done.returncode == 2
    assert "--requirements 'requirements-missing.txt': no such file in" in done.stderr
    assert "installing requirements" not in done.stdout + done.stderr, "pip was asked for a package by that name"


def test_pip_arguments_only_in_an_explicit_form(tmp_path):
    (tmp_path / "requirements.txt").write_text("redis\n")
    assert pip_arguments("requirements.txt", tmp_path) == ["-r", "requirements.txt"]
    assert pip_arguments("pip: langchain-core==0.3 'redis>=5'", tmp_path) == ["langchain-core==0.3", "redis>=5"]
    assert pip_arguments("--no-index --find-links wheels tinydep", tmp_path) == [
        "--no-index", "--find-links", "wheels", "tinydep"]
    with pytest.raises(UsageError, match="no such file"):
        pip_arguments("langchain-core", tmp_path)


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


@pytest.mark.parametrize("spec, said", [
    ("start-on-usr", "--window-policy 'start-on-usr': unknown policy 'start-on-usr'; the known ones are suffix, "
                     "start-on-user, keep-system (example: --window-policy start-on-user,keep-system)"),
    ("keep-system,", "--window-policy 'keep-system,': unknown policy ''; the known ones are suffix, start-on-user, "
                     "keep-system (example: --window-policy start-on-user,keep-system)"),
    ("keep-system,keep-system", "--window-policy 'keep-system,keep-system': keep-system is given twice"),
])
def test_window_policy_errors_say_what_to_fix(spec, said):
    with pytest.raises(UsageError) as caught:
        parse_window_policy(spec)
    assert str(caught.value) == said


def test_window_policy_reaches_the_workers_settings(tmp_path):
    """Rules in any order, spaces allowed, named in one order; the workers rebuild it from ``values``."""
    settings = Settings.from_mapping({"store": "x.py:S", "window_policy": " keep-system, start-on-user"}, tmp_path)
    assert str(settings.window_policy) == "start-on-user,keep-system"
    assert Settings.from_mapping(settings.values, tmp_path).window_policy == settings.window_policy
    assert str(Settings.from_mapping({"store": "x.py:S"}, tmp_path).window_policy) == "suffix"


def test_in_an_action_suffix_with_a_rule_is_an_error_naming_the_input(tmp_path):
    env = action_environment(tmp_path, store=COUNT_STORE, window_policy="suffix,start-on-user", report_dir="r")
    done = runner(cwd=tmp_path, env=env)
    assert done.returncode == 2
    assert json.loads((tmp_path / "r/summary.json").read_text())["message"] == (
        "input window-policy 'suffix,start-on-user': suffix is the policy without rules and combines with none: "
        "give it alone, or the rules alone (example: input window-policy start-on-user,keep-system)")


BUDGET_EXAMPLE = "(example: --latency-budget-ms append=5,load=10)"


@pytest.mark.parametrize("spec, said", [
    ("append5", f"'append5' is not operation=milliseconds {BUDGET_EXAMPLE}"),
    ("save=5", f"unknown operation 'save'; the operations are append, load {BUDGET_EXAMPLE}"),
    ("append=5,append=3", "append is given twice"),
    ("load=fast", f"load='fast' is not a number of milliseconds above 0 {BUDGET_EXAMPLE}"),
    ("append=0", f"append='0' is not a number of milliseconds above 0 {BUDGET_EXAMPLE}"),
    ("append=inf", f"append='inf' is not a number of milliseconds above 0 {BUDGET_EXAMPLE}"),
    ("append=5,", f"'' is not operation=milliseconds {BUDGET_EXAMPLE}"),
])
def test_latency_budget_errors_say_what_to_fix(spec, said):
    with pytest.raises(UsageError) as caught:
        parse_latency_budget(spec)
    assert str(caught.value) == f"--latency-budget-ms {spec!r}: {said}"


def test_latency_budget_reaches_the_workers_settings(tmp_path):
    settings = Settings.from_mapping({"store": "x.py:S", "latency_budget_ms": " load = 10 , append=2.5"}, tmp_path)
    assert settings.latency_budget_ms == {"load": 10.0, "append": 2.5}
    assert Settings.from_mapping(settings.values, tmp_path).latency_budget_ms == settings.latency_budget_ms
    assert Settings.from_mapping({"store": "x.py:S"}, tmp_path).latency_budget_ms == {}
    assert Settings.from_mapping({"store": "x.py:S", "latency_budget_ms": ""}, tmp_path).latency_budget_ms == {}


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


def test_groups_name_left_out_and_chosen_ones():
    every = known_groups()
    assert {"core", "count-window", "concurrency", "faults", "stateful"} <= set(every)
    assert parse_groups("all") == every
    assert parse_groups("default,-concurrency") == tuple(g for g in parse_groups("default") if g != "concurrency")
    assert parse_groups("-concurrency") == parse_groups("default,-concurrency")   # leaving out starts from default
    assert parse_groups(" ttl , core") == ("core", "ttl")                          # in the suite's order
    assert parse_groups("all,-core,core") == every                                 # the last word on a group wins
    assert describe_groups(every) == ALL
    assert describe_groups(("core", "ttl")) == (
        f"core, ttl (left out: {', '.join(g for g in every if g not in ('core', 'ttl'))})")


@pytest.mark.parametrize("spec, said", [
    ("cores", "there is no group 'cores'; the groups are compaction, concurrency, consistency, core, "),
    ("core,", "'' is not a group or a set of them (example: --groups default,-concurrency"),
    ("-all", "'-all' is not a group or a set of them"),
    ("core,-core", "leaves no group to run"),
])
def test_group_errors_say_what_to_fix(spec, said):
    with pytest.raises(UsageError) as caught:
        parse_groups(spec)
    assert str(caught.value).startswith(f"--groups {spec!r}: {said}") or (
        said in str(caught.value) and str(caught.value).startswith(f"--groups {spec!r}")), str(caught.value)


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


COUNTERS = """
def floats(content):
    return len(content) / 4

def negative(content):
    return -1

def text(content):
    return "12"

def raises(content):
    raise ValueError("no model")
"""


COUNTER_FAULTS = {
    "floats": "returned 6.25 for 'Hello, how are you today?': it must return the message's cost as a whole number",
    "negative": "returned -1 for", "text": "returned '12' for",
    "raises": "raised on 'Hello, how are you today?': ValueError: no model"}


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


@pytest.mark.parametrize("name", sorted(COUNTER_FAULTS))
def test_each_way_a_token_counter_fails_is_said(tmp_path, name):
    (tmp_path / "counters.py").write_text(COUNTERS)
    with pytest.raises(UsageError) as raised:
        resolve_counter(BUILTIN_PROFILES["small-4k"], f"counters.py:{name}", tmp_path)
    assert f"--token-counter 'counters.py:{name}' {COUNTER_FAULTS[name]}" in str(raised.value)


def test_window_sizes_and_budgets_are_bounded(tmp_path):
    with pytest.raises(UsageError, match="999,999,999 is over the largest window the suite runs, 10,000"):
        Settings.from_mapping({"store": "x.py:S", "window_sizes": "5,999999999"}, tmp_path)
    (tmp_path / "huge.yaml").write_text("profiles:\n  - name: huge\n"
                                        "    context_tokens: 1000000000000000000000000000000\n")
    with pytest.raises(UsageError, match="context_tokens is 1,000,000,000,000,000,000,000,000,000,000, over the "
                                         "largest the suite runs, 2,000,000 tokens"):
        Settings.from_mapping({"store": "x.py:S", "model_profiles": "huge.yaml"}, tmp_path)


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
