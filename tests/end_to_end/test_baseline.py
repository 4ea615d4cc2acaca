"""--baseline against real runs: one store spec run twice, its code changed in between (a correct store,
then one whose TTL an append no longer refreshes), compared as a pull request's run is with its base
branch's: in summary.json, summary.md, report.html's source, the terminal, the action's outputs and
the pull request's comment, which examples/workflows/memory-regression-comment.yml posts (its script run
by Node.js against a stand-in for GitHub's API). Figures: a store made slower per append, or larger per
message, is flagged; what fails the step is --fail-on-regression's. A baseline that is no summary of a
run is a usage error, with the reports written."""

import json
import os
import shutil
import signal
import subprocess

import yaml

from tests.conftest import assert_error_reports, assert_usage_error, read_outputs, ROOT, unavailable
from tests.end_to_end.test_github import as_action

GROUPS = ("--groups", "core,ttl")
STORE = "memory.py:Memory"
REFRESH = "test_ttl.py::test_append_refreshes_ttl"


def store_version(directory, broken, bug="TTLNotRefreshed"):
    """``memory.py``, the project's store: first correct, then one with ``bug`` (by default, an append that
    no longer refreshes the TTL)."""
    store = f"broken import {bug}" if broken else "correct import ListStore"
    (directory / "memory.py").write_text(f"import sys\nsys.path.insert(0, {str(ROOT)!r})\n"
                                         f"from tests.stores.{store} as Memory\n")


COMMENT_WORKFLOW = ROOT / "examples" / "workflows" / "memory-regression-comment.yml"
# GitHub's side of the comment workflow's script, as actions/github-script hands it over: the API's
# calls the script makes, over pull requests and comments kept in a JSON file between pushes, and the
# workflow_run event's payload
GITHUB_STAND_IN = r"""
const fs = require('fs');
const [stateFile, runFile, scriptFile] = process.argv.slice(2);
const state = JSON.parse(fs.readFileSync(stateFile, 'utf8'));
const onIssue = number => state.comments.filter(c => c.issue === number);
const github = {
  paginate: async (method, args) => (await method(args)).data,
  rest: {
    pulls: {list: async ({head, state: open}) => ({data: state.pulls.filter(
      p => open === 'open' && `${p.owner}:${p.branch}` === head).map(p => ({number: p.number, head: {sha: p.sha}}))})},
    issues: {
      listComments: async ({issue_number}) => ({data: onIssue(issue_number)}),
      createComment: async ({issue_number, body}) => {
        state.comments.push({id: state.comments.length + 1, issue: issue_number, body,
                             user: {login: 'github-actions[bot]'}});
      },
      updateComment: async ({comment_id, body}) => {
        state.comments.find(c => c.id === comment_id).body = body;
        state.updates += 1;
      },
    },
  },
};
const core = {info: text => state.log.push(text), setFailed: text => { state.failed = text; }};
const context = {repo: {owner: 'team', repo: 'app'}, payload: {workflow_run: JSON.parse(fs.readFileSync(runFile))}};
const AsyncFunction = Object.getPrototypeOf(async function () {}).constructor;
new AsyncFunction('require', 'github', 'context', 'core', fs.readFileSync(scriptFile, 'utf8'))(
  require, github, context, core).then(() => fs.writeFileSync(stateFile, JSON.stringify(state)));
"""
# the pull request the gate ran on: #7, from a fork's branch, at commit abc1234
PULL = {"number": 7, "owner": "someone", "branch": "fix-ttl", "sha": "abc1234def"}


def post_comment(directory, reports, head_sha, conclusion="failure"):
    """Run the comment workflow's github-script step as the gate's artifact (``reports``) would reach it
    after the gate's run on ``head_sha`` ended in ``conclusion``, on GitHub's stand-in kept in ``directory``;
    its state after."""
    if shutil.which("node") is None:
        unavailable("REQUIRE_NODE", "node is not installed (apt-get install nodejs)")
    steps = yaml.safe_load(COMMENT_WORKFLOW.read_text())["jobs"]["comment"]["steps"]
    (directory / "script.js").write_text(next(step["with"]["script"] for step in steps
                                              if step.get("uses", "").startswith("actions/github-script@")))
    (directory / "stand-in.js").write_text(GITHUB_STAND_IN)
    state = directory / "github.json"
    if not state.exists():
        state.write_text(json.dumps({"pulls": [PULL], "comments": [{
            "id": 1, "issue": 7, "body": "Looks good", "user": {"login": "reviewer"}}], "updates": 0, "log": []}))
    (directory / "run.json").write_text(json.dumps({
        "head_sha": head_sha, "head_branch": PULL["branch"], "head_repository": {"owner": {"login": PULL["owner"]}},
        "conclusion": conclusion, "html_url": "https://github.com/team/app/actions/runs/42"}))
    artifact = directory / "artifact"
    shutil.rmtree(artifact, ignore_errors=True)
    shutil.copytree(reports, artifact / "memory-reports")
    subprocess.run(["node", str(directory / "stand-in.js"), str(state), str(directory / "run.json"),
                    str(directory / "script.js")], cwd=artifact, check=True, timeout=60)
    return json.loads(state.read_text())


