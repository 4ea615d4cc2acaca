"""A store bound in one try and kept with the project: --list says every fix of a store written as a new
user would (a sorted set, its own token budget, TTL and method names), and prints the
[tool.memory-regression] table to paste; with that table in pyproject.toml, memory-regression runs with
no flags, in a terminal and as the action with no ``with:``; a flag or an input wins over the table, and
a key the tool does not know is a usage error with its reports."""

import json
import re
import shutil

from tests.conftest import ROOT
from tests.end_to_end.test_cli import action_environment, runner

GROUPS = ("--groups", "core,ttl,token-window,hygiene", "--window-sizes", "5", "--model-profiles", "small-4k")


def project(tmp_path):
    shutil.copy(ROOT / "tests/stores/new_user.py", tmp_path / "memory.py")
    return tmp_path


def test_one_list_says_every_fix_and_the_pasted_table_runs_with_no_flags(tmp_path):
    project(tmp_path)
    listed = runner("--list", "--store", "memory.py:ConversationMemory", *GROUPS, cwd=tmp_path)
    assert listed.returncode == 2, listed.stdout + listed.stderr
    assert "cannot be bound as it is; 2 things to fix" in listed.stderr
    assert ("All at once: --append-method remember --load-method recall --store-params "
            "token_budget=max_tokens,ttl_s=ttl --clear-method forget") in listed.stderr
    table = listed.stdout[listed.stdout.index("[tool.memory-regression]"):]
    assert table.splitlines() == [
        "[tool.memory-regression]", 'store = "memory.py:ConversationMemory"', "window-sizes = [5]",
        'model-profiles = "small-4k"', 'groups = "core,ttl,token-window,hygiene"',
        'store-params = {"token_budget" = "max_tokens", "ttl_s" = "ttl"}', 'append-method = "remember"',
        'load-method = "recall"', 'clear-method = "forget"']
    assert sorted(p.name for p in tmp_path.iterdir()) == ["memory.py"], "--list wrote a file"

    (tmp_path / "pyproject.toml").write_text('[project]\nname = "app"\n\n' + table)
    done = runner(cwd=tmp_path)
    summary = json.loads((tmp_path / "memory-reports" / "summary.json").read_text())
    assert done.returncode == 0 and summary["status"] == "passed", done.stdout[-3000:] + done.stderr
    assert {"clear", "token-window", "ttl", "namespace"} <= set(summary["capabilities"]), summary["capabilities"]
    assert summary["proposals"] == [] and summary["fixes"] == {}

    relisted = runner("--list", cwd=tmp_path)   # bound as its names say: nothing more to propose
    assert relisted.returncode == 0, relisted.stderr
    assert relisted.stdout.endswith(table.rstrip("\n") + "\n") and "fixes above" not in relisted.stdout


def test_flags_and_inputs_win_over_the_table_and_the_action_needs_no_with(tmp_path):
    project(tmp_path)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.memory-regression]\nstore = "memory.py:ConversationMemory"\nappend-method = "remember"\n'
        'load-method = "recall"\ngroups = "core"\nwindow-sizes = [5]\n'
        'store-params = {token_budget = "max_tokens", ttl_s = "ttl"}\n')
    as_action = runner(cwd=tmp_path, env=action_environment(tmp_path))   # a workflow's uses: with no with:
    summary = json.loads((tmp_path / "memory-reports" / "summary.json").read_text())
    assert as_action.returncode == 0 and summary["groups"] == ["core"], as_action.stdout[-2000:] + as_action.stderr
    outputs = (tmp_path / "output").read_text()
    assert re.search(r"^passed<<", outputs, re.M) and summary["store"] == "memory.py:ConversationMemory"

    flagged = runner("--groups", "ttl", "--report-dir", "by-flag", cwd=tmp_path)
    assert json.loads((tmp_path / "by-flag" / "summary.json").read_text())["groups"] == ["ttl"], flagged.stderr
    by_input = runner(cwd=tmp_path, env=action_environment(tmp_path, groups="hygiene", report_dir="by-input"))
    assert json.loads((tmp_path / "by-input" / "summary.json").read_text())["groups"] == ["hygiene"], by_input.stderr


def test_a_key_the_tool_does_not_know_is_a_usage_error_with_its_reports(tmp_path):
    project(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.memory-regression]\nstore = "memory.py:ConversationMemory"\n'
                                             'window-size = [5]\n')
    done = runner(cwd=tmp_path)
    assert done.returncode == 2
    assert "[tool.memory-regression]: unknown key 'window-size'; did you mean window-sizes?" in done.stderr
    summary = json.loads((tmp_path / "memory-reports" / "summary.json").read_text())
    assert summary["status"] == "usage error" and "unknown key 'window-size'" in summary["message"]
    assert "Traceback" not in done.stdout + done.stderr
