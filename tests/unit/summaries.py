"""A sample run's summary, real ``RunSummary`` and ``ScenarioResult`` objects, for the unit tests of
the summary and of the reports made from it."""

from memory_regression.reports.results import Outcome, RunSummary, ScenarioResult, Status

SAMPLE_GROUPS = ("core", "count-window", "hygiene", "token-window")


def sample_summary() -> RunSummary:
    """A failed run with one scenario of each outcome, windows, a profile and a key without TTL."""
    return RunSummary(
        Status.FAILED, store="app/m.py:Store", store_file="/w/app/m.py", store_line=7,
        capabilities=["clear", "core", "count-window", "namespace", "ttl"], conformance_level="core+ttl",
        backend="redis 7.2.4 (private server)", window_sizes=[5, 20], window_policy="start-on-user",
        groups=list(SAMPLE_GROUPS), profiles=[{"name": "small-4k", "max_tokens": 3072, "counter": "words"}],
        results=[
            ScenarioResult("test_core.py::test_round_trip", "test_round_trip", "core", "", [],
                           Outcome.PASSED, duration_s=0.5),
            ScenarioResult("test_count_window.py::test_last_n[N=5]", "test_last_n", "count-window", "N=5",
                           ["count-window"], Outcome.FAILED, "kept 6 messages, expected 5",
                           "expected: m2..m6\nactual: m1..m6", 0.25),
            ScenarioResult("test_count_window.py::test_last_n[N=20]", "test_last_n", "count-window", "N=20",
                           ["count-window"], Outcome.PASSED, duration_s=0.75,
                           findings=["longest session: 43 messages"]),
            ScenarioResult("test_token_window.py::test_suffix[small-4k]", "test_suffix", "token-window",
                           "small-4k", ["token-window"], Outcome.SKIPPED, "store lacks token-window"),
            ScenarioResult("test_hygiene.py::test_clear_no_keys", "test_clear_no_keys", "hygiene", "",
                           ["clear", "namespace"], Outcome.ERROR, "teardown failed: ConnectionError",
                           "Traceback: boom"),
        ],
        keys_without_ttl=["mrs:1:messages:a:last-active (test_core.py::test_round_trip)"], duration_s=3.5,
        report_files={"junit": "/w/r/junit.xml"})
