"""``--redis cluster``: the suite on a private Redis Cluster of three masters, started by the runner.

Correct stores pass every scenario there (but the one that needs a client of a cluster that is
down, skipped with the reason, for a sync store); a store that touches two keys of one session in
one transaction without a hash tag passes on one server and fails on the cluster with a message
naming CROSSSLOT and the fix; a store with a single-server client is told it needs a cluster client
(one in Node.js, the Node.js client); one that builds a cluster client passes, on the scenarios' own
servers too; the reports name the engine; and no node outlives the run (conftest checks every run for that).
"""

import os
import re
import shutil

import pytest
import redis
from junitparser.xunit2 import JUnitXml

from memory_regression.engines.registry import open_backend
from memory_regression.engines.servers import SUITE_USER
from memory_regression.harness.scenario_stores import CLUSTER_CLIENT_CONNECTS
from tests.conftest import CLUSTER, CLUSTER_ENGINE, require_node_stores
from tests.corpus import CORRECT_STORES, same_level
from tests.stores.libraries import LANGCHAIN, LLAMA_INDEX, OPENAI_AGENTS

pytestmark = pytest.mark.skipif(not shutil.which("redis-server"), reason="no redis-server on PATH")

# whole runs on a cluster at one window size: a cluster changes where a store's keys live and which
# client reaches them, not how its window is kept, which the corpus checks at both default sizes
ONE_WINDOW = ("--window-sizes", "5")
EXAMPLES = sorted(spec for spec in CORRECT_STORES if spec.startswith("examples/"))
SPLIT = "tests.stores.cluster:SessionMetaStore"
NODE_EXAMPLE = "examples/stores/node/count_window.mjs:CountWindowStore"
DOWN = "test_store_raises_when_the_server_is_down"
LOST_REPLY = "test_store_neither_duplicates_nor_loses_a_message_whose_reply_was_lost"
OWN_SERVER = {"test_append_raises_when_memory_is_full", "test_eviction_leaves_sessions_whole_or_gone",
              "test_a_restart_between_turns_loses_nothing"}   # on a single server of their own


def assert_names_the_engine(result):
    assert CLUSTER_ENGINE in result.summary["backend"], result.summary["backend"]
    for report in ("summary.md", "report.html"):
        assert CLUSTER_ENGINE in (result.report_dir / report).read_text(encoding="utf-8"), report
    cases = [case for suite in JUnitXml.fromfile(str(result.report_dir / "junit.xml")) for case in suite]
    assert cases and all(CLUSTER_ENGINE in {p.name: p.value for p in case.properties()}["backend"] for case in cases)


@pytest.mark.parametrize("spec", EXAMPLES)
def test_the_example_stores_pass_every_scenario_on_a_cluster(run_suite, spec):
    """Their keys of one session share a slot (one key, or a hash tag), so their transactions and
    scripts run on a cluster; every scenario their capabilities allow runs there (at one window size)."""
    args, level = CORRECT_STORES[spec]
    if "async" in spec:   # it fails the restart scenario on one server too (main at ff95775): not the cluster's
        args = (*args, "-k", "not test_a_restart_between_turns_loses_nothing")
    result = run_suite("--store", spec, *args, *ONE_WINDOW, *CLUSTER)
    assert result.exit_code == 0, result.output
    summary = result.summary
    assert same_level(spec, summary["conformance_level"], level), (summary["conformance_level"], level)
    asynchronous = "async" in summary["capabilities"]
    skipped = {r["scenario"]: r["message"] for r in summary["results"] if r["outcome"] == "skipped"}
    assert all(reason.startswith("store lacks ") for scenario, reason in skipped.items()
               if scenario not in (DOWN, LOST_REPLY)), skipped
    assert skipped.get(DOWN) == (None if asynchronous else CLUSTER_CLIENT_CONNECTS), skipped
    assert skipped[LOST_REPLY].startswith("on a Redis Cluster the store's client connects to the nodes"), skipped
    assert_names_the_engine(result)


