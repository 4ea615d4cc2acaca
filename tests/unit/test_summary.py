"""The run's verdict as the summary holds it, on real ``RunSummary`` and ``ScenarioResult``
objects: statuses and exit codes, totals, failures and the matrix, the capabilities a store gets
and the conformance level. (A real run's level when a selection leaves capabilities untried is
checked end to end in tests/end_to_end/test_github.py, through the action.)

Every test here states exact values, so that a changed field name, count, order or mapping fails
one of them."""


import pytest

from memory_regression.contract.capabilities import (Capability, UnknownCapability, conformance_level, detect, lookup,
    skip_reason)
from memory_regression.contract.binding import bind_store
from memory_regression.contract.loader import load_object
from memory_regression.groups import scenario_group
from memory_regression.reports.figures import NO_POINT
from memory_regression.reports.results import ExitCode, Outcome, RunSummary, ScenarioResult, Status
from tests.conftest import ROOT
from tests.unit.summaries import sample_summary

CORE, COUNT, TOKEN, TTL, NAMESPACE, CLEAR, ASYNC = (
    Capability.CORE, Capability.COUNT_WINDOW, Capability.TOKEN_WINDOW, Capability.TTL, Capability.NAMESPACE,
    Capability.CLEAR, Capability.ASYNC)
EVERY_CAPABILITY = frozenset(Capability)


# -- statuses and exit codes ---------------------------------------------------------------------

STATUSES = [  # every status, in declaration order: its word in the reports and its exit code
    (Status.NOT_STARTED, "not started", 2), (Status.PASSED, "passed", 0), (Status.FAILED, "failed", 1),
    (Status.USAGE_ERROR, "usage error", 2), (Status.SUITE_ERROR, "suite error", 2),
    (Status.NOT_RUN, "not run", 2), (Status.REDIS_ERROR, "redis error", 3),
    (Status.INTERRUPTED, "interrupted", 130), (Status.DID_NOT_FINISH, "did not finish", 1),
    (Status.REPORT_ERROR, "report error", 2),
]


def test_every_status_is_listed_here():
    assert list(Status) == [status for status, _word, _code in STATUSES]


def test_exit_codes_are_the_documented_numbers():
    assert {code.name: int(code) for code in ExitCode} == {
        "PASSED": 0, "FAILED": 1, "USAGE": 2, "REDIS": 3, "INTERRUPTED": 130}


@pytest.mark.parametrize("status, word, code", STATUSES, ids=[word for _s, word, _c in STATUSES])
def test_status_word_and_exit_code(status, word, code):
    assert status.value == word and str(status) == word and f"{status}" == word
    assert status.exit_code is ExitCode(code)
    summary = RunSummary(status)
    assert summary.exit_code is ExitCode(code)
    assert summary.to_json()["status"] == word
    exit_code = summary.to_json()["exit_code"]
    assert exit_code == code and type(exit_code) is int      # a plain number in JSON, not an enum


def test_a_summary_starts_as_not_started_and_judges_nothing():
    summary = RunSummary()
    assert summary.status is Status.NOT_STARTED and summary.exit_code is ExitCode.USAGE
    assert summary.totals() == {"total": 0, "passed": 0, "failed": 0, "skipped": 0, "errors": 0}
    assert summary.failures() == [] and summary.matrix() == ([], [])
    assert summary.scenarios_by_capability() == {}
    assert summary.conformance_level == "none"


def test_outcomes_and_which_count_as_failures():
    assert [(str(o), o.value) for o in Outcome] == [
        ("passed", "passed"), ("failed", "failed"), ("error", "error"), ("skipped", "skipped")]
    failed = {o: ScenarioResult("t", "t", "core", "", [], o).failed for o in Outcome}
    assert failed == {Outcome.PASSED: False, Outcome.FAILED: True, Outcome.ERROR: True, Outcome.SKIPPED: False}


def test_a_result_not_yet_reported_is_an_error():
    """A scenario whose worker died before reporting is counted as an error, never as a pass."""
    result = ScenarioResult("t", "t", "core", "", [])
    assert (result.outcome, result.message, result.details, result.duration_s) == (Outcome.ERROR, "", "", 0.0)
    assert result.failed


@pytest.mark.parametrize("path, group", [
    ("suite/test_count_window.py", "count-window"), ("test_ttl.py", "ttl"),
    ("/a/test_dir/test_core.py", "core"), ("suite/test_test_x.py", "test-x"),
])
def test_scenario_group_from_its_file(path, group):
    assert scenario_group(path) == group


# -- totals, failures, matrix, capabilities -------------------------------------------------------

