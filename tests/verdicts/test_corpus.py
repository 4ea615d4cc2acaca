"""The suite against stores whose behaviour we know: every broken store is caught by exactly the
scenarios meant for it, and no correct store fails."""

import re

import pytest

from tests.corpus import (BROKEN, CORRECT_STORES, TOKEN_ARGS, WARNED, corpus_args, declared_cause, group_of,
                          same_level)
from tests.stores import broken, concurrency, expiry, policies, stateful_bugs

# groups that take seconds, run only on the broken stores meant for them (-k names them)
SLOW_GROUPS = {"stateful": {broken.STATEFUL}, "expiry": {expiry.ACTIVE, expiry.IDLE},
               "concurrency": {concurrency.LOSE_NOTHING, concurrency.KEEP_THE_WINDOW,
                               concurrency.KEEP_THE_TOKEN_BUDGET}}


def stateful_points(summary: dict) -> set[str]:
    """Where a run's stateful scenario ran: at each window size on a count-windowed store, else once."""
    if "count-window" in summary["capabilities"]:
        return {f"N={n}" for n in summary["window_sizes"]}
    return {""}


@pytest.mark.parametrize("store", sorted(BROKEN, key=lambda c: c.__name__), ids=lambda c: c.__name__)
def test_broken_store_is_caught(run_suite, store, corpus_run):
    """The stateful scenario runs on the stores meant for it, and must catch them at every window
    size. On the others it may catch the bug too (which their fixed scenarios pin already): left
    out there, it would only lengthen the corpus, as would the expiry scenarios' waits. A policy
    store runs under its policy."""
    expected = set(BROKEN[store])
    left_out = [group for group, scenarios in SLOW_GROUPS.items() if not scenarios & expected]
    args = (*corpus_args(store), *(("-k", " and ".join(f"not {group}" for group in left_out)) if left_out else ()))
    result = run_suite("--store", f"{store.__module__}:{store.__name__}", *args)
    assert result.exit_code == 1, result.output
    failing = result.failing_scenarios()
    assert expected <= failing, result.output
    assert failing - broken.MAY_ALSO_CATCH == expected - broken.MAY_ALSO_CATCH, result.output
    if broken.STATEFUL in expected:
        caught_at = {f["point"] for f in result.summary["failures"] if f["scenario"] == broken.STATEFUL}
        assert caught_at == stateful_points(result.summary), result.output
    kind, patterns = declared_cause(store)
    for failure in result.summary["failures"]:
        if failure["scenario"] in patterns:
            assert re.search(patterns[failure["scenario"]], failure["message"]), (kind, failure["message"])


@pytest.mark.parametrize("store", sorted(WARNED, key=lambda c: c.__name__), ids=lambda c: c.__name__)
def test_store_breaking_a_guarantee_passes_warned(run_suite, store):
    """A cost or a transient effect is a warning: the store passes, exactly the scenarios meant for it
    warn (each naming the guarantee its conformance level then lacks, and the cause a store that
    declares one), and --strict fails them."""
    expected = set(WARNED[store])
    args = ("--store", f"{store.__module__}:{store.__name__}", *corpus_args(store),
            "--groups", ",".join(sorted(set(map(group_of, expected)))))
    result = run_suite(*args)
    assert result.exit_code == 0, result.output
    warned = {r["scenario"] for r in result.summary["results"] if r["warnings"]}
    assert warned == expected, result.output
    for warning in result.summary["warnings"] if "CAUSE" in vars(store) else ():   # the cause its commands show
        assert re.search(store.CAUSE, warning["text"]), warning["text"]
    guarantees = {w["guarantee"] for w in result.summary["warnings"]}
    assert guarantees and not guarantees & set(result.summary["conformance_level"].split("+")), result.summary
    strict = run_suite(*args, "--strict")
    assert strict.exit_code == 1, strict.output
    assert strict.failing_scenarios() == expected, strict.output
    assert all(f["message"].endswith("(a warning: --strict fails it)") for f in strict.summary["failures"])


@pytest.mark.parametrize("store", [broken.OffByOneTrim, stateful_bugs.OneTooFew], ids=lambda c: c.__name__)
def test_the_stateful_scenario_alone_catches_a_window_one_off(run_suite, store):
    """A window of N+1 or N-1 messages, the count-window scenario's to pin, is caught by the stateful
    scenario on its own too, at every window size: its fills reach full and past-full windows."""
    result = run_suite("--store", f"{store.__module__}:{store.__name__}", "-k", "stateful")
    assert result.exit_code == 1, result.output
    failures = result.summary["failures"]
    assert {f["point"] for f in failures} == stateful_points(result.summary), result.output
    assert all(re.search(r"(kept|history has) \d+ messages, expected \d+", f["message"]) for f in failures), failures


@pytest.mark.parametrize("spec", sorted(CORRECT_STORES))
def test_correct_store_passes(run_suite, spec, corpus_run):
    args, level = CORRECT_STORES[spec]
    result = run_suite("--store", spec, *args)
    assert result.exit_code == 0, result.output
    summary = result.summary
    assert summary["totals"]["failed"] == summary["totals"]["errors"] == 0
    assert same_level(spec, summary["conformance_level"], level), (summary["conformance_level"], level)
    assert summary["totals"]["passed"] > 0
    assert summary["leftovers"] == [], "a correct store left no process running: these are the suite's"
    stateful = {r["point"]: r["findings"] for r in summary["results"] if r["scenario"] == broken.STATEFUL}
    if stateful:   # what it reached, noted at each window size: full, past-full and refilled windows among it
        assert set(stateful) == stateful_points(summary), stateful
        for point, findings in stateful.items():
            assert len(findings) == 1 and findings[0].startswith(f"{point or 'unwindowed'}: "), findings
            if point:
                reached = re.search(r"loads at full (\d+), past full (\d+), refilled after clearing a full window "
                                    r"(\d+);", findings[0])
                full, past, refilled = map(int, reached.groups())
                assert full and past and (refilled or "clear" not in summary["capabilities"]), findings


def test_a_store_following_another_policy_is_told_to_pass_it(run_suite):
    """A correct start-on-user store run under the default policy, suffix, fails both window
    scenarios, and every failure names the policy the store follows."""
    result = run_suite("--store", "tests.stores.policies:StartOnUserStore", *TOKEN_ARGS,
                       "-k", "count_window or token_window")
    assert result.exit_code == 1, result.output
    failures = result.summary["failures"]
    assert {f["scenario"] for f in failures} == {policies.COUNT_WINDOW, policies.TOKEN_WINDOW}, result.output
    hint = "; this is what --window-policy start-on-user expects: if the store means to do that, pass it"
    assert all(f["message"].endswith(hint) for f in failures), result.output
    assert next(f["message"] for f in failures if f["point"] == "N=5") == (
        "N=5, after 6 appends: lost message 2 of 6 (assistant: 'turn 0002'): history has 4 messages, expected 5"
        + hint)
