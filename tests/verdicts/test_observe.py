"""Before judging: what a store does with the suite's parameters (memory_regression/worker/observe.py), on
correct stores whose window or TTL is named outside the contract, or that connect on their own."""


import re
import socket
import subprocess
import sys
import time

import pytest

from tests.conftest import ROOT, RedisServer, free_port
from tests.end_to_end.test_cli import runner


def test_a_window_of_another_name_stops_the_run_naming_it(run_suite):
    result = run_suite("--store", "tests.stores.misbound:WindowCalledLimit")
    assert result.exit_code == 2, result.output
    message = result.summary["message"]
    assert "keeps only the newest 20 of 100 messages" in message
    assert "limit=20" in message and "--store-params limit=max_messages" in message
    assert result.summary["fixes"] == {"store_params": "limit=max_messages"}, "--list's table would lack the fix"
    assert result.summary["results"] == [], "no scenario may run: its failures would be the window's consequences"
    for wrong in ("lost update", "OOM", "several keys"):
        assert wrong not in result.output


def test_the_mapping_fills_the_parameter_and_the_store_passes(run_suite):
    result = run_suite("--store", "tests.stores.misbound:WindowCalledLimit", "--store-params", "limit=window",
                       "--groups", "core,count-window")
    assert result.exit_code == 0, result.output
    assert "count-window" in result.summary["capabilities"]
    assert result.summary["observations"] == []


def test_a_cap_without_a_matching_parameter_is_observed_and_judged(run_suite):
    result = run_suite("--store", "tests.stores.misbound:CapsOnItsOwn", "--groups", "core")
    assert result.exit_code == 1, result.output
    observed = result.summary["observations"]
    assert len(observed) == 1 and "keeps only the newest 30 of 100" in observed[0], observed
    assert "max_retries=30" in observed[0] and "a cap of its own" in observed[0]
    assert "test_no_silent_cap" in result.failing_scenarios()
    header, summary = result.output.split("memory regression summary")
    assert "observed: the store keeps only the newest 30" in header.split("PASSED")[0]   # before any verdict
    assert "observed: the store keeps only the newest 30" in summary
    assert "Observed: the store keeps only the newest 30" in (result.report_dir / "summary.md").read_text()


