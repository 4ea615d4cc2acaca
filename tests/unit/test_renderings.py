"""The summary as text: summary.md and the terminal summary, their limits and escaping, and the
names junit.xml gives its suite and cases."""

import re
import xml.etree.ElementTree as ET


from memory_regression.groups import describe_groups
from memory_regression.redaction import Redactor
from memory_regression.reports.renderings import render_comment, render_markdown, render_terminal, SUMMARY_MD_LIMIT
from memory_regression.reports.files import place_junit_cases, ReportPaths, suite_name, write_all
from memory_regression.reports.results import Outcome, RunSummary, ScenarioResult, Status
from tests.unit.summaries import SAMPLE_GROUPS, sample_summary


# -- summary.md and the terminal ------------------------------------------------------------------

def test_summary_md_states_the_run_the_matrix_and_the_failures():
    text = render_markdown(sample_summary())
    assert text == "\n".join([
        "## Memory regression: failed",
        "",
        "- Store: `app/m.py:Store`",
        "- Capabilities: clear, core, count-window, namespace, ttl",
        "- Conformance level: **core+ttl**",
        "- Redis: redis 7.2.4 (private server)",
        "- Window sizes: 5, 20",
        "- Window policy: start-on-user",
        f"- Groups: {describe_groups(SAMPLE_GROUPS)}",
        "- Profile `small-4k`: budget 3072 tokens, counter words",
        "",
        "2 passed, 1 failed, 1 skipped, 1 errors of 5 scenarios; conformance level core+ttl",
        "",
        "| group | scenario | — | N=5 | N=20 | small-4k |",
        "|---|---|---|---|---|---|",
        "| core | `test_round_trip` | ✅ |  |  |  |",
        "| count-window | `test_last_n` |  | ❌ | ✅ |  |",
        "| token-window | `test_suffix` |  |  |  | ⏭️ |",
        "| hygiene | `test_clear_no_keys` | 💥 |  |  |  |",
        "",
        "Keys left without a TTL (1): `mrs:1:messages:a:last-active (test_core.py::test_round_trip)`",
        "",
        "### Findings",
        "",
        "- **test_count_window.py::test_last_n[N=20]**: longest session: 43 messages",
        "",
        "### First failures (2 of 2)",
        "",
        "**test_count_window.py::test_last_n[N=5]**: kept 6 messages, expected 5",
        "",
        "<details><summary>expected against actual</summary>",
        "",
        "```text",
        "expected: m2..m6\nactual: m1..m6",
        "```",
        "</details>",
        "",
        "**test_hygiene.py::test_clear_no_keys**: teardown failed: ConnectionError",
        "",
        "<details><summary>expected against actual</summary>",
        "",
        "```text",
        "Traceback: boom",
        "```",
        "</details>",
        "",
    ]) + "\n"


def test_summary_md_of_a_run_stopped_before_any_scenario():
    summary = RunSummary(Status.USAGE_ERROR, "no store given\ngive --store FILE:CLASS",
                         backend_warning="used fakeredis | not a real server")
    assert render_markdown(summary) == "\n".join([
        "## Memory regression: usage error", "",
        "**no store given**", "", "```text", "no store given\ngive --store FILE:CLASS", "```", "",
        "> ⚠️ used fakeredis \\| not a real server", "",
        "- Store: `(none)`", "- Capabilities: unknown", "- Conformance level: **none**",
        "- Redis: not started", "- Window sizes: —", "- Window policy: —"]) + "\n"


def test_summary_md_and_terminal_list_at_most_20_findings_in_run_order():
    summary = sample_summary()
    summary.results[0].findings = [f"first {i}" for i in range(15)]
    summary.results[1].findings = [f"second {i}" for i in range(10)]
    listed = [line for line in render_markdown(summary).splitlines() if line.startswith("- **")]
    assert listed[0] == "- **test_core.py::test_round_trip**: first 0"
    assert listed[15] == "- **test_count_window.py::test_last_n[N=5]**: second 0"
    assert len(listed) == 20
    assert "- ... 6 more in summary.json" in render_markdown(summary)
    assert len([line for line in render_terminal(summary).splitlines() if line.startswith("  finding ")]) == 20
    assert len(summary.findings()) == 26


def test_summary_md_lists_at_most_20_keys_and_10_failures_with_their_counts():
    summary = RunSummary(Status.FAILED, results=[
        ScenarioResult(f"t{i}", f"t{i}", "core", "", [], Outcome.FAILED, f"lost m{i}") for i in range(12)],
        keys_without_ttl=[f"k{i}" for i in range(21)])
    text = render_markdown(summary)
    assert f"Keys left without a TTL (21): {', '.join(f'`k{i}`' for i in range(20))} ...\n" in text
    assert "`k20`" not in text
    assert "### First failures (10 of 12)" in text
    assert [line for line in text.splitlines() if line.startswith("**t")] == [
        f"**t{i}**: lost m{i}" for i in range(10)]
    summary.keys_without_ttl = summary.keys_without_ttl[:20]
    assert f"Keys left without a TTL (20): {', '.join(f'`k{i}`' for i in range(20))}\n" in render_markdown(summary)