def test_a_change_that_breaks_the_ttl_is_told_against_the_base_run_and_on_its_pull_request(run_suite, tmp_path):
    """Push 1 breaks the TTL: the run fails on its new failure, every report says so, and the pull
    request gets one comment; push 2 fixes it: the same comment is updated in place. A head the pull
    request is not at gets no comment."""
    store_version(tmp_path, broken=False)
    base = run_suite("--store", STORE, *GROUPS, cwd=tmp_path, report_dir=tmp_path / "base")
    assert base.exit_code == 0, base.output
    shutil.copy(tmp_path / "base" / "summary.json", tmp_path / "memory-baseline.json")
    store_version(tmp_path, broken=True)
    result = as_action(run_suite, tmp_path, "--store", STORE, *GROUPS, "--baseline", "memory-baseline.json",
                       cwd=tmp_path, report_dir=tmp_path / "head")
    assert result.exit_code == 1, result.output
    comparison = result.summary["comparison"]
    assert comparison["compared"] and comparison["differences"] == []
    assert comparison["newly_failing"] == [REFRESH] and comparison["fails_step"] == ["new-failures (1)"]
    assert comparison["lost"] == ["ttl"] and comparison["fixed"] == [] and comparison["regressions"] == 2
    headline = ("compared with the baseline memory-baseline.json: 2 regressions; the step fails on "
                "new-failures (1)")
    table = [f"### {headline}", "", "| what | count | cases |", "|---|---|---|",
             f"| newly failing | 1 | `{REFRESH}` |",
             "| lost from the conformance level, their scenarios failing | 1 | `ttl` |"]
    summary_md = (tmp_path / "head" / "summary.md").read_text()
    assert "\n".join(table) in summary_md
    assert "\n".join(table) in (tmp_path / "sum").read_text()   # the job summary
    assert headline in (tmp_path / "head" / "report.html").read_text() and headline in result.output
    outputs = read_outputs(tmp_path / "out")
    assert (outputs["regressions"], outputs["new-failures"], outputs["fixed"]) == ("2", "1", "0")
    comment = (tmp_path / "head" / "comment.md").read_text()
    assert comment.startswith(f"<!-- memory-regression: {STORE} -->\n## Memory regression: {STORE}\n")
    totals = result.summary["totals"]
    assert f"This run: **failed**, {totals['passed']} passed, 1 failed, " in comment and totals["failed"] == 1
    assert "\n".join(table) in comment

    github = post_comment(tmp_path, tmp_path / "head", PULL["sha"])
    ours = [c for c in github["comments"] if c["user"]["login"] == "github-actions[bot]"]
    assert [c["body"] for c in ours] == ["\n".join([
        "<!-- memory-regression-gate -->", "## Memory regression: 2 regressions", "",
        "The gate's [run](https://github.com/team/app/actions/runs/42) on abc1234 ended in **failure**: 1 newly "
        "failing, 1 lost from the conformance level, 0 new warnings, 0 figures worse beyond the noise; 0 fixed.", "",
        "**Newly failing:**", f"- `{REFRESH}`", "", "**Lost from the conformance level:**", "- `ttl`", "",
        "The reports (report.html, summary.md, junit.xml, summary.json) are in the run's artifacts.", ""])]
    assert github["updates"] == 0 and "failed" not in github

    store_version(tmp_path, broken=False)
    fixed = run_suite("--store", STORE, *GROUPS, "--baseline", "memory-baseline.json", cwd=tmp_path,
                      report_dir=tmp_path / "head")
    assert fixed.exit_code == 0, fixed.output
    github = post_comment(tmp_path, tmp_path / "head", PULL["sha"], conclusion="success")
    ours = [c for c in github["comments"] if c["user"]["login"] == "github-actions[bot]"]
    assert len(ours) == 1 and github["updates"] == 1, ours
    assert ours[0]["body"].startswith("<!-- memory-regression-gate -->\n## Memory regression: 0 regressions\n")
    assert "ended in **success**: 0 newly failing" in ours[0]["body"]
    assert github["comments"][0] == {"id": 1, "issue": 7, "body": "Looks good", "user": {"login": "reviewer"}}

    github = post_comment(tmp_path, tmp_path / "head", "a-commit-the-pull-request-is-not-at")
    assert github["failed"] == ("no open pull request is at the commit the gate ran on "
                                "(a-commit-the-pull-request-is-not-at): no comment posted")
    assert github["updates"] == 1 and len(github["comments"]) == 2


