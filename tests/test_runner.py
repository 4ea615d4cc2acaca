"""The runner's contract: exit statuses, bad input, the Redis choices, and well-formed reports."""

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time

import pytest
from junitparser import JUnitXml
from junitparser.xunit2 import JUnitXml as JUnitXml2

from memory_regression.backend import find_server_binary, start_private_server
from tests.conftest import ENTRYPOINT, ROOT

GOOD = "tests.stores.correct:ListStore"
ONE_SCENARIO = ("-k", "test_fresh_session_is_empty")


def assert_usage_error(result, *phrases):
    assert result.exit_code == 2, result.output
    for phrase in phrases:
        assert phrase in result.output, result.output
    assert "memory_regression/" not in result.output, "a traceback of ours reached the user"
    assert_error_reports(result)


def assert_error_reports(result):
    """Every report but the HTML one is written even when the run stops before any scenario."""
    summary = result.summary
    assert summary["exit_code"] == result.exit_code
    assert summary["message"]
    assert (result.report_dir / "summary.md").read_text(encoding="utf-8").startswith("## Memory regression")
    xml = JUnitXml.fromfile(str(result.report_dir / "junit.xml"))
    cases = [case for suite in xml for case in suite]
    assert len(cases) == 1 and cases[0].result, "junit.xml should hold one errored case"


@pytest.fixture(scope="module")
def external_server():
    backend = start_private_server(find_server_binary())
    yield backend
    backend.stop()


def test_missing_store_file(run_suite):
    assert_usage_error(run_suite("--store", "app/nowhere.py:Store"), "no file app/nowhere.py")


def test_missing_store_option(run_suite):
    assert_usage_error(run_suite(), "no store given")


def test_store_name_missing_from_module(run_suite):
    assert_usage_error(run_suite("--store", "tests.stores.correct:Nope"), "has no attribute 'Nope'",
                       "ListStore")


def test_store_import_failure_shows_the_users_traceback(run_suite, tmp_path):
    (tmp_path / "broken_import.py").write_text(textwrap.dedent("""\
        import json

        def helper():
            raise RuntimeError("config missing: OPENAI_API_KEY")

        helper()

        class Store:
            pass
        """))
    result = run_suite("--store", "broken_import.py:Store", cwd=tmp_path)
    assert_usage_error(result, "importing it failed", "broken_import.py", "line 4, in helper",
                       "RuntimeError: config missing: OPENAI_API_KEY")


def test_required_parameter_outside_the_contract(run_suite):
    assert_usage_error(run_suite("--store", "tests.stores.shapes:NeedsLlm"),
                       "requires a parameter 'llm'", "max_messages", "redis_url")


def test_load_method_that_needs_more_arguments(run_suite):
    assert_usage_error(run_suite("--store", "tests.stores.shapes:LoadNeedsUser"), "cannot be called as get(session_id)")


def test_store_without_the_named_methods(run_suite):
    assert_usage_error(run_suite("--store", "tests.stores.shapes:OwnMethodNames"), "no append method",
                       "--append-method")


def test_method_overrides(run_suite):
    result = run_suite("--store", "tests.stores.shapes:OwnMethodNames", "--append-method", "remember",
                       "--load-method", "recall", *ONE_SCENARIO)
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("sizes", ["5,x", "0", "5,5", ""])
def test_bad_window_sizes(run_suite, sizes):
    assert_usage_error(run_suite("--store", GOOD, "--window-sizes", sizes), "--window-sizes")


def test_unknown_profile(run_suite):
    assert_usage_error(run_suite("--store", GOOD, "--model-profiles", "gpt-9"), "unknown profile gpt-9",
                       "small-4k")


@pytest.mark.parametrize("content, phrase", [
    ("profiles: [name: x\n", "not valid YAML"),
    ("models: []\n", "expected a top-level 'profiles:' list"),
    ("profiles:\n  - name: x\n    context_tokens: lots\n", "context_tokens must be a whole number"),
    ("profiles:\n  - name: x\n    context_tokens: 100\n    reserved_output_tokens: 100\n",
     "must exceed reserved_output_tokens"),
])
def test_bad_profile_yaml(run_suite, tmp_path, content, phrase):
    (tmp_path / "profiles.yaml").write_text(content)
    assert_usage_error(run_suite("--store", GOOD, "--model-profiles", str(tmp_path / "profiles.yaml")), phrase)


