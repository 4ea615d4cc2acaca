"""The runner's contract, run as a user runs it: exit statuses, bad input with its reports and no
traceback, the report directory and its file system, what a selection of scenarios is, the store's
own failures, and reports that agree with each other."""

import contextlib
import os
import resource
import shutil
import subprocess
import textwrap
import xml.etree.ElementTree as ET

import pytest
from junitparser.xunit2 import JUnitXml as JUnitXml2

from tests.conftest import GOOD, ONE_SCENARIO, ROOT, assert_error_reports, assert_usage_error

ALL_WINDOWED = ("core+count-window+ttl+namespace+clear+bounded-storage+steady-appends+atomic-window+any-session-id"
                "+prefixed-keys")


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
    assert_usage_error(run_suite("--store", "tests.stores.shapes:LoadNeedsPage"), "cannot be called as get(session_id)")


def test_a_message_class_the_suite_cannot_build_is_a_usage_error_said_by_list_too(run_suite):
    """Utterance(speaker, words) has no role and no content: the binding says so, once, before any scenario."""
    said = ("its add_message takes Utterance messages, which the suite builds through the class's constructor with "
            "role and content (content, text, contents, parts), and Utterance(role='user', ...) raised TypeError")
    assert_usage_error(run_suite("--store", "tests.stores.shapes:UtteranceLog"), said, "--append-method")
    listed = run_suite("--list", "--store", "tests.stores.shapes:UtteranceLog", expect_reports=False)
    assert listed.exit_code == 2 and said in listed.output, listed.output


def test_store_without_the_named_methods(run_suite):
    assert_usage_error(run_suite("--store", "tests.stores.shapes:OwnMethodNames"), "no append method",
                       "--append-method")


def test_method_overrides(run_suite):
    result = run_suite("--store", "tests.stores.shapes:OwnMethodNames", "--append-method", "remember",
                       "--load-method", "recall", *ONE_SCENARIO)
    assert result.exit_code == 0, result.output


def test_a_bad_option_is_a_usage_error_with_reports_and_no_traceback(run_suite):
    """One bad value end to end: exit 2, the message on the way out, every report but the HTML one
    written, no traceback of ours. The values' own checks are the unit tests below."""
    assert_usage_error(run_suite("--store", GOOD, "--model-profiles", "gpt-9"), "unknown profile gpt-9",
                       "small-4k")


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
    """Under a 6 KB file-size limit (a worker's call page takes 4 KB) pytest's own junit.xml of five
    groups is cut short, so pytest-html never runs; both are named, and summary.md, which fits,
    carries the verdict."""
    def small_files():
        resource.setrlimit(resource.RLIMIT_FSIZE, (6144, 6144))
    report_dir = tmp_path / "reports"
    result = run_suite("--store", GOOD, "--groups", "core,ttl,count-window,hygiene,identity", report_dir=report_dir,
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
    assert "53 scenarios were collected and none was run" in result.summary["message"]


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
    ("tests.stores.shapes:make_store",
     "core+count-window+clear+bounded-storage+steady-appends+atomic-window+any-session-id"),
    ("tests.stores.shapes:make_store_from_kwargs", "core+clear+bounded-storage+steady-appends+any-session-id"),
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
    level = "core+ttl+namespace+clear+bounded-storage+steady-appends+any-session-id+prefixed-keys"
    assert summary["conformance_level"] == level
    assert f"Conformance level: **{level}**" in markdown
    assert "kept 6 messages, expected 5" in markdown
    assert summary["matrix"]["columns"][:3] == ["—", "N=5", "N=20"]
    row = next(r for r in summary["matrix"]["rows"] if r["scenario"] == "test_count_window_keeps_last_n")
    assert row["cells"] == {"N=5": "failed", "N=20": "failed"}
    scenarios = summary["capability_scenarios"]
    assert scenarios["count-window"] == ["test_compaction_keeps_the_window", "test_concurrent_writers_keep_the_window",
                                         "test_count_window_keeps_last_n", "test_storage_stays_within_the_window",
                                         "test_window_leaves_no_orphaned_tool_result"]
    assert scenarios["clear"] == ["test_clear_leaves_no_keys", "test_clearing_one_session_leaves_every_other_whole"]
    assert "test_round_trip_keeps_role_content_and_order" in scenarios["core"]


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
