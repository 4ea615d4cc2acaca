"""The runner's contract: exit statuses, bad input, the Redis choices, and well-formed reports."""

import contextlib
import json
import os
import resource
import shutil
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET

import pytest
from junitparser import JUnitXml
from junitparser.xunit2 import JUnitXml as JUnitXml2

from memory_regression.contract import UsageError
from memory_regression.settings import Settings
from tests.conftest import ROOT, RedisServer

GOOD = "tests.stores.correct:ListStore"
ONE_SCENARIO = ("-k", "test_fresh_session_is_empty")
ALL_WINDOWED = "core+count-window+ttl+namespace+clear+bounded-storage+steady-appends+atomic-window"


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
    server = RedisServer()
    yield server
    server.stop()


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


def settings_error(tmp_path, **values):
    """The usage error Settings.from_mapping raises for ``values`` (the runner's checks of its options,
    made before anything starts), as the runner prints it."""
    with pytest.raises(UsageError) as raised:
        Settings.from_mapping({"store": GOOD, **values}, tmp_path)
    return str(raised.value)


def test_a_bad_option_is_a_usage_error_with_reports_and_no_traceback(run_suite):
    """One bad value end to end: exit 2, the message on the way out, every report but the HTML one
    written, no traceback of ours. The values' own checks are the unit tests below."""
    assert_usage_error(run_suite("--store", GOOD, "--model-profiles", "gpt-9"), "unknown profile gpt-9",
                       "small-4k")


@pytest.mark.parametrize("sizes", ["5,x", "0", "5,5", "", "²", "5,1e3"])
def test_bad_window_sizes(tmp_path, sizes):
    assert "--window-sizes" in settings_error(tmp_path, window_sizes=sizes)


def test_unknown_profile(tmp_path):
    message = settings_error(tmp_path, model_profiles="gpt-9")
    assert "unknown profile gpt-9" in message and "small-4k" in message


@pytest.mark.parametrize("content, phrase", [
    ("profiles: [name: x\n", "not valid YAML"),
    ("models: []\n", "expected a top-level 'profiles:' list"),
    ("profiles:\n  - name: x\n    context_tokens: lots\n", "context_tokens must be a whole number"),
    ("profiles:\n  - name: x\n    context_tokens: 100\n    reserved_output_tokens: 100\n",
     "must exceed reserved_output_tokens"),
])
def test_bad_profile_yaml(tmp_path, content, phrase):
    (tmp_path / "profiles.yaml").write_text(content)
    assert phrase in settings_error(tmp_path, model_profiles=str(tmp_path / "profiles.yaml"))


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
    assert [(r["nodeid"], r["outcome"]) for r in result.summary["results"]] == [
        ("test_token_window.py::test_token_window_keeps_maximal_suffix[tiny-model]", "passed")]


@pytest.mark.parametrize("flag, timeout", [
    *(("--scenario-timeout", timeout) for timeout in ("soon", "inf", "nan", "0", "-5", "1e400")),
    ("--call-timeout", "soon"), ("--call-timeout", "0"), ("--consistency-timeout", "soon"),
    ("--consistency-timeout", "-1")])
def test_bad_timeout(tmp_path, flag, timeout):
    message = settings_error(tmp_path, **{flag.removeprefix("--").replace("-", "_"): timeout})
    assert f"{flag} {timeout!r}: give a number of seconds" in message


def test_profiles_file_that_is_not_utf8(tmp_path):
    (tmp_path / "profiles.yaml").write_bytes("profiles:\n  - name: caf\xe9\n".encode("latin-1"))
    message = settings_error(tmp_path, model_profiles=str(tmp_path / "profiles.yaml"))
    assert "is not UTF-8 text" in message and "save it as UTF-8" in message


def test_unknown_tokenizer_in_a_profile(tmp_path):
    (tmp_path / "profiles.yaml").write_text("profiles:\n  - name: x\n    context_tokens: 900\n"
                                            "    tokenizer: gpt5-tokenizer\n")
    message = settings_error(tmp_path, model_profiles=str(tmp_path / "profiles.yaml"))
    assert "unknown tokenizer 'gpt5-tokenizer'" in message and "cl100k_base" in message