def test_profiles_from_yaml(run_suite, tmp_path):
    (tmp_path / "profiles.yaml").write_text(textwrap.dedent("""\
        profiles:
          - name: tiny-model
            context_tokens: 600
            reserved_output_tokens: 100
            per_message_overhead: 2
            tokenizer: words
        """))
    result = run_suite("--store", "tests.stores.correct:TokenStore", "--model-profiles",
                       str(tmp_path / "profiles.yaml"), "-k", "token_window")
    assert result.exit_code == 0, result.output
    assert [p["name"] for p in result.summary["profiles"]] == ["tiny-model"]
    assert result.summary["profiles"][0]["max_tokens"] == 500
    assert "test_token_window_keeps_maximal_suffix[tiny-model] PASSED" in result.output


def test_bad_scenario_timeout(run_suite):
    assert_usage_error(run_suite("--store", GOOD, "--scenario-timeout", "soon"), "--scenario-timeout")


def test_unknown_pytest_argument_still_writes_reports(run_suite):
    result = run_suite("--store", GOOD, "--", "--no-such-pytest-flag")
    assert result.exit_code == 2, result.output
    assert_error_reports(result)


def test_selection_that_matches_nothing(run_suite):
    result = run_suite("--store", GOOD, "-k", "no_scenario_is_called_this")
    assert result.exit_code == 2, result.output
    assert "no scenario was selected" in result.summary["message"]


def test_unreachable_redis_url(run_suite):
    import socket
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    result = run_suite("--store", GOOD, "--redis", f"redis://127.0.0.1:{port}/0")
    assert result.exit_code == 3, result.output
    assert "cannot reach the server" in result.output
    assert_error_reports(result)


def test_server_choice_without_a_binary(run_suite):
    result = run_suite("--store", GOOD, "--redis", "server", env={"PATH": "/nonexistent"})
    assert result.exit_code == 3, result.output
    assert "no redis-server or valkey-server on PATH" in result.output
    assert_error_reports(result)


def test_auto_falls_back_to_fakeredis_with_a_warning(run_suite):
    result = run_suite("--store", GOOD, env={"PATH": "/nonexistent"})
    assert result.exit_code == 0, result.output
    summary = result.summary
    assert "fakeredis" in summary["backend"]
    assert "used fakeredis" in summary["backend_warning"]
    assert "used fakeredis" in (result.report_dir / "summary.md").read_text(encoding="utf-8")
    assert "used fakeredis" in (result.report_dir / "report.html").read_text(encoding="utf-8")
    assert "WARNING: no redis-server" in result.output


def test_fakeredis_by_choice_has_no_warning(run_suite):
    result = run_suite("--store", GOOD, "--redis", "fakeredis", *ONE_SCENARIO)
    assert result.exit_code == 0, result.output
    assert result.summary["backend_warning"] is None


def test_external_server_must_start_empty(run_suite, external_server):
    external_server.admin.set("someone-elses-key", "keep me")
    try:
        result = run_suite("--store", GOOD, "--redis", external_server.url)
        assert_usage_error(result, "holds 1 keys", "--allow-flush")
        assert external_server.admin.get("someone-elses-key") == "keep me"
        result = run_suite("--store", GOOD, "--redis", external_server.url, "--allow-flush", *ONE_SCENARIO)
        assert result.exit_code == 0, result.output
        assert "external server" in result.summary["backend"]
    finally:
        external_server.flush()


def test_external_server_on_an_empty_database(run_suite, external_server):
    result = run_suite("--store", GOOD, "--redis", external_server.url.replace("/0", "/7"), *ONE_SCENARIO)
    assert result.exit_code == 0, result.output


def test_crashing_store_is_a_finding(run_suite):
    result = run_suite("--store", "tests.stores.shapes:Crashes", *ONE_SCENARIO, "-k", "round_trip")
    assert result.exit_code == 1, result.output
    failure = result.summary["failures"][0]
    assert failure["message"] == "the store raised ValueError: backend exploded while appending"


def test_hanging_store_is_cut_off(run_suite):
    started = time.monotonic()
    result = run_suite("--store", "tests.stores.shapes:Hangs", "--scenario-timeout", "1", "-k", "round_trip")
    assert result.exit_code == 1, result.output
    assert time.monotonic() - started < 60
    assert "cut off by the scenario timeout" in result.summary["failures"][0]["message"]


@pytest.mark.parametrize("spec, level", [
    ("tests.stores.shapes:make_store", "core+count-window+clear"),
    ("tests.stores.shapes:make_store_from_kwargs", "core+clear"),
    ("tests.stores.shapes:LangChainStyle", "core+count-window+ttl+namespace+clear"),
])
def test_other_shapes_plug_in(run_suite, spec, level):
    result = run_suite("--store", spec)
    assert result.exit_code == 0, result.output
    assert result.summary["conformance_level"] == level