def test_summary_md_stays_under_its_limit():
    summary = RunSummary(Status.FAILED, results=[
        ScenarioResult(f"t{i}", "t", "core", "", [], Outcome.FAILED, "x" * 200_000) for i in range(10)])
    text = render_markdown(summary)
    assert SUMMARY_MD_LIMIT - 1024 < len(text.encode()) <= SUMMARY_MD_LIMIT + 200
    assert text.endswith("_(summary cut at 1 MiB; the HTML report and junit.xml hold everything)_\n")


def test_summary_md_escapes_what_the_store_controls():
    """Store names, keys, messages and details are the store's text: no raw control character, no
    HTML, no | that splits a table, no ``` that closes the details block early."""
    summary = RunSummary(Status.FAILED, store="app/m.py:`Evil`\x1b[31m", keys_without_ttl=["k`1`|\x07"], results=[
        ScenarioResult("t|1", "t", "core", "", [], Outcome.FAILED, '<b>lost</b> "a" | b\nsecond line \x00',
                       "```\nrm\x7f -rf\n```" + "y" * 5000)])
    lines = render_markdown(summary).splitlines()
    assert "- Store: `app/m.py:Evil\\x1b[31m`" in lines
    assert "Keys left without a TTL (1): `k1/\\x07`" in lines
    # the control character made visible as \x00, whose backslash Markdown shows as it is
    assert '**t\\|1**: &lt;b&gt;lost&lt;/b&gt; "a" \\| b second line \\\\x00' in lines
    start = lines.index("```text")    # the details: 15 characters, then y up to 4000 in all
    assert lines[start + 1:start + 5] == ["'''", "rm\\x7f -rf", "'''" + "y" * (4000 - 15), "```"]


def test_summary_md_is_cut_only_past_its_limit_and_never_inside_a_character():
    def markdown(message):
        return render_markdown(RunSummary(Status.FAILED, results=[
            ScenarioResult("t", "t", "core", "", [], Outcome.FAILED, message)]))

    limit = 1024 * 1024 - 4096
    room = limit - len(markdown("").encode())
    whole = markdown("x" * room)
    assert len(whole.encode()) == limit and "cut at 1 MiB" not in whole
    cut = markdown("x" * (room + 1) + "é")   # over the limit, the é split by the cut: it is left out
    assert cut == whole[:-2] + "x\n\n_(summary cut at 1 MiB; the HTML report and junit.xml hold everything)_\n"
    assert SUMMARY_MD_LIMIT == limit

def test_terminal_summary_shows_the_run_the_matrix_failures_and_files():
    summary = sample_summary()
    summary.message = "scenarios failed"
    summary.backend_warning = "used fakeredis"
    summary.report_files = {"junit": "/w/r/junit.xml", "summary_json": "/w/r/summary.json"}
    assert render_terminal(summary).splitlines() == [
        "memory regression: failed",
        "scenarios failed",
        "WARNING: used fakeredis",
        "store app/m.py:Store  [clear, core, count-window, namespace, ttl]",
        "redis redis 7.2.4 (private server)",
        "window sizes 5,20, policy start-on-user",
        f"groups {describe_groups(SAMPLE_GROUPS)}",
        "profile small-4k: 3072 tokens, words",
        "2 passed, 1 failed, 1 skipped, 1 errors of 5 scenarios; conformance level core+ttl",
        "                         —     N=5    N=20  small-4k",
        "  test_round_trip     pass                          ",
        "  test_last_n                 FAIL    pass          ",
        "  test_suffix                                   skip",
        "  test_clear_no_keys ERROR                          ",
        "  FAIL test_count_window.py::test_last_n[N=5]: kept 6 messages, expected 5",
        "  ERROR test_hygiene.py::test_clear_no_keys: teardown failed: ConnectionError",
        "  finding test_count_window.py::test_last_n[N=20]: longest session: 43 messages",
        "junit: /w/r/junit.xml",
        "summary_json: /w/r/summary.json",
    ]


def test_terminal_summary_of_a_run_stopped_before_any_scenario():
    assert render_terminal(RunSummary(Status.REDIS_ERROR, "no redis-server on PATH")) == \
        "memory regression: redis error\nno redis-server on PATH"


# -- junit.xml: the suite's name and the cases' place --------------------------------------------