def test_a_transaction_across_slots_passes_on_one_server_and_fails_on_a_cluster_with_the_fix(run_suite):
    """MULTI over ``...:<session>`` and ``...:<session>:meta``: right on one server; on a cluster every
    scenario that appends fails, saying CROSSSLOT and how to fix it."""
    assert run_suite("--store", SPLIT, *ONE_WINDOW, "--redis", "server").exit_code == 0
    result = run_suite("--store", SPLIT, *ONE_WINDOW, *CLUSTER)
    assert result.exit_code == 1, result.output
    summary = result.summary
    passed = {r["scenario"] for r in summary["results"] if r["outcome"] == "passed"}
    assert passed == {"test_fresh_session_is_empty"}, passed   # it appends nothing (own servers are clusters too)
    for failure in summary["failures"]:
        assert "CROSSSLOT" in failure["message"] and "chat:{<session>}:meta" in failure["message"], failure
    assert_names_the_engine(result)


def test_server_and_cluster_side_by_side_flag_the_transaction_across_slots(run_suite):
    """``--redis server,cluster``: the same scenarios on both, in one run with one worker; the
    CROSSSLOT store's differ, and the reports say that the cluster is the engine that fails."""
    result = run_suite("--store", SPLIT, "--redis", "server,cluster", "-k", "round_trip_keeps")
    assert result.exit_code == 1, result.output
    differences = result.summary["engine_differences"]
    assert [d["outcomes"] for d in differences] == [{"server": "passed", "cluster": "failed"}], differences
    assert re.fullmatch(rf"passes on server \(redis [\d.]+\), fails on cluster \(redis [\d.]+ {CLUSTER_ENGINE}\)",
                        differences[0]["message"]), differences


def test_an_async_transaction_across_slots_fails_with_the_fix(run_suite):
    """The same on redis.asyncio: the hint, and the store's frames in the traceback, not the suite's
    (conftest checks), from a task of the concurrency scenario too."""
    result = run_suite("--store", "tests.stores.cluster:AsyncSessionMetaStore", *CLUSTER,
                       "-k", "round_trip or lose_nothing")
    assert result.exit_code == 1, result.output
    failures = result.summary["failures"]
    assert {f["scenario"] for f in failures} == {"test_round_trip_keeps_role_content_and_order",
                                                 "test_concurrent_writers_lose_nothing"}, result.output
    assert all("CROSSSLOT" in f["message"] for f in failures), failures


def test_the_hash_tag_fix_passes_on_a_cluster(run_suite):
    result = run_suite("--store", "tests.stores.cluster:TaggedSessionMetaStore", *CLUSTER,
                       "-k", "core or count_window or hygiene or ttl")
    assert result.exit_code == 0, result.output


def test_a_single_server_client_is_told_to_use_a_cluster_client(run_suite):
    result = run_suite("--store", "tests.stores.cluster:PlainClientStore", *CLUSTER, "-k", "every_session_id")
    assert result.exit_code == 1, result.output
    message = result.summary["failures"][0]["message"]
    assert "MovedError" in message and "build a redis.cluster.RedisCluster from redis_url" in message, message


def test_a_node_store_with_a_single_servers_client_is_told_to_build_a_cluster_client(run_suite):
    """The Node.js example's ioredis client on a cluster: a load is told MOVED, an append's MULTI is
    discarded (EXECABORT) because its commands were; both failures name MOVED and the cluster client
    to build in Node.js, the second from the errors ioredis says caused it."""
    require_node_stores()
    result = run_suite("--store", NODE_EXAMPLE, *CLUSTER, "-k", "fresh_session_is_empty or every_session_id")
    assert result.exit_code == 1, result.output
    messages = {f["scenario"]: f["message"] for f in result.summary["failures"]}
    every_id = "test_every_session_id_keeps_its_own_history"
    assert set(messages) == {"test_fresh_session_is_empty", every_id}, result.output
    assert "EXECABORT" in messages[every_id], messages
    assert all("MOVED: on a Redis Cluster" in m and "new Redis.Cluster([redisUrl])" in m for m in messages.values())


