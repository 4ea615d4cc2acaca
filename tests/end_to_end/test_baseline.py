"""--baseline against real runs: one store spec run twice, its code changed in between (a correct store,
then one whose TTL an append no longer refreshes), compared as a pull request's run is with its base
branch's: in summary.json, summary.md, report.html's source, the terminal and the action's outputs.
A baseline that is no summary of a run is a usage error, with the reports written."""

import json
import shutil

from tests.conftest import ROOT, assert_error_reports, assert_usage_error, read_outputs
from tests.end_to_end.test_github import as_action

GROUPS = ("--groups", "core,ttl")
STORE = "memory.py:Memory"
REFRESH = "test_ttl.py::test_append_refreshes_ttl"


def store_version(directory, broken):
    """``memory.py``, the project's store: first correct, then one whose append no longer refreshes the TTL."""
    store = "broken import TTLNotRefreshed" if broken else "correct import ListStore"
    (directory / "memory.py").write_text(f"import sys\nsys.path.insert(0, {str(ROOT)!r})\n"
                                         f"from tests.stores.{store} as Memory\n")


def test_a_change_that_breaks_the_ttl_is_told_against_the_base_run(run_suite, tmp_path):
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
    assert comparison["newly_failing"] == [REFRESH]
    assert comparison["lost"] == ["ttl"] and comparison["fixed"] == [] and comparison["regressions"] == 2
    headline = "compared with the baseline memory-baseline.json: 2 regressions"
    summary_md = (tmp_path / "head" / "summary.md").read_text()
    assert f"### {headline}" in summary_md and "- **lost from the conformance level** (1): `ttl`" in summary_md
    assert f"- **newly failing** (1): `{REFRESH}`" in summary_md
    assert headline in (tmp_path / "head" / "report.html").read_text() and headline in result.output
    outputs = read_outputs(tmp_path / "out")
    assert (outputs["regressions"], outputs["new-failures"], outputs["fixed"]) == ("2", "1", "0")


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