def test_unknown_token_counter(tmp_path):
    assert "unknown tokenizer 'letters'" in settings_error(tmp_path, token_counter="letters")


def test_report_dir_that_is_a_file(run_suite, tmp_path):
    (tmp_path / "taken").write_text("not a directory")
    result = run_suite("--store", GOOD, report_dir=tmp_path / "taken", expect_reports=False)
    assert result.exit_code == 2, result.output
    assert "--report-dir" in result.output and "is not a directory" in result.output
    assert (tmp_path / "taken").read_text() == "not a directory"


@contextlib.contextmanager
def tmpfs(mount, options):
    """A tmpfs mounted at ``mount`` for the test's length (a read-only one, a small one); the test is
    skipped where it cannot be mounted (mounting needs root)."""
    mount.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(mount)], capture_output=True).returncode:
        pytest.skip(f"cannot mount a tmpfs with {options} here (needs root)")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=True)


def test_report_dir_on_a_read_only_file_system(run_suite, tmp_path):
    with tmpfs(tmp_path / "read-only", "ro,size=1m") as mount:
        result = run_suite("--store", GOOD, report_dir=mount / "reports", expect_reports=False)
    assert result.exit_code == 2, result.output
    assert "cannot be written: Read-only file system" in result.output


def test_a_full_disk_is_a_report_error_that_keeps_the_verdict(run_suite, tmp_path):
    """The report directory on a file system too small for report.html: pytest-html's write fails
    (ENOSPC). No traceback; the cut report.html is removed; the files that fit say which one is
    missing and why, with the verdict the run reached; exit 2, not the store's pass or failure."""
    with tmpfs(tmp_path / "small", "size=32k") as mount:
        result = run_suite("--store", GOOD, "-k", "round_trip or fresh", report_dir=mount)
        written = sorted(path.name for path in mount.iterdir())
        summary = result.summary
    assert result.exit_code == 2, result.output
    assert written == ["junit.xml", "summary.json", "summary.md"], written
    assert summary["status"] == "report error"
    assert summary["message"].startswith("the reports could not all be written (report.html: No space left on "
                                         "device): free space on that disk"), summary["message"]
    assert "The run itself was passed: 3 passed, 0 failed, 1 skipped" in summary["message"]
    assert summary["totals"]["passed"] == 3
    assert "memory-regression: report error: the reports could not all be written" in result.output


def test_a_file_size_limit_on_junit_is_named_and_the_files_that_fit_say_so(run_suite, tmp_path):
    """Under a 6 KB file-size limit (a worker's call page takes 4 KB) pytest's own junit.xml of four
    groups is cut short, so pytest-html never runs; both are named, and summary.md, which fits,
    carries the verdict."""
    def small_files():
        resource.setrlimit(resource.RLIMIT_FSIZE, (6144, 6144))
    report_dir = tmp_path / "reports"
    result = run_suite("--store", GOOD, "--groups", "core,ttl,count-window,hygiene", report_dir=report_dir,
                       preexec_fn=small_files, expect_reports=False)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and "INTERNALERROR" not in result.output, result.output
    assert sorted(path.name for path in report_dir.iterdir()) == ["summary.md"]
    markdown = (report_dir / "summary.md").read_text(encoding="utf-8")
    assert markdown.startswith("## Memory regression: report error")
    assert ("the reports could not all be written (junit.xml: File too large; report.html: not written, as "
            "junit.xml failed before it; summary.json: File too large)") in markdown, markdown


def test_a_non_ascii_directory_under_an_ascii_locale(run_suite, tmp_path):
    """LC_ALL=C with PYTHONUTF8=0 decodes paths as ASCII: the runner starts itself again in UTF-8
    mode, so a store in a directory named störe runs and every report names it."""
    directory = tmp_path / "störe"
    directory.mkdir()
    shutil.copy(ROOT / "examples" / "stores" / "count_window.py", directory)
    result = run_suite("--store", "count_window.py:CountWindowStore", "-k", "round_trip", cwd=directory,
                       env={"LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONPATH": str(ROOT)})
    assert result.exit_code == 0, result.output
    assert result.summary["store_file"] == str(directory / "count_window.py")


