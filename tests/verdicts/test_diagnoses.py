"""A failure names a cause only where the evidence shows it: the unit of a TTL only when it is about a
thousand times off, a lost update only when one writer alone loses nothing, a client library's defect
as the library's, the suite's own exception as no finding about the store, on stores whose real
cause we know."""

import re
from xml.etree import ElementTree

import redis

from memory_regression.worker.clients import IDLE_CLOSE_VERSIONS
from memory_regression.worker.outcomes import NOT_THE_STORE
from tests.stores import concurrency
from tests.stores.broken import TTLInMilliseconds, TTLNotRefreshed


def messages_of(result, scenario):
    return [f["message"] for f in result.summary["failures"] if f["scenario"] == scenario]


def test_a_ttl_a_thousand_times_too_long_is_called_a_unit_slip(run_suite):
    result = run_suite("--store", f"tests.stores.broken:{TTLInMilliseconds.__name__}", "-k", "ttl_within")
    assert result.exit_code == 1, result.output
    [message] = messages_of(result, "test_every_key_has_ttl_within_configured")
    assert "longer than the configured 60 s (1,000×: milliseconds taken for seconds?)" in message, message


def test_a_ttl_never_refreshed_is_called_so_and_no_unit_slip(run_suite):
    result = run_suite("--store", f"tests.stores.broken:{TTLNotRefreshed.__name__}", "-k", "refreshes_ttl")
    assert result.exit_code == 1, result.output
    [message] = messages_of(result, "test_append_refreshes_ttl")
    assert "what the suite had shortened it to: the append did not set it back to 60 s" in message, message
    assert "milliseconds" not in message


def test_losses_without_a_race_are_no_lost_update(run_suite):
    """A store that keeps the newest 30 loses messages of one writer alone: the concurrency scenario says
    so, and says nothing of overlapping appends."""
    result = run_suite("--store", "tests.stores.misbound:CapsOnItsOwn", "-k", "concurrent_writers_lose_nothing")
    assert result.exit_code == 1, result.output
    [message] = messages_of(result, "test_concurrent_writers_lose_nothing")
    assert message.startswith("lost 70 messages of 100 appended one after another (one writer)"), message
    assert "lost update" not in message and "overlap" not in message


def test_a_lost_update_is_named_once_one_writer_alone_loses_nothing(run_suite):
    result = run_suite("--store", "tests.stores.concurrency:ReadModifyWrite", "-k", "concurrent_writers_lose_nothing")
    assert result.exit_code == 1, result.output
    [message] = messages_of(result, "test_concurrent_writers_lose_nothing")
    assert "though one writer appending as many loses none: appends that overlap overwrite each other" in message
    assert "(GET mrs:" in message and ", then SET mrs:" in message, "the steps its commands show"



def test_a_writer_processs_exception_is_the_stores_failure_with_its_frames(run_suite):
    """An append that raises in a writer process (a replica of a service) fails the scenario with the
    store's exception, and its traceback from that process shows the store's frames, not the suite's
    between them (run_suite checks that none of the tool's reaches the user: CI met it on Strands)."""
    result = run_suite("--store", "tests.stores.concurrency:GivesUpOnAConflict",
                       "-k", "concurrent_writers_lose_nothing")
    assert result.exit_code == 1, result.output
    [message] = messages_of(result, "test_concurrent_writers_lose_nothing")
    assert re.match(concurrency.GivesUpOnAConflict.CAUSE, message), message
    assert 'tests/stores/concurrency.py", line' in result.output, "the store's frame in its process"

def test_without_the_stores_commands_a_lost_update_is_one_possible_cause(run_suite, redis_server):
    """On a server the suite reaches as the store's own user, MONITOR cannot tell the store's commands from
    the suite's: no mechanism is named as seen, the possible causes are listed."""
    result = run_suite("--store", "tests.stores.concurrency:ReadModifyWrite", "--redis", redis_server.url(),
                       "-k", "concurrent_writers_lose_nothing")
    assert result.exit_code == 1, result.output
    [message] = messages_of(result, "test_concurrent_writers_lose_nothing")
    assert "appends that overlap lose messages: possible causes: a read-modify-write (GET, then SET)" in message
    assert "the store reads the session" not in message and "MONITOR" not in result.summary["failures"][0]["details"]


