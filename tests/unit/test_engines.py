"""Several engines in one run, as the reports show them: every scenario's outcome on each side by
side, and a scenario whose verdict differs flagged, naming the engines (from summaries made here)."""


from tests.conftest import ROOT


# -- the summary of a run on several engines, on RunSummary objects -----------------------------
def engines_summary():
    from memory_regression.reports.results import Outcome, RunSummary, ScenarioResult, Status
    engines = [{"name": "server", "title": "server (redis 7.0.15)", "description": "redis 7.0.15 (private)"},
               {"name": "fakeredis", "title": "fakeredis 2.41.0", "description": "fakeredis 2.41.0"}]

    def result(name, point, engine, outcome):
        suffix = f"{point}-{engine}" if point else engine
        return ScenarioResult(f"test_core.py::{name}[{suffix}]", name, "core", point, [], outcome, engine=engine)
    return RunSummary(Status.FAILED, engines=engines, window_sizes=[5], results=[
        result("test_a", "", "server", Outcome.FAILED), result("test_a", "", "fakeredis", Outcome.PASSED),
        result("test_b", "N=5", "server", Outcome.PASSED), result("test_b", "N=5", "fakeredis", Outcome.SKIPPED),
        result("test_c", "N=5", "server", Outcome.PASSED), result("test_c", "N=5", "fakeredis", Outcome.ERROR)])


def test_differences_name_the_engines_and_skips_are_none():
    assert engines_summary().engine_differences() == [
        {"case": "test_core.py::test_a", "scenario": "test_a", "point": "",
         "outcomes": {"server": "failed", "fakeredis": "passed"},
         "message": "passes on fakeredis 2.41.0, fails on server (redis 7.0.15)"},
        {"case": "test_core.py::test_c[N=5]", "scenario": "test_c", "point": "N=5",
         "outcomes": {"server": "passed", "fakeredis": "error"},
         "message": "passes on server (redis 7.0.15), errors on fakeredis 2.41.0"}]


def test_matrix_cells_hold_each_engines_outcome_in_order():
    data = engines_summary().to_json()
    assert data["matrix"]["columns"] == ["—", "N=5"]
    assert [row["cells"] for row in data["matrix"]["rows"]] == [
        {"—": {"server": "failed", "fakeredis": "passed"}}, {"N=5": {"server": "passed", "fakeredis": "skipped"}},
        {"N=5": {"server": "passed", "fakeredis": "error"}}]
    assert data["results"][0]["engine"] == "server" and len(data["engine_differences"]) == 2


def test_a_single_engine_summary_has_no_engine_fields():
    from memory_regression.reports.results import Outcome, RunSummary, ScenarioResult
    data = RunSummary(results=[ScenarioResult("t.py::test_a", "test_a", "core", "", [], Outcome.PASSED)]).to_json()
    assert "engines" not in data and "engine_differences" not in data and "engine" not in data["results"][0]
    assert data["matrix"]["rows"][0]["cells"] == {"—": "passed"}


def test_renderings_flag_the_differing_cells():
    from memory_regression.reports import github, renderings
    summary = engines_summary()
    terminal = renderings.render_terminal(summary)
    assert "THE ENGINES DIFFER on 2 scenarios:" in terminal and "⚠️ FAIL/pass" in terminal
    assert "pass/skip" in terminal and "⚠️ pass/skip" not in terminal
    markdown = renderings.render_markdown(summary)
    assert "> ⚠️ **The engines differ on 2 scenarios:**" in markdown
    assert "| core | `test_a` | ⚠️ ❌ ✅ |  |" in markdown
    [first, *_] = github.annotations(summary, ROOT)
    assert ("title=memory regression%3A test_core.py%3A%3Atest_a[server] (passes on fakeredis 2.41.0%2C fails on"
            in first)
    assert github.outputs(summary, ROOT)["engine-differences"] == "2"