def test_a_long_temporary_directory_is_no_problem(run_suite, tmp_path):
    """The runner's channel from its workers is a Unix socket in its scratch directory, under TMPDIR;
    a path past a socket's 107 bytes goes to Linux's abstract namespace instead of crashing."""
    long_tmp = tmp_path / ("a-temporary-directory-with-a-long-name-" * 3)
    long_tmp.mkdir()
    result = run_suite("--store", GOOD, "--groups", "core", env={"TMPDIR": str(long_tmp)})
    assert result.exit_code == 0, result.output
    assert result.summary["totals"]["passed"] == result.summary["totals"]["total"] > 0


def test_collect_only_is_not_a_pass(run_suite):
    result = run_suite("--store", GOOD, "--", "--collect-only")
    assert result.exit_code == 2, result.output
    assert result.summary["status"] == "not run"
    assert "51 scenarios were collected and none was run" in result.summary["message"]


def test_only_skipped_scenarios_are_not_a_pass(run_suite):
    result = run_suite("--store", GOOD, "-k", "token_window")
    assert result.exit_code == 2, result.output
    assert result.summary["status"] == "not run" and result.summary["totals"]["skipped"] == 4


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
    external_server.client().set("someone-elses-key", "keep me")
    try:
        result = run_suite("--store", GOOD, "--redis", external_server.url())
        assert_usage_error(result, "holds 1 keys", "--allow-flush")
        assert external_server.client().get("someone-elses-key") == "keep me"
        result = run_suite("--store", GOOD, "--redis", external_server.url(), "--allow-flush", *ONE_SCENARIO)
        assert result.exit_code == 0, result.output
        assert "external server" in result.summary["backend"]
    finally:
        external_server.client().flushdb()


def test_external_server_on_an_empty_database_is_left_empty(run_suite, external_server):
    """Scenarios that write leave nothing behind in an external database: the next run on it needs no
    --allow-flush."""
    for _ in range(2):
        result = run_suite("--store", GOOD, "--redis", external_server.url(7), "-k", "round_trip or fresh")
        assert result.exit_code == 0, result.output
        assert result.summary["totals"]["passed"] >= 2
        assert external_server.client(7).dbsize() == 0


OWN_SERVER_SCENARIOS = {"test_append_raises_when_memory_is_full", "test_eviction_leaves_sessions_whole_or_gone",
                        "test_a_restart_between_turns_loses_nothing"}


@pytest.mark.parametrize("where, reason", [
    ("url", "there is no redis-server or valkey-server on PATH"),
    ("fakeredis", "needs a real Redis server"),
])
def test_scenarios_on_a_server_of_their_own_skip_where_none_can_start(run_suite, external_server, where, reason):
    """The memory-pressure and restart scenarios start a redis-server of their own: with a --redis URL on
    a machine without a server binary they are skipped, saying so, and on fakeredis too; the others run."""
    redis = external_server.url() if where == "url" else "fakeredis"
    result = run_suite("--store", GOOD, "--redis", redis, "-k", "memory_pressure or restart or round_trip_keeps",
                       env={"PATH": "/nonexistent"})
    assert result.exit_code == 0, result.output
    skipped = {r["scenario"]: r["message"] for r in result.summary["results"] if r["outcome"] == "skipped"}
    assert set(skipped) == OWN_SERVER_SCENARIOS, result.output
    assert all(reason in message for message in skipped.values()), skipped


def test_external_user_that_may_not_flush(run_suite, external_server):
    client = external_server.client()
    client.execute_command("ACL", "SETUSER", "noflush", "on", ">pw-noflush", "~*", "+@all", "-flushdb")
    result = run_suite("--store", GOOD, "--redis", external_server.url(userinfo="noflush:pw-noflush"))
    assert_usage_error(result, "may not run FLUSHDB")


def test_unknown_capability_in_a_marker_is_a_suite_error(tmp_path):
    done, summary = run_with_edited_suite(tmp_path, "test_ttl.py", lambda text: text.replace(
        '@pytest.mark.requires("ttl")\ndef test_append_refreshes_ttl', '@pytest.mark.requires("tll")\n'
        'def test_append_refreshes_ttl'))
    assert done.returncode == 2, done.stdout + done.stderr
    assert summary["status"] == "suite error"
    assert "@pytest.mark.requires('tll') names no capability" in summary["message"]