def test_junit_suite_is_named_after_the_matrix_point_and_cases_point_at_the_store(tmp_path):
    summary = sample_summary()
    summary.store_file = str(tmp_path / "app/m.py")
    def placed(source_root):
        written = ('<testsuites><testsuite name="memory-regression"><testcase classname="c" name="a"/>'
                   '<testcase classname="c" name="b"/></testsuite></testsuites>')
        return ET.fromstring(place_junit_cases(summary, written, source_root)).find("testsuite")

    suite = placed(tmp_path)
    assert suite.get("name") == "memory-regression (window sizes 5,20; window policy start-on-user; profiles small-4k)"
    assert [(c.get("file"), c.get("line")) for c in suite.iter("testcase")] == [("app/m.py", "7")] * 2
    suite = placed(tmp_path / "elsewhere")    # the store outside the root: a reporter could not find it
    assert [(c.get("file"), c.get("line")) for c in suite.iter("testcase")] == [(None, None)] * 2
    assert suite_name(RunSummary(Status.USAGE_ERROR, "no store given")) == "memory-regression"


def test_a_call_that_judged_nothing_is_a_junit_error_and_a_failure_stays_a_failure():
    """pytest writes every call that raised as a failure; one whose scenario judged nothing (the suite's
    own code raised: outcome error) becomes an error, and the suite's counts follow."""
    summary = sample_summary()
    summary.results[-1].nodeid = "test_core.py::test_suites_own"
    written = ('<testsuites><testsuite name="m" errors="0" failures="2" tests="3">'
               '<testcase classname="suite.test_core" name="test_suites_own">'
               '<failure message="m">t</failure></testcase>'
               '<testcase classname="suite.test_count_window" name="test_last_n[N=5]"><failure message="k"/></testcase>'
               '<testcase classname="suite.test_core" name="test_round_trip"/></testsuite></testsuites>')
    suite = ET.fromstring(place_junit_cases(summary, written, None)).find("testsuite")
    assert [[(child.tag, child.get("message"), child.text) for child in case] for case in suite] == [
        [("error", "m", "t")], [("failure", "k", None)], []]
    assert (suite.get("failures"), suite.get("errors"), suite.get("tests")) == ("1", "1", "3")


def test_a_run_stopped_before_its_settings_names_its_junit_suite_plainly(tmp_path):
    paths = ReportPaths(tmp_path / "r")
    write_all(RunSummary(Status.USAGE_ERROR, "no store given"), paths, Redactor(), tmp_path)
    assert [s.get("name") for s in ET.parse(paths.junit).getroot().iter("testsuite")] == ["memory-regression"]


def test_the_comment_gives_the_first_newly_failing_scenarios_with_their_reasons_and_counts_the_rest():
    summary = sample_summary()
    failing = [f"test_count_window.py::test_last_n[N={n}]" for n in range(1, 6)]
    summary.results += [ScenarioResult(nodeid, "test_last_n", "count-window", "", ["count-window"], Outcome.FAILED,
                                       f"kept {i} messages | <b>one</b>\nexpected: more", "") for i, nodeid in
                        enumerate(failing[1:], start=2)]
    summary.comparison = {"baseline": "b.json", "compared": True, "differences": [], "regressions": 5,
                          "newly_failing": failing, "fails_step": ["new-failures (5)"], "fail_on": ["new-failures"]}
    summary.results[1].nodeid = failing[0]
    comment = render_comment(summary)
    assert "\n".join([
        "**Newly failing (5):**", "",
        "- `test_count_window.py::test_last_n[N=1]`: kept 6 messages, expected 5",
        "- `test_count_window.py::test_last_n[N=2]`: kept 2 messages \\| &lt;b&gt;one&lt;/b&gt;",
        "- `test_count_window.py::test_last_n[N=3]`: kept 3 messages \\| &lt;b&gt;one&lt;/b&gt;",
        "- ... and 2 more (the table below, and the reports)", "",
        "### compared with the baseline b.json: 5 regressions; the step fails on new-failures (5)"]) in comment


def test_a_baselines_text_is_text_in_summary_md_and_the_comment():
    """Node ids, level words and setup values from a baseline (a fork's artifact can hold any, were they not
    validated on reading): no line of their own, no heading, no HTML, no link or image, no @mention."""
    forged = ("x\n## ✅ all scenarios passed\r\n<img src=x onerror=alert(1)> ![t](https://e.test/t.png) "
              "[go](https://e.test) @octocat")
    summary = sample_summary()
    summary.comparison = {"baseline": "b.json", "compared": True, "differences": [f"the store: {forged} in the "
                                                                                   "baseline, app now"],
                          "regressions": 1, "newly_failing": [], "gone": [f"test_core.py::{forged}"],
                          "lost": [forged], "fails_step": [], "fail_on": ["new-failures"], "figures": []}
    for text in (render_markdown(summary), render_comment(summary)):
        lines = text.splitlines()
        assert not any(line.startswith("## ✅") for line in lines), text
        prose = re.sub(r"`[^`\n]*`", "", text)   # inside a code span all of it is inert, shown as it is
        assert "<img" not in prose and "@octocat" not in prose, prose
        assert not re.search(r"(?<!\\)\]\(", prose), "a link or an image whose ] is not escaped"
        assert sum("all scenarios passed" in line for line in lines) == 3, "each of the three within one line"