def test_the_comment_workflow_posts_nothing_a_forks_artifact_writes(tmp_path):
    """A fork's pull request runs its own copy of the gate, so its artifact is the fork's to write: a comment.md
    of its own and text in summary.json's node ids are never posted (the comment is the workflow's own, of
    numbers and node ids it checked), a count that is no whole number posts nothing, and the workflow acts
    only on a run of the gate's file, for a pull request, in this repository, that succeeded or failed."""
    forged = "test_core.py::test_x\n## ✅ all scenarios passed <img src=x> @octocat"
    reports = tmp_path / "reports"
    reports.mkdir()
    (reports / "comment.md").write_text("<!-- memory-regression: app -->\n## ✅ approved by @maintainer\n")
    comparison = {"compared": True, "regressions": 2, "newly_failing": [REFRESH, forged], "lost": [],
                  "warnings_new": [], "figures_worse": [], "fixed": []}
    (reports / "summary.json").write_text(json.dumps({"comparison": comparison}))
    github = post_comment(tmp_path, reports, PULL["sha"])
    body = github["comments"][-1]["body"]
    assert "failed" not in github and f"- `{REFRESH}`\n- ... 1 more (in the reports)\n" in body, body
    assert "✅" not in body and "<img" not in body and "@" not in body and "approved" not in body, body

    (reports / "summary.json").write_text(json.dumps({"comparison": {**comparison, "regressions": "0\n## ✅"}}))
    github = post_comment(tmp_path, reports, PULL["sha"])
    assert github["failed"] == "the artifact's summary.json holds no comparison of the suite's form: nothing posted"
    assert github["updates"] == 0 and len(github["comments"]) == 2

    guard = yaml.safe_load(COMMENT_WORKFLOW.read_text())["jobs"]["comment"]["if"]
    for condition in ("github.event.workflow_run.event == 'pull_request'",
                      "github.event.workflow_run.repository.full_name == github.repository",
                      "github.event.workflow_run.path == '.github/workflows/memory-regression-gate.yml'",
                      "github.event.workflow_run.conclusion == 'success'",
                      "github.event.workflow_run.conclusion == 'failure'"):
        assert condition in guard, f"the comment job does not check {condition}"


def test_a_baseline_of_another_store_is_not_compared(run_suite, tmp_path):
    store_version(tmp_path, broken=False)
    base = run_suite("--store", "tests.stores.correct:ListStore", *GROUPS, report_dir=tmp_path / "base")
    result = run_suite("--store", STORE, *GROUPS, "--baseline", str(tmp_path / "base" / "summary.json"),
                       cwd=tmp_path, report_dir=tmp_path / "head")
    assert base.exit_code == 0 and result.exit_code == 0, result.output
    comparison = result.summary["comparison"]
    assert not comparison["compared"] and comparison["regressions"] == 0 and comparison["newly_failing"] == []
    assert comparison["differences"] == ["the store: tests.stores.correct:ListStore in the baseline, memory.py:Memory "
                                         "now"]