def test_crashing_store_is_a_finding(run_suite):
    result = run_suite("--store", "tests.stores.shapes:Crashes", *ONE_SCENARIO, "-k", "round_trip")
    assert result.exit_code == 1, result.output
    failure = result.summary["failures"][0]
    assert failure["message"] == "the store raised ValueError: backend exploded while appending"


@pytest.mark.parametrize("spec", ["tests.stores.shapes:NeedsSearch", "tests.stores.shapes:make_search_store"])
def test_a_store_that_needs_a_redis_module_is_one_configuration_error(run_suite, spec):
    """Not a failure per scenario, and not "Redis went away" while the store is built."""
    result = run_suite("--store", spec)
    assert result.exit_code == 2, result.output
    summary = result.summary
    assert summary["status"] == "usage error"
    assert summary["message"].startswith("the store ran FT._LIST, a command of the RediSearch module, which the "
                                         "Redis server under test lacks: run the suite against a server with "
                                         "RediSearch"), summary["message"]
    assert "--redis redis://HOST:PORT/DB" in summary["message"] and "services:" in summary["message"]
    assert summary["totals"]["failed"] <= 1, "the run went on after the first scenario showed it"


def test_a_store_written_for_bytes_gets_a_hint_naming_the_client_setting(run_suite):
    result = run_suite("--store", "tests.stores.shapes:DecodesBytes", "-k", "round_trip")
    assert result.exit_code == 1, result.output
    assert result.summary["failures"][0]["message"] == (
        "the store raised AttributeError: 'str' object has no attribute 'decode' (the store decodes bytes, but "
        "the suite's redis client is built with decode_responses=True and returns str: decode only bytes, or "
        "build your own client from the redis_url parameter)")


@pytest.mark.parametrize("spec, level", [
    ("tests.stores.shapes:make_store", "core+count-window+clear+bounded-storage+steady-appends+atomic-window"),
    ("tests.stores.shapes:make_store_from_kwargs", "core+clear+bounded-storage+steady-appends"),
    ("tests.stores.shapes:LangChainStyle", ALL_WINDOWED),
    ("tests.stores.shapes:EnumRolesAndTextBlocks", ALL_WINDOWED),
])
def test_other_shapes_plug_in(run_suite, spec, level):
    result = run_suite("--store", spec)
    assert result.exit_code == 0, result.output
    assert result.summary["conformance_level"] == level


# the figures the latency and footprint scenarios add to their cases' properties
FIGURE_PROPERTIES = {
    "test_append_and_load_latency_against_the_redis_floor": {"append_p95_ms", "append_p95_floor_ratio", "load_p95_ms",
                                                             "load_p95_floor_ratio"},
    "test_storage_stays_within_the_window": {"bytes_per_message", "footprint_growth"},
    "test_storage_grows_with_the_messages_kept": {"bytes_per_message", "footprint_growth"}}


def test_junit_has_properties_per_case(run_suite):
    result = run_suite("--store", "tests.stores.broken:OffByOneTrim", "-k", "not stateful")
    assert result.exit_code == 1
    xml = JUnitXml2.fromfile(str(result.report_dir / "junit.xml"))
    cases = [case for suite in xml for case in suite]
    totals = result.summary["totals"]
    assert len(cases) == totals["total"]
    by_name = {}
    warned = {w["nodeid"].partition("::")[2] for w in result.summary["warnings"]}
    for case in cases:
        props = {p.name: p.value for p in case.properties()}
        figures = FIGURE_PROPERTIES.get(case.name.partition("[")[0], set())
        warning = {"warning"} if case.name in warned else set()
        assert set(props) == {"scenario", "group", "capability", "window", "profile", "backend", *figures, *warning}
        assert all(float(props[name]) > 0 for name in figures), props
        assert props["backend"].startswith(("redis ", "valkey "))
        by_name[case.name] = (props, case.result)
    props, outcome = by_name["test_count_window_keeps_last_n[N=5]"]
    assert props["window"] == "5" and props["capability"] == "count-window" and props["group"] == "count-window"
    assert outcome and "kept 6 messages, expected 5" in outcome[0].message
    props, outcome = by_name["test_token_window_keeps_maximal_suffix[small-4k]"]
    assert props["profile"] == "small-4k" and outcome and outcome[0]._tag == "skipped"
    assert sum(1 for _n, (_p, r) in by_name.items() if r and r[0]._tag == "failure") == totals["failed"]