def test_a_defect_of_the_stores_own_client_is_named_as_the_librarys(run_suite):
    """The store builds its own redis.asyncio client from redis_url and uses only its pool: under redis-py
    8.1.0 its first command after the server closed an idle connection fails. Both scenarios that close
    connections fail (the store does fail its users), naming the library, not the store's reconnecting."""
    result = run_suite("--store", "tests.stores.client_defects:OwnAsyncClientFromUrl", "--groups", "faults,restart")
    if redis.__version__ not in IDLE_CLOSE_VERSIONS:   # a redis-py without the defect: the store is correct
        assert result.exit_code == 0, result.output
        return
    assert result.exit_code == 1, result.output
    failures = result.summary["failures"]
    assert {f["scenario"] for f in failures} == {"test_store_reconnects_after_its_connections_are_killed",
                                                "test_a_restart_between_turns_loses_nothing"}, result.output
    for failure in failures:
        assert "a defect of the store's client library, not of the store: redis-py 8.1.0" in failure["message"]
        assert "maint_notifications_config=MaintNotificationsConfig(enabled=False)" in failure["message"]
        assert "connection kept for the store's life" not in failure["message"]


def test_an_exception_of_the_suites_own_code_judges_nothing_and_fails_no_store(run_suite):
    """The suite's own code raising in a scenario, outside any call of the store (a defect of the
    suite's, stood in for by tests/stores/suite_defect.py), is no finding about the store: each such
    scenario is an error, saying so, in junit.xml and pytest's terminal too, and a run with no failure beside them is a
    suite error (exit 2: the store was not judged), not a failed store (exit 1)."""
    result = run_suite("--store", "tests.stores.suite_defect:CorrectStoreBesideASuiteDefect",
                       "-k", "round_trip_keeps or count_window_keeps")
    assert result.exit_code == 2, result.output
    summary = result.summary
    assert (summary["status"], summary["totals"]["failed"], summary["totals"]["errors"]) == ("suite error", 0, 3)
    assert summary["message"].startswith("3 scenarios judged nothing, and none found a fault of the store: ")
    assert " 3 errors in " in result.output, "pytest's own terminal line counts them as errors too"
    assert [(f["outcome"], f["message"]) for f in summary["failures"]] == [
        ("error", "the suite's own code raised LookupError: a defect of the suite's own code, outside any call of "
                  f"the store: {NOT_THE_STORE}")] * 3
    junit = ElementTree.parse(result.report_dir / "junit.xml").getroot()
    assert (len(junit.findall(".//testcase/error")), junit.findall(".//testcase/failure")) == (3, [])


def test_a_store_with_its_own_counter_is_told_its_counter_and_the_flag_and_nothing_else(run_suite):
    """A new user's store (a sorted set trimmed in one script, a sequence counter beside it) counting as OpenAI's
    cookbook does (cl100k_base, 3 tokens a message and its role's): every token failure names that counter and
    --token-counter, none hints at lists or a policy; given that counter, it passes."""
    store = ("--store", "tests.stores.new_user:CookbookCountedMemory", "--model-profiles", "gpt-4o,small-4k")
    result = run_suite(*store, "--groups", "token-window,concurrency")
    assert result.exit_code == 1, result.output
    failures = result.summary["failures"]
    assert {f["scenario"] for f in failures} == {"test_token_window_keeps_maximal_suffix",
                                                  "test_concurrent_writers_keep_the_token_budget"}, failures
    for failure in failures:
        assert ("the store counts tokens its own way: every window it kept" in failure["message"] and
                "counting tiktoken cl100k_base + 4 tokens per message, where this profile counts" in failure["message"]
                and "--token-counter" in failure["message"]), failure["message"]
    said = " ".join([f["message"] for f in failures] + [w["text"] for w in result.summary["warnings"]])
    for wrong in ("--window-policy", "RPUSH", "LTRIM", "round trip"):
        assert wrong not in said, wrong
    counted = run_suite(*store, "--groups", "token-window", "--token-counter", "tests.stores.new_user:cookbook_tokens")
    assert counted.exit_code == 0, counted.output


def test_an_evicted_counter_beside_the_session_is_named_with_what_it_held(run_suite):
    """The new user's store keeps a sequence counter beside each session's sorted set: the eviction scenario
    reads the sessions before the limit, so that the counters are the oldest keys and go first, and the next
    append reuses their numbers; the failure names the counter evicted and the sorted set left."""
    result = run_suite("--store", "tests.stores.new_user:CookbookCountedMemory", "-k", "eviction")
    assert result.exit_code == 1, result.output
    [message] = messages_of(result, "test_eviction_leaves_sessions_whole_or_gone")
    assert re.search(r"came back mangled after Redis evicted \d+ keys under allkeys-lru and one more append: history "
                     r"is reordered: .* of its keys Redis evicted 'mrs:\w+:conv:lru \d:seq' \(a string, '24'\) and "
                     r"left 'mrs:\w+:conv:lru \d' \(a sorted set of 24\)", message), message