def test_a_baseline_that_is_no_summary_of_a_run_is_a_usage_error(run_suite, tmp_path):
    (tmp_path / "notes.json").write_text(json.dumps({"results": "none"}))
    (tmp_path / "broken.json").write_text("{")
    (tmp_path / "empty.json").write_text(json.dumps({"status": "usage error", "results": []}))
    for given, phrase in (("missing.json", "no such file"), ("broken.json", "not JSON"),
                          ("notes.json", "not a summary.json of a run"), ("empty.json", "a run that judged nothing")):
        result = run_suite("--store", "tests.stores.correct:ListStore", "--baseline", str(tmp_path / given),
                           report_dir=tmp_path / given.replace(".", "-"))
        assert_usage_error(result, f"--baseline {str(tmp_path / given)!r}: {phrase}")
        assert_error_reports(result)
    # the hostile round's baselines that ended in a traceback after the whole run, and no reports: refused before it
    valid = {"results": [{"nodeid": "test_core.py::test_x", "outcome": "passed"}]}
    (tmp_path / "int-backend.json").write_text(json.dumps({**valid, "backend": 7}))
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    for given, phrase in (("int-backend.json", "not a summary.json of a run: backend: Input should be a valid string"),
                          ("deep.json", "JSON nested deeper than Python can read"),
                          ("/dev/zero", "not read: it is larger than 16 MB")):
        result = run_suite("--store", "tests.stores.correct:ListStore", "--baseline", str(tmp_path / given),
                           report_dir=tmp_path / given.replace(".", "-").strip("/"))
        assert_usage_error(result, phrase)
        assert "results" not in result.summary or not result.summary["results"], "a scenario ran before the refusal"
    for args, phrase in ((["--fail-on-regression", "figures,new-faliures"], "--fail-on-regression "
                          "'figures,new-faliures': use one or more of new-failures"),
                         (["--write-baseline", "no-such-dir/memory-baseline.json"], "--write-baseline "
                          "'no-such-dir/memory-baseline.json': its directory")):
        result = run_suite("--store", "tests.stores.correct:ListStore", *args, cwd=tmp_path,
                           report_dir=tmp_path / "reports")
        assert_usage_error(result, phrase)
        assert_error_reports(result)


def test_a_fix_that_also_trims_storage_is_told_against_a_base_run_of_other_window_sizes(run_suite, tmp_path):
    """The base run: a store that trims only when loading and lost its TTL refresh, at N=5; now the
    fixed store at N=5 and N=20: the TTL scenario is fixed and ttl regained, the footprint warning at
    N=5 is gone, and the N=20 cases, which the base run did not have, are listed as added, not judged."""
    groups = ("--groups", "core,ttl,count-window,footprint")
    (tmp_path / "memory.py").write_text("\n".join([
        "import sys", f"sys.path.insert(0, {str(ROOT)!r})", "from tests.stores.broken import TTLNotRefreshed",
        "from tests.stores.footprint import TrimsOnlyWhenLoading", "", "",
        "class Memory(TrimsOnlyWhenLoading):", "    expire = TTLNotRefreshed.expire", ""]))
    base = run_suite("--store", STORE, *groups, "--window-sizes", "5", cwd=tmp_path, report_dir=tmp_path / "base")
    assert base.exit_code == 1, base.output
    store_version(tmp_path, broken=False)
    result = run_suite("--store", STORE, *groups, "--window-sizes", "5,20", "--baseline", "base/summary.json",
                       cwd=tmp_path, report_dir=tmp_path / "head")
    assert result.exit_code == 0, result.output
    comparison = result.summary["comparison"]
    assert comparison["differences"] == ["the window sizes: 5 in the baseline, 5,20 now"] and comparison["compared"]
    assert comparison["fixed"] == [REFRESH] and comparison["regressions"] == 0
    assert comparison["gained"] == ["ttl", "bounded-storage"]
    assert comparison["warnings_gone"] == ["test_footprint.py::test_storage_stays_within_the_window[N=5]: "
                                           "bounded-storage"]
    assert comparison["added"] and all("[N=20]" in case for case in comparison["added"]), comparison["added"]


SLOWER = '''

class Memory(ListStore):
    def append(self, session_id, role, content):   # some 20 times what an append takes here
        time.sleep(0.003)
        super().append(session_id, role, content)
'''
LARGER = '''

class Memory(ListStore):
    def encode(self, role, content):   # the whole prompt kept beside each message
        return json.dumps({"role": role, "content": content, "prompt": content})

    def decode(self, raw):
        return {key: value for key, value in json.loads(raw).items() if key != "prompt"}
'''


