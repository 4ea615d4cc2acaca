"""The consistency group's own manners: a store without consistent_state skips it, saying why; a
consistent_state that lags for good, raises, returns no bool or hangs fails the scenario with a
message naming the call, never a crash of ours (tests/stores/consistency.py)."""

import re

import pytest

EXAMPLE = "examples/stores/two_backends.py:TwoBackendStore"
AGREE = "test_backends_agree_after_concurrent_writes"
SHARED = "test_backends_agree_when_writers_share_a_session"


def consistency(name):
    return f"tests.stores.consistency:{name}"


def test_a_store_without_consistent_state_skips_the_group(run_suite):
    result = run_suite("--store", "examples/stores/count_window.py:CountWindowStore", "--groups", "consistency")
    assert result.exit_code == 2 and result.summary["status"] == "not run", result.output
    reasons = {r["message"] for r in result.summary["results"]}
    assert reasons == {"store lacks consistency: it has no consistent_state method (session_id) -> bool saying "
                       "whether every backend it writes agrees"}, reasons


def test_the_example_reports_its_time_to_consistency(run_suite):
    """One finding per window size and one for the shared session, with p50 and max in ms."""
    result = run_suite("--store", EXAMPLE, "--groups", "consistency", "--window-sizes", "3,7")
    assert result.exit_code == 0, result.output
    assert "consistency" in result.summary["conformance_level"]
    findings = [f for r in result.summary["results"] for f in r["findings"]]
    pattern = r"consistent_state held after p50 \d+ ms, max \d+ ms over (3 sessions|1 session) \(\d+ polls\)$"
    assert sorted(f.split(":")[0] for f in findings) == [
        "N=3, 3 sessions written at once by a writer each", "N=7, 3 sessions written at once by a writer each",
        "one session written at once by 4 writers"], findings
    assert len(findings) == 3 and all(re.search(pattern, f) for f in findings), findings


def test_a_mirror_that_never_converges_fails_with_the_lag_it_saw(run_suite):
    result = run_suite("--store", consistency("CoalescesMirrorWrites"), "--groups", "consistency",
                       "--consistency-timeout", "0.5")
    assert result.exit_code == 1, result.output
    messages = {f["scenario"]: f["message"] for f in result.summary["failures"]}
    assert re.match(r"N=5, 3 sessions written at once by a writer each: consistent_state still False after "
                    r"0\.\d s for \d of 3 sessions \('consistency N=5 session \d' loads 5 messages",
                    messages[AGREE]), messages
    assert re.match(r"one session written at once by 4 writers: consistent_state still False after 0\.\d s for "
                    r"1 of 1 session \('shared' loads 100 messages\), polled \d+ times: the store's second backend "
                    r"lags behind Redis and never caught up", messages[SHARED]), messages
    assert all(m.endswith("if it is meant to lag longer than 0.5 s, raise --consistency-timeout")
               for m in messages.values()), messages


@pytest.mark.parametrize("store, message", [
    ("ConsistentStateRaises", "the store's consistent_state('consistency N=5 session 1') raised ConnectionError: "
                              "the vector store did not answer (it says whether the store's backends agree"),
    ("ConsistentStateSaysYes", "the store's consistent_state('consistency N=5 session 1') returned 'yes', not "
                               "True or False"),
    ("ConsistentStateHangs", "the store's consistent_state('consistency N=5 session 1') did not return within 2 s "
                             f"during test_consistency.py::{AGREE}: cut off"),
])
def test_a_consistent_state_that_misbehaves_fails_naming_the_call(run_suite, store, message):
    result = run_suite("--store", consistency(store), "--groups", "consistency", "--call-timeout", "2",
                       "-k", AGREE, workers=1)   # the hang is cut off with the worker it is in
    assert result.exit_code == 1, result.output
    [failure] = result.summary["failures"]
    assert failure["message"].startswith(message), failure