def test_totals_count_each_outcome_once():
    summary = sample_summary()
    summary.results.append(ScenarioResult("t6", "t6", "core", "", [], Outcome.ERROR))
    assert summary.totals() == {"total": 6, "passed": 2, "failed": 1, "skipped": 1, "errors": 2}
    assert list(summary.totals()) == ["total", "passed", "failed", "skipped", "errors"]


def test_failures_are_the_failed_and_errored_in_run_order():
    summary = sample_summary()
    assert [r.nodeid for r in summary.failures()] == [
        "test_count_window.py::test_last_n[N=5]", "test_hygiene.py::test_clear_no_keys"]


def test_matrix_columns_follow_the_configuration_then_the_unconfigured_sorted():
    summary = RunSummary(window_sizes=[20, 5, 50], profiles=[{"name": "small-4k"}, {"name": "gpt-4o"}], results=[
        ScenarioResult("a[zeta]", "a", "g1", "zeta", [], Outcome.PASSED),
        ScenarioResult("b[N=5]", "b", "g2", "N=5", [], Outcome.FAILED),
        ScenarioResult("b[N=20]", "b", "g2", "N=20", [], Outcome.PASSED),
        ScenarioResult("c", "c", "g1", "", [], Outcome.SKIPPED),
        ScenarioResult("a[gpt-4o]", "a", "g1", "gpt-4o", [], Outcome.ERROR),
        ScenarioResult("a[alpha]", "a", "g1", "alpha", [], Outcome.PASSED),
    ])
    columns, rows = summary.matrix()
    # N=50 and small-4k ran nothing: no column; zeta and alpha were never configured: at the end, sorted
    assert columns == [NO_POINT, "N=20", "N=5", "gpt-4o", "alpha", "zeta"]
    assert rows == [
        ("g1", "a", {"zeta": Outcome.PASSED, "gpt-4o": Outcome.ERROR, "alpha": Outcome.PASSED}),
        ("g2", "b", {"N=5": Outcome.FAILED, "N=20": Outcome.PASSED}),
        ("g1", "c", {NO_POINT: Outcome.SKIPPED}),
    ]
    assert NO_POINT == "—"


def test_scenarios_by_capability_name_each_scenario_once_in_run_order():
    summary = sample_summary()
    summary.results.append(ScenarioResult("test_core.py::test_round_trip[again]", "test_round_trip", "core", "",
                                          [], Outcome.PASSED))
    assert summary.scenarios_by_capability() == {
        "core": ["test_round_trip"], "count-window": ["test_last_n"], "token-window": ["test_suffix"],
        "clear": ["test_clear_no_keys"], "namespace": ["test_clear_no_keys"]}


# -- the conformance level --------------------------------------------------------------------------

def judged(*results: ScenarioResult) -> list[tuple[frozenset[Capability], bool]]:
    """What the runner hands conformance_level: per scenario that ran (not skipped), what it required
    and whether it passed."""
    return [(frozenset(Capability(c) for c in r.requires), r.outcome is Outcome.PASSED)
            for r in results if r.outcome is not Outcome.SKIPPED]


def ran(outcome: Outcome, *requires: str) -> ScenarioResult:
    return ScenarioResult(f"t[{'+'.join(requires)}]", "t", "g", "", list(requires), outcome)


PASSED, FAILED, ERROR, SKIPPED = Outcome.PASSED, Outcome.FAILED, Outcome.ERROR, Outcome.SKIPPED


def test_level_names_every_capability_whose_scenarios_all_passed_in_registry_order():
    results = [ran(PASSED), *(ran(PASSED, c) for c in ("clear", "namespace", "ttl", "token-window", "count-window"))]
    assert conformance_level(EVERY_CAPABILITY - {ASYNC}, judged(*results)) == \
        "core+count-window+token-window+ttl+namespace+clear"


def test_a_capability_none_of_whose_scenarios_ran_is_not_claimed():
    """Deselected with -k, or skipped: the store has the capability but nothing showed it works."""
    assert conformance_level(EVERY_CAPABILITY - {ASYNC}, judged(ran(PASSED), ran(PASSED, "ttl"))) == "core+ttl"
    assert conformance_level(EVERY_CAPABILITY - {ASYNC}, judged(ran(PASSED), ran(SKIPPED, "ttl"))) == "core"
    assert conformance_level({CORE, TTL}, []) == "none"


def test_core_is_not_claimed_when_no_core_scenario_ran():
    assert conformance_level({CORE, TTL}, judged(ran(PASSED, "ttl"))) == "ttl"


@pytest.mark.parametrize("outcome", [FAILED, ERROR])
def test_a_failed_core_scenario_makes_the_level_none(outcome):
    results = [ran(PASSED), ran(outcome), ran(PASSED, "ttl"), ran(PASSED, "clear")]
    assert conformance_level({CORE, TTL, CLEAR, ASYNC}, judged(*results)) == "none"