def test_a_store_slower_per_append_or_larger_per_message_is_flagged_against_a_committed_baseline(run_suite, tmp_path):
    """The base run writes memory-baseline.json (--write-baseline), which keeps no figure of the run's
    own setting (durations, the server's port, report paths). Then an append 20 times slower, then
    messages stored twice as large: each is flagged, beyond the noise; it fails the step only under
    --fail-on-regression figures, as no scenario newly fails."""
    figures = ("--groups", "latency,footprint", "--window-sizes", "5")
    head = "import json\nimport sys\nimport time\n" + f"sys.path.insert(0, {str(ROOT)!r})\n" + \
        "from tests.stores.correct import ListStore\n"
    (tmp_path / "memory.py").write_text(head + "\n\nclass Memory(ListStore):\n    pass\n")
    base = run_suite("--store", STORE, *figures, "--write-baseline", "memory-baseline.json", cwd=tmp_path,
                     report_dir=tmp_path / "base")
    assert base.exit_code == 0, base.output
    committed = json.loads((tmp_path / "memory-baseline.json").read_text())
    assert committed["backend"] == base.summary["backend"].partition(" (")[0] and committed["latency"]
    assert not {"duration_s", "report_files", "comparison"} & set(committed)
    assert all(set(result) <= {"nodeid", "scenario", "point", "outcome", "message", "requires", "guarantees"}
               for result in committed["results"])

    (tmp_path / "memory.py").write_text(head + SLOWER)
    slower = run_suite("--store", STORE, *figures, "--baseline", "memory-baseline.json", cwd=tmp_path,
                       report_dir=tmp_path / "slower")
    assert slower.exit_code == 0, slower.output
    comparison = slower.summary["comparison"]
    worse = {(change["case"], change["figure"]) for change in comparison["figures"] if change["verdict"] == "worse"}
    latency = "test_latency.py::test_append_and_load_latency_against_the_redis_floor[N=5]"
    assert (latency, "append p50 × floor") in worse and comparison["fails_step"] == [], comparison["figures"]
    assert all(figure.startswith(latency) for figure in comparison["figures_worse"])
    assert "nothing that fails the step (--fail-on-regression new-failures)" in slower.output
    gated = run_suite("--store", STORE, *figures, "--baseline", "memory-baseline.json", "--fail-on-regression",
                      "figures", cwd=tmp_path, report_dir=tmp_path / "slower")
    assert gated.exit_code == 1 and gated.summary["status"] == "passed", gated.output
    assert gated.summary["comparison"]["fails_step"][0].startswith("figures (")
    assert "| append p50 × floor |" in (tmp_path / "slower" / "summary.md").read_text()

    (tmp_path / "memory.py").write_text(head + LARGER)
    larger = run_suite("--store", STORE, *figures, "--baseline", "memory-baseline.json", "--fail-on-regression",
                       "figures", cwd=tmp_path, report_dir=tmp_path / "larger")
    assert larger.exit_code == 1, larger.output
    per_message = [change for change in larger.summary["comparison"]["figures"]
                   if change["figure"] == "bytes per message"]
    assert per_message and all(change["verdict"] == "worse" and change["change"] > 1.5 for change in per_message)


def test_a_scenario_failing_in_the_baseline_too_fails_the_step_only_under_fail_on_failures(run_suite, tmp_path):
    """Without a baseline (a workflow's first run) --fail-on-regression changes nothing, and says so:
    the run fails on its failure."""
    store_version(tmp_path, broken=True)
    base = run_suite("--store", STORE, *GROUPS, "--fail-on-regression", "new-failures", cwd=tmp_path,
                     report_dir=tmp_path / "base")
    assert base.exit_code == 1 and "without --baseline this run fails on any failing scenario" in base.output
    again = run_suite("--store", STORE, *GROUPS, "--baseline", "base/summary.json", cwd=tmp_path,
                      report_dir=tmp_path / "head")
    assert again.exit_code == 0 and again.summary["status"] == "failed", again.output
    assert again.summary["exit_code"] == 0 and again.summary["comparison"]["newly_failing"] == []
    strict = run_suite("--store", STORE, *GROUPS, "--baseline", "base/summary.json", "--fail-on-regression",
                       "failures,figures", cwd=tmp_path, report_dir=tmp_path / "head")
    assert strict.exit_code == 1 and strict.summary["comparison"]["fails_step"] == ["failures (1)"], strict.output