def test_junit_has_properties_per_case(run_suite):
    result = run_suite("--store", "tests.stores.broken:OffByOneTrim")
    assert result.exit_code == 1
    xml = JUnitXml2.fromfile(str(result.report_dir / "junit.xml"))
    cases = [case for suite in xml for case in suite]
    totals = result.summary["totals"]
    assert len(cases) == totals["total"]
    by_name = {}
    for case in cases:
        props = {p.name: p.value for p in case.properties()}
        assert set(props) == {"scenario", "group", "capability", "window", "profile", "backend"}
        assert props["backend"].startswith(("redis ", "valkey "))
        by_name[case.name] = (props, case.result)
    props, outcome = by_name["test_count_window_keeps_last_n[N=5]"]
    assert props["window"] == "5" and props["capability"] == "count-window" and props["group"] == "count-window"
    assert outcome and "kept 6 messages, expected 5" in outcome[0].message
    props, outcome = by_name["test_token_window_keeps_maximal_suffix[small-4k]"]
    assert props["profile"] == "small-4k" and outcome and outcome[0]._tag == "skipped"
    assert sum(1 for _n, (_p, r) in by_name.items() if r and r[0]._tag == "failure") == totals["failed"]


def test_summary_files_agree(run_suite):
    result = run_suite("--store", "tests.stores.broken:OffByOneTrim")
    summary = result.summary
    markdown = (result.report_dir / "summary.md").read_text(encoding="utf-8")
    assert summary["status"] == "failed" and summary["exit_code"] == 1
    assert summary["conformance_level"] == "core+ttl+namespace+clear"
    assert "Conformance level: **core+ttl+namespace+clear**" in markdown
    assert "kept 6 messages, expected 5" in markdown
    assert summary["matrix"]["columns"][:3] == ["—", "N=5", "N=20"]
    row = next(r for r in summary["matrix"]["rows"] if r["scenario"] == "test_count_window_keeps_last_n")
    assert row["cells"] == {"N=5": "failed", "N=20": "failed"}


@pytest.mark.parametrize("where", [["suite"], ["--pyargs", "memory_regression.suite"]])
def test_plain_pytest_runs_the_suite(tmp_path, where):
    done = subprocess.run([sys.executable, "-m", "pytest", *where, "--store", GOOD, "--report-dir",
                           str(tmp_path), "-q", *ONE_SCENARIO], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "summary.json").is_file() and (tmp_path / "report.html").is_file()


def test_interrupt_stops_the_private_server(tmp_path):
    process = subprocess.Popen(
        [sys.executable, str(ENTRYPOINT), "--store", "tests.stores.shapes:Hangs", "--report-dir",
         str(tmp_path), "-k", "round_trip"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    pid = None
    deadline = time.monotonic() + 60
    for line in process.stdout:
        if "private server" in line and pid is None:
            pid = int(line.rsplit("pid ", 1)[1].rstrip(")\n"))
        if "selected" in line or time.monotonic() > deadline:  # collection is over: the scenario runs
            break
    assert pid, "the run never named its server"
    time.sleep(1.0)
    process.send_signal(signal.SIGINT)
    output = process.communicate(timeout=60)[0]
    assert process.returncode == 130, output
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert json.loads((tmp_path / "summary.json").read_text())["status"] == "interrupted"


def test_a_broken_suite_installation_is_reported(tmp_path):
    """A scenario module that cannot be imported is a configuration error, not an interruption."""
    shutil.copytree(ROOT / "suite", tmp_path / "suite")
    with open(tmp_path / "suite" / "test_ttl.py", "a", encoding="utf-8") as handle:
        handle.write("import a_module_nobody_installed\n")
    script = ("import sys, pathlib; import memory_regression.cli as cli; "
              f"cli.suite_directory = lambda: pathlib.Path({str(tmp_path / 'suite')!r}); "
              f"sys.exit(cli.main(['--store', {GOOD!r}, '--report-dir', {str(tmp_path / 'reports')!r}]))")
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    summary = json.loads((tmp_path / "reports" / "summary.json").read_text())
    assert summary["status"] == "suite error"
    assert "a_module_nobody_installed" in summary["message"]


def test_plain_pytest_without_a_store_says_so():
    done = subprocess.run([sys.executable, "-m", "pytest", "suite", "-q"], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == pytest.ExitCode.USAGE_ERROR, done.stdout + done.stderr
    assert "give --store" in done.stderr