@pytest.mark.parametrize("outcome", [FAILED, ERROR])
def test_one_failed_scenario_loses_its_capability_only(outcome):
    results = [ran(PASSED), ran(PASSED, "ttl"), ran(outcome, "ttl"), ran(PASSED, "clear")]
    assert conformance_level({CORE, TTL, CLEAR}, judged(*results)) == "core+clear"


def test_a_scenario_needing_two_capabilities_counts_for_both_and_not_for_core():
    assert conformance_level({CORE, CLEAR, NAMESPACE}, judged(ran(PASSED), ran(FAILED, "clear", "namespace"))) \
        == "core"
    assert conformance_level({CORE, CLEAR, NAMESPACE}, judged(ran(PASSED), ran(PASSED, "clear", "namespace"))) \
        == "core+namespace+clear"
    # a failed scenario that needs a capability says nothing about core
    assert conformance_level({CORE, TTL}, judged(ran(PASSED), ran(FAILED, "ttl"))) == "core"


def test_a_capability_the_store_lacks_is_not_claimed_even_if_its_scenarios_passed():
    assert conformance_level({CORE}, judged(ran(PASSED), ran(PASSED, "ttl"))) == "core"


def test_async_is_claimed_with_the_level_it_carries_and_never_alone():
    results = judged(ran(PASSED), ran(PASSED, "ttl"))
    assert conformance_level({CORE, TTL, ASYNC}, results) == "core+ttl+async"
    assert conformance_level({CORE, TTL}, results) == "core+ttl"
    assert conformance_level({CORE, ASYNC}, []) == "none"
    assert conformance_level({CORE, ASYNC}, judged(ran(FAILED))) == "none"
    assert conformance_level([ASYNC, TTL, CORE], results) == "core+ttl+async"   # in registry order, whatever the input


# -- capabilities: detection, skip reasons, marker names ------------------------------------------

def detected(spec: str) -> list[str]:
    factory, source = load_object(spec, ROOT)
    binding = bind_store(spec, factory, source, {}, lambda _binding: pytest.fail("a class needs no probe"))
    return sorted(c.value for c in detect(binding))


def test_capabilities_follow_from_the_factory_parameters_and_methods():
    assert detected("tests.stores.correct:ListStore") == ["clear", "core", "count-window", "namespace", "ttl"]
    assert detected("tests.stores.correct:TokenStore") == ["clear", "core", "namespace", "token-window", "ttl"]
    assert detected("examples/stores/async_store.py:AsyncChatMemory") == [
        "async", "clear", "core", "count-window", "namespace", "ttl"]
    assert detected("tests.stores.shapes:SavesDicts") == ["clear", "core", "namespace", "tool-calls", "ttl"]
    assert detected("examples/stores/compacting.py:CompactingStore") == [
        "clear", "compaction", "core", "count-window", "namespace", "ttl"]
    assert detected("examples/stores/two_backends.py:TwoBackendStore") == [
        "clear", "consistency", "core", "count-window", "namespace", "ttl"]


def test_a_skip_reason_says_what_to_add_to_claim_the_capability():
    assert skip_reason([c for c in Capability if c is not CORE]) == "; ".join([
        "store lacks count-window: its factory takes no max_messages (or max_history, window, window_size)",
        "store lacks token-window: its factory takes no max_tokens (or token_limit, max_token_limit)",
        "store lacks ttl: its factory takes no ttl (or ttl_seconds, expire)",
        "store lacks namespace: its factory takes no namespace (or prefix, key_prefix)",
        "store lacks clear: it has no clear, delete, clear_session, delete_messages or reset method",
        "store lacks tenants: its factory takes no user_id (or user, tenant_id, tenant, owner_id), nor do its methods "
        "beside the session id",
        "store lacks tool-calls: its append takes role and content, not whole messages (or its message type has "
        "no tool_calls and tool_call_id)",
        "store lacks compaction: it has no compact method, or its factory takes no summarize (or summarizer)",
        "store lacks consistency: it has no consistent_state method (session_id) -> bool saying whether every "
        "backend it writes agrees",
        "store lacks async: its methods are not coroutines"])


def test_a_marker_names_a_capability_by_its_word_or_an_alias():
    assert [lookup(name) for name in ("core", "count-window", "count_window", "token_window", "ttl", "clear")] == [
        CORE, COUNT, COUNT, TOKEN, TTL, CLEAR]
    with pytest.raises(UnknownCapability) as raised:
        lookup("tll")
    assert str(raised.value) == ("@pytest.mark.requires('tll') names no capability; known: core, count-window, "
                                 "count_window, token-window, token_window, ttl, namespace, clear, tenants, "
                                 "tool-calls, tool_calls, compaction, consistency, async")