def test_one_bug_that_fails_core_counts_its_failing_scenarios_and_says_the_levels_fall_once(run_suite, tmp_path):
    """A count window off by one, against the correct store's own baseline: the regressions are the
    newly failing scenarios and the level's words whose own scenarios failed (core, count-window); the
    words that left the level only with core (ttl, namespace, ...), whose scenarios all passed, are
    said once, as the level's fall. ``fail-on-regression: true``, as a YAML user writes it, is taken
    and fails the step on every kind."""
    groups = ("--groups", "core,count-window,ttl,stateful")
    store_version(tmp_path, broken=False)
    base = run_suite("--store", STORE, *groups, cwd=tmp_path, report_dir=tmp_path / "base")
    assert base.exit_code == 0, base.output
    store_version(tmp_path, broken=True, bug="OffByOneTrim")
    result = as_action(run_suite, tmp_path, "--store", STORE, *groups, "--baseline", "base/summary.json",
                       inputs={"fail-on-regression": "true"}, cwd=tmp_path, report_dir=tmp_path / "head")
    assert result.exit_code == 1, result.output
    comparison = result.summary["comparison"]
    failing = [r for r in result.summary["results"] if r["outcome"] == "failed"]
    assert comparison["lost"] == ["core", "count-window"], (comparison, failing)
    assert any(not r["requires"] for r in failing), "a core scenario fails with the window"
    assert "ttl" in comparison["fallen"] and "core" not in comparison["fallen"], comparison
    for word in comparison["fallen"]:   # each left the level with core, its own scenarios passing
        own = [r for r in result.summary["results"] if word in r["requires"] + r["guarantees"]]
        assert own and all(r["outcome"] == "passed" for r in own), (word, own)
    assert comparison["regressions"] == len(comparison["newly_failing"]) + 2 == len(failing) + 2
    assert comparison["fail_on"] == ["new-failures", "failures", "lost-guarantees", "figures"]
    assert comparison["fails_step"] == [f"new-failures ({len(failing)})", f"failures ({len(failing)})",
                                        "lost-guarantees (2)"]
    fall = (f"the level falls from {base.summary['conformance_level']} to none: core failed, and with it "
            f"{', '.join(comparison['fallen'])}, whose own scenarios did not fail")
    assert comparison["level_fall"] == fall and fall in result.output
    assert f"{comparison['regressions']} regressions; the step fails on new-failures" in result.output


def test_a_baseline_on_a_pipe_that_never_delivers_ends_by_its_deadline_or_a_signal(run_suite, tmp_path):
    """A FIFO nothing writes to: --run-timeout bounds the wait for it (a usage error), and SIGTERM during it
    ends the run as interrupted; reports are written either way."""
    os.mkfifo(tmp_path / "base.json")
    timed = run_suite("--store", "tests.stores.correct:ListStore", "--baseline", str(tmp_path / "base.json"),
                      "--run-timeout", "1", report_dir=tmp_path / "timed")
    assert_usage_error(timed, "delivered 0 bytes and no end within 1 s")
    assert timed.seconds < 60, timed.seconds
    stopped = run_suite("--store", "tests.stores.correct:ListStore", "--baseline", str(tmp_path / "base.json"),
                        signals=[(2, signal.SIGTERM)], report_dir=tmp_path / "stopped")
    assert stopped.exit_code == 130, stopped.output
    assert stopped.summary["message"] == "the run was interrupted by SIGTERM before any scenario ran"
    assert_error_reports(stopped)


def test_the_largest_baseline_leaves_every_report_and_the_output_within_a_few_mb(run_suite, tmp_path):
    """A baseline at every bound (5,000 results and 5,000 warnings, node ids of 300 characters, none of which
    this run has): what the comparison copies of it into the reports (the cases gone, the warnings gone) keeps
    each file, and the run's output, within a few MB."""
    nodeids = [f"test_core.py::test_gone_{i:05d}_" + "x" * 270 for i in range(5_000)]
    base = {"store": "tests.stores.correct:ListStore", "groups": ["core"],
            "results": [{"nodeid": nodeid, "outcome": "passed"} for nodeid in nodeids],
            "warnings": [{"nodeid": nodeid, "guarantee": "steady-appends", "text": "t" * 100} for nodeid in nodeids]}
    (tmp_path / "base.json").write_text(json.dumps(base))
    assert (tmp_path / "base.json").stat().st_size < 16 << 20
    result = run_suite("--store", "tests.stores.correct:ListStore", "--groups", "core", "--baseline",
                       str(tmp_path / "base.json"), report_dir=tmp_path / "reports")
    assert result.exit_code == 0, result.output[-3000:]
    assert len(result.summary["comparison"]["gone"]) == 5_000
    sizes = {path.name: path.stat().st_size for path in result.report_dir.iterdir()}
    assert all(size < 4 << 20 for size in sizes.values()), sizes
    assert len(result.output.encode()) < 1 << 20, len(result.output.encode())