def test_junit_cases_point_at_the_store_and_the_suite_names_the_matrix_point(run_suite):
    """Reporter actions place a case's annotation at its file and line: the store's definition, as
    the action's own annotations do. Merged junit files of a matrix tell its points apart."""
    result = run_suite("--store", "tests.stores.broken:OffByOneTrim", "--window-sizes", "3",
                       "--model-profiles", "small-4k", "-k", "count_window or fresh_session")
    root = ET.parse(result.report_dir / "junit.xml").getroot()
    suites = list(root.iter("testsuite"))
    assert [s.get("name") for s in suites] == [
        "memory-regression (window sizes 3; window policy suffix; profiles small-4k)"]
    line = next(number for number, text in enumerate((ROOT / "tests/stores/broken.py").read_text().splitlines(), 1)
                if text.startswith("class OffByOneTrim"))
    cases = list(root.iter("testcase"))
    assert len(cases) == 2
    assert {(case.get("file"), case.get("line")) for case in cases} == {("tests/stores/broken.py", str(line))}
    assert result.summary["store_line"] == line


def test_summary_files_agree(run_suite):
    result = run_suite("--store", "tests.stores.broken:OffByOneTrim", "-k", "not stateful", workers=None)
    summary = result.summary
    markdown = (result.report_dir / "summary.md").read_text(encoding="utf-8")
    assert summary["status"] == "failed" and summary["exit_code"] == 1
    assert summary["conformance_level"] == "core+ttl+namespace+clear+bounded-storage+steady-appends"
    assert "Conformance level: **core+ttl+namespace+clear+bounded-storage+steady-appends**" in markdown
    assert "kept 6 messages, expected 5" in markdown
    assert summary["matrix"]["columns"][:3] == ["—", "N=5", "N=20"]
    row = next(r for r in summary["matrix"]["rows"] if r["scenario"] == "test_count_window_keeps_last_n")
    assert row["cells"] == {"N=5": "failed", "N=20": "failed"}
    scenarios = summary["capability_scenarios"]
    assert scenarios["count-window"] == ["test_compaction_keeps_the_window", "test_concurrent_writers_keep_the_window",
                                         "test_count_window_keeps_last_n", "test_storage_stays_within_the_window",
                                         "test_window_leaves_no_orphaned_tool_result"]
    assert scenarios["clear"] == ["test_clear_empties_only_that_session", "test_clear_leaves_no_keys"]
    assert "test_round_trip_keeps_role_content_and_order" in scenarios["core"]


@pytest.mark.parametrize("where", [["suite"],
                                   ["-p", "memory_regression.plugin", "--pyargs", "memory_regression.suite"]])
def test_plain_pytest_runs_the_suite(tmp_path, where):
    done = subprocess.run([sys.executable, "-m", "pytest", *where, "--store", GOOD, "--report-dir",
                           str(tmp_path), "-q", *ONE_SCENARIO], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "summary.json").is_file() and (tmp_path / "report.html").is_file()


def test_other_pytest_runs_never_see_the_plugin(tmp_path):
    """A user's own tests, in the environment that has the suite installed, with a fixture named
    ``stores`` (as one of the scenarios' is) and a ``--store`` option of their own: the suite's plugin
    must stay out."""
    (tmp_path / "conftest.py").write_text(textwrap.dedent("""\
        import pytest

        def pytest_addoption(parser):
            parser.addoption("--store", default="shelf")

        @pytest.fixture
        def stores():
            return ["kept"]
        """), encoding="utf-8")
    (tmp_path / "test_app.py").write_text(textwrap.dedent("""\
        def test_uses_its_own_stores_fixture(stores, pytestconfig):
            assert stores == ["kept"] and pytestconfig.getoption("--store") == "shelf"
        """), encoding="utf-8")
    for extra in ([], ["--store", "warehouse"]):
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *extra],
                              cwd=tmp_path, capture_output=True, text=True, timeout=120,
                              env={**os.environ, "PYTEST_ADDOPTS": ""})
        if extra:
            assert done.returncode == 1 and "'warehouse' == 'shelf'" in done.stdout, done.stdout + done.stderr
        else:
            assert done.returncode == 0, done.stdout + done.stderr
        assert "memory-regression" not in done.stdout + done.stderr
    assert not (tmp_path / "memory-reports").exists(), "the plugin wrote reports"