@pytest.mark.parametrize("spec", ["tests/stores/node/cluster.mjs:ClusterCountWindowStore",
                                  "tests.stores.cluster:ClusterURLStore"])
def test_a_store_that_builds_its_cluster_client_passes_on_a_cluster_and_on_its_scenarios_own_servers(run_suite, spec):
    """A store that builds a cluster client from redis_url, as the MOVED hint says, needs a cluster
    wherever it is built: the scenarios that run on a server of their own (memory limits, restarts)
    get a cluster of one node there, and the store passes them as it passes the others; the
    server-down scenario, skipped for a synchronous store given the suite's client, builds this one
    on a dead address, and it raises there."""
    if ".mjs:" in spec:   # a Node.js store
        require_node_stores()
    result = run_suite("--store", spec, *ONE_WINDOW, *CLUSTER,
                       "-k", " or ".join(("round_trip_keeps", DOWN, *OWN_SERVER)))
    assert result.exit_code == 0, result.output
    outcomes = {r["scenario"]: r["outcome"] for r in result.summary["results"]}
    assert outcomes == dict.fromkeys({"test_round_trip_keeps_role_content_and_order", DOWN, *OWN_SERVER}, "passed")
    for scenario in OWN_SERVER:
        findings = next(r["findings"] for r in result.summary["results"] if r["scenario"] == scenario)
        assert any(f.startswith("on a server of the scenario's own") and f.endswith("a cluster of it alone)")
                   for f in findings), findings


@pytest.mark.parametrize("spec, failure", [
    (LANGCHAIN, None),
    (LLAMA_INDEX, "building the store raised RuntimeError: no running event loop"),
    (OPENAI_AGENTS, "the store raised TypeError: RedisSession does not support transactions with RedisCluster "
                    "clients."),
], ids=["langchain", "llama-index", "openai-agents"])
def test_the_libraries_on_a_cluster(run_suite, spec, failure):
    """LangChain's history finds the cluster from its URL and builds a cluster client. LlamaIndex's
    chat store (0.8.0) builds its async client in its sync constructor and, on a cluster URL, closes
    the first one with ``asyncio.create_task`` outside any event loop: it cannot be built (the
    failure shows its frames, not the suite's). OpenAI Agents' session refuses a cluster client."""
    result = run_suite("--store", spec, *CLUSTER, "-k", "round_trip_keeps")
    if failure is None:
        assert result.exit_code == 0, result.output
    else:
        assert result.exit_code == 1, result.output
        assert result.summary["failures"][0]["message"].startswith(failure), result.output


def test_every_node_forbids_the_stores_user_what_would_destroy_the_cluster():
    backend = open_backend("cluster", allow_flush=False)
    try:
        assert backend.kind == "cluster" and backend.max_workers == 1 and CLUSTER_ENGINE in backend.description
        nodes = list(backend._owned)
        assert len(nodes) == 3 and len({node.password for node in nodes}) == 1
        for node in nodes:
            with redis.Redis.from_url(node.url) as store_user, redis.Redis.from_url(node.admin_url) as ours:
                for command in (("FLUSHALL",), ("CONFIG", "SET", "maxmemory", "1"), ("CLUSTER", "RESET")):
                    with pytest.raises(redis.exceptions.NoPermissionError):
                        store_user.execute_command(*command)
                assert ours.acl_whoami() == SUITE_USER
        with redis.RedisCluster.from_url(backend.url) as cluster:
            cluster.set("k", "v")
            assert cluster.get("k") == b"v"
    finally:
        backend.stop()
    assert all(node.process is None and not os.path.exists(node.workdir) for node in nodes)