def test_a_ttl_of_another_name_is_observed_naming_it(tmp_path):
    done = runner("--list", "--store", "tests.stores.misbound:TtlCalledExpireSeconds", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "parameters the suite does not fill (they keep their defaults): expire_seconds=600" in done.stdout
    assert "its parameter expire_seconds=600 looks like its TTL" in done.stdout
    assert "--store-params expire_seconds=ttl" in done.stdout
    assert "  lacks ttl: " in done.stdout


def test_a_store_that_connects_on_its_own_is_a_fast_usage_error(run_suite):
    port = free_port()
    result = run_suite("--store", "tests.stores.misbound:OwnClientOnAnotherPort",
                       env={"OWN_REDIS_PORT": str(port)})
    assert result.exit_code == 2, result.output
    message = result.summary["message"]
    assert "takes no client and no URL" in message and f"127.0.0.1:{port}" in message, message
    assert result.summary["results"] == []


ON_SERVER = ("test_store_reconnects_after_its_connections_are_killed", "test_store_raises_when_the_server_is_down",
             "test_store_neither_duplicates_nor_loses_a_message_whose_reply_was_lost",
             "test_a_restart_between_turns_loses_nothing", "test_keys_stay_in_namespace", "test_clear_leaves_no_keys",
             "test_every_key_has_ttl_within_configured", "test_storage_grows_with_the_messages_kept")
INVENTED = ("swallows", "state kept in its process", "connection error", "never appended", "deletes what it reads")


def test_a_store_that_writes_nothing_to_redis_is_judged_where_it_keeps_its_history(run_suite):
    """A store of the process's memory: said in the header, the scenarios on the server skipped, the rest judged
    (two instances do not share its history)."""
    result = run_suite("--store", "tests.stores.misbound:InTheProcess", "--groups", "core,hygiene")
    assert result.exit_code == 1, result.output
    assert any("left no key on the server under test" in text for text in result.summary["observations"])
    assert "take the client the suite passes" in result.summary["observations"][0]
    assert result.outcome("test_keys_stay_in_namespace") == "skipped"
    assert result.failing_scenarios() == {"test_two_instances_share_history"}, result.failing_scenarios()


@pytest.fixture
def memory_service(request):
    """The HTTP service of tests/stores/behind_a_service.py on a free loopback port, over a redis-server of its own;
    a test parametrized indirectly with a number gets a service whose summariser fails from that many messages on."""
    server = RedisServer()
    port = free_port()
    summarise_after = [str(request.param)] if hasattr(request, "param") else []
    service = subprocess.Popen([sys.executable, "-m", "tests.stores.behind_a_service", str(port), server.url(),
                                *summarise_after], cwd=ROOT)
    deadline = time.monotonic() + 20
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            assert time.monotonic() < deadline and service.poll() is None, "the memory service did not start"
            time.sleep(0.05)
    yield server, f"http://127.0.0.1:{port}"
    service.kill()
    service.wait()
    server.stop()


def test_a_store_behind_a_service_is_judged_on_nothing_it_does_not_touch(run_suite, memory_service):
    """Its service writes to a server of its own: said before judging, every scenario that acts on the server
    skipped with that reason, no cause made up from the server under test, and the rest pass."""
    server, service = memory_service
    result = run_suite("--store", "tests.stores.behind_a_service:ServiceStore", "--groups",
                       "core,faults,restart,hygiene,ttl,footprint", env={"MEMORY_SERVICE_URL": service})
    assert result.exit_code == 0, result.output
    observed = result.summary["observations"]
    assert len(observed) == 1 and "left no key on the server under test" in observed[0], observed
    assert "take the client" not in observed[0], "it takes the client: that advice would be wrong"
    assert "observed: the store appended 2 messages and left no key" in result.output.split("PASSED")[0]
    results = {r["scenario"]: r for r in result.summary["results"]}
    for scenario in ON_SERVER:
        assert results[scenario]["outcome"] == "skipped", (scenario, results[scenario])
        assert "keeps it elsewhere" in results[scenario]["message"], results[scenario]
    assert results["test_round_trip_keeps_role_content_and_order"]["outcome"] == "passed"
    for invented in INVENTED:
        assert invented not in result.output, invented


def test_a_store_behind_a_service_runs_on_the_server_it_uses_when_redis_names_it(run_suite, memory_service):
    """With --redis naming the service's server, the scenarios on that server judge it; those that build the
    store on another URL (a dead server, a proxy, a server of the scenario's own) say that it does not take one."""
    server, service = memory_service
    result = run_suite("--store", "tests.stores.behind_a_service:ServiceStore", "--redis", server.url(),
                       "--groups", "core,faults,restart,hygiene,memory-pressure", env={"MEMORY_SERVICE_URL": service})
    assert result.exit_code == 0, result.output
    assert result.summary["observations"] == []
    results = {r["scenario"]: r for r in result.summary["results"]}
    outcomes = {scenario: r["outcome"] for scenario, r in results.items()}
    assert outcomes["test_keys_stay_in_namespace"] == outcomes["test_clear_leaves_no_keys"] == "passed", outcomes
    assert outcomes["test_store_reconnects_after_its_connections_are_killed"] == "passed", outcomes
    for scenario, said in (("test_store_raises_when_the_server_is_down", "does not take the client or redis_url"),
                           ("test_store_neither_duplicates_nor_loses_a_message_whose_reply_was_lost",
                            "without one connection through it"),
                           ("test_a_restart_between_turns_loses_nothing", "holds no key there"),
                           ("test_eviction_leaves_sessions_whole_or_gone", "holds no key there"),
                           ("test_append_raises_when_memory_is_full", "holds no key there after its first append")):
        assert outcomes[scenario] == "skipped" and said in results[scenario]["message"], results[scenario]
    for invented in INVENTED:
        assert invented not in result.output, invented


def test_stores_that_take_everything_are_not_probed(tmp_path):
    done = runner("--list", "--store", "tests.stores.correct:ListStore", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "observed" not in done.stdout and "does not fill" not in done.stdout


def test_a_store_that_cannot_be_built_passes_nothing(run_suite):
    """Every build raises, naming nothing it was given: every scenario that builds the store fails with that
    error, the server-down scenario too, which accepts a build error only on the dead server, once the store
    built on the live one."""
    result = run_suite("--store", "tests.stores.misbound:CannotStart", "--groups", "core,faults")
    assert result.exit_code == 1, result.output
    outcomes = {r["scenario"]: r["outcome"] for r in result.summary["results"]}
    assert outcomes["test_store_raises_when_the_server_is_down"] == "failed", outcomes
    assert "passed" not in outcomes.values(), outcomes
    assert all("worker pool did not start" in f["message"] for f in result.summary["failures"]), result.output


def test_a_store_that_refuses_what_the_suite_passes_is_a_usage_error_said_once(run_suite):
    """Its build names the parameters it refuses: the run stops before any scenario, exit 2, the reports
    written, saying what to fix once (it was every scenario's failure)."""
    result = run_suite("--store", "tests.stores.misbound:RefusesToBeBuilt", "--groups", "core,faults")
    assert result.exit_code == 2, result.output
    assert result.summary["status"] == "usage error", result.summary["status"]
    assert result.summary["message"].startswith(
        "--store 'tests.stores.misbound:RefusesToBeBuilt': building the store with what the suite passes raised "
        "ValueError: redis and namespace are mutually exclusive, which names 'redis' (the contract's redis), "
        "'namespace' (the contract's namespace)"), result.summary["message"]
    assert result.summary["results"] == [], "no scenario ran: it is said once, not as each one's failure"


def test_a_store_that_refuses_a_client_and_a_url_together_is_given_the_client_and_passes(run_suite):
    """tests.stores.shapes:ClientOrUrl takes one way to reach Redis, as Agent Framework's history provider
    does: given both, every scenario failed with its ValueError. Given the client alone (said in the header),
    it passes, in the worker and in the writer processes of the concurrency scenarios alike."""
    result = run_suite("--store", "tests.stores.shapes:ClientOrUrl", "--groups", "core,concurrency")
    assert result.exit_code == 0, result.output
    assert result.summary["observations"][0] == (
        "the store refused the client and the URL together (ValueError: redis_client and redis_url are mutually "
        "exclusive: give exactly one): it is given the client the suite opens alone, as redis_client, in every "
        "scenario")
    outcomes = {r["scenario"]: r["outcome"] for r in result.summary["results"]}
    assert outcomes["test_concurrent_writers_lose_nothing"] == "passed", outcomes   # its writers in processes too


@pytest.mark.parametrize("memory_service", [25], indirect=True)
def test_a_component_of_the_service_that_fails_is_named_as_what_failed(run_suite, memory_service):
    """The service answers HTTP 500 once a session holds 25 messages (its summariser fails, as agent-memory-server's
    does without model credentials): the scenarios that append more fail saying that the service the store calls
    failed, its status and URL, with the store's own exception, not as a fault of the store's own code."""
    _server, service = memory_service
    result = run_suite("--store", "tests.stores.behind_a_service:ServiceStore", "--groups", "core",
                       env={"MEMORY_SERVICE_URL": service})
    assert result.exit_code == 1, result.output
    failures = result.summary["failures"]
    assert "test_no_silent_cap" in {failure["scenario"] for failure in failures}, failures
    for failure in failures:
        assert re.match(r"(append \d+ raised: )?the service the store calls failed: it answered HTTP 500 \(Internal "
                        rf"Server Error\) from {re.escape(service)}/\S+; the store raised (urllib\.error\.)?HTTPError: "
                        r"HTTP Error 500: Internal Server Error", failure["message"]), failure["message"]