def run_with_edited_suite(tmp_path, module, edit):
    """Run the runner on a copy of the suite whose ``module`` was changed by ``edit``."""
    shutil.copytree(ROOT / "suite", tmp_path / "suite")
    path = tmp_path / "suite" / module
    edited = edit(path.read_text(encoding="utf-8"))
    assert edited != path.read_text(encoding="utf-8"), "the edit changed nothing"
    path.write_text(edited, encoding="utf-8")
    script = ("import sys, pathlib; import memory_regression.cli as cli, memory_regression.plugin as plugin; "
              f"plugin.suite_directory = lambda: pathlib.Path({str(tmp_path / 'suite')!r}); "
              f"sys.exit(cli.main(['--store', {GOOD!r}, '--report-dir', {str(tmp_path / 'reports')!r}]))")
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    return done, json.loads((tmp_path / "reports" / "summary.json").read_text())


def test_a_broken_suite_installation_is_reported(tmp_path):
    """A scenario module that cannot be imported is a configuration error, not an interruption."""
    done, summary = run_with_edited_suite(tmp_path, "test_ttl.py",
                                          lambda text: text + "import a_module_nobody_installed\n")
    assert done.returncode == 2, done.stdout + done.stderr
    assert summary["status"] == "suite error"
    assert "a_module_nobody_installed" in summary["message"]


def test_plain_pytest_without_a_store_says_so():
    done = subprocess.run([sys.executable, "-m", "pytest", "suite", "-q"], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == pytest.ExitCode.USAGE_ERROR, done.stdout + done.stderr
    assert "give --store" in done.stderr


def test_reports_are_handed_to_the_directory_owner_without_following_symlinks(run_suite, tmp_path):
    """As root (in a container), what the run wrote goes to the owner of the working directory; a
    symlink planted where a report goes is replaced, never followed, and nothing else is touched."""
    if os.geteuid() != 0:
        pytest.skip("the hand-over happens only when the runner is root")
    owner = 1234
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    os.chown(workspace, owner, owner)
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "file").write_text("keep me too")
    existing = workspace / "existing"
    existing.mkdir()
    (existing / "junit.xml").symlink_to(outside)
    (existing / "summary.json").symlink_to(elsewhere)
    store = str(ROOT / "tests/stores/correct.py") + ":ListStore"
    result = run_suite("--store", store, *ONE_SCENARIO, cwd=workspace, report_dir=existing)
    assert result.exit_code == 0, result.output
    assert outside.read_text() == "keep me" and outside.stat().st_uid == 0
    assert elsewhere.stat().st_uid == 0 and (elsewhere / "file").stat().st_uid == 0
    for name in ("junit.xml", "summary.json", "summary.md", "report.html"):
        path = existing / name
        assert not path.is_symlink() and path.stat().st_uid == owner, name
    assert existing.stat().st_uid == 0, "a directory the run did not create was handed over"

    nested = workspace / "out" / "memory-reports"
    result = run_suite("--store", store, *ONE_SCENARIO, cwd=workspace, report_dir=nested)
    assert result.exit_code == 0, result.output
    assert nested.stat().st_uid == owner and nested.parent.stat().st_uid == owner


def test_a_report_dir_another_run_makes_meanwhile_is_used(tmp_path, monkeypatch):
    """Two runs sharing a new report directory race to create it: the one that loses goes on."""
    from pathlib import Path

    from memory_regression.reports import prepare_report_dir, ReportPaths

    make = Path.mkdir

    def made_by_the_other_run_first(path, *args, **kwargs):
        make(path)
        return make(path, *args, **kwargs)   # FileExistsError, as for the run that lost the race

    monkeypatch.setattr(Path, "mkdir", made_by_the_other_run_first)
    target = tmp_path / "shared"
    assert prepare_report_dir(ReportPaths(target), "shared") == []
    assert target.is_dir()
