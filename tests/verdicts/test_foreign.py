"""Stores in another language, run through the store protocol (memory_regression/foreign.py): the
Node.js count-window example gets the scenarios, conformance level and verdicts its Python twin gets;
its broken twins are caught by the scenarios that catch their Python twins, with the same causes
named; LangChain.js's Redis history runs natively, failing only where the library alone fails too; a
store that throws or exits is a finding with its own error; a program that breaks the protocol, or a
parameter that cannot cross to another process, is a usage error, never a hang."""

import re
import shutil
import subprocess

import pytest

from tests.conftest import assert_usage_error, ROOT, unavailable
from tests.corpus import BROKEN, declared_cause
from tests.stores import broken
from tests.verdicts.test_corpus import SLOW_GROUPS

NODE_STORES = ROOT / "examples" / "stores" / "node"
TEST_STORES = ROOT / "tests" / "stores" / "node"
NODE_EXAMPLE = "examples/stores/node/count_window.mjs:CountWindowStore"
TWINS = (broken.OffByOneTrim, broken.ReversedOrder, broken.TTLNotRefreshed, broken.SessionKeyCollision)


@pytest.fixture(autouse=True)
def node_stores():
    """Node.js, and the dependencies of the examples and of the test stores (npm ci --prefix each)."""
    needed = ((NODE_STORES, "ioredis"), (TEST_STORES, "tsx"), (TEST_STORES, "@langchain/redis"))
    uninstalled = [directory.relative_to(ROOT) for directory, package in needed
                   if not (directory / "node_modules" / package).is_dir()]
    missing = ("node is not installed" if shutil.which("node") is None else
               f"the Node.js stores' dependencies are not installed: npm ci --prefix {uninstalled[0]}"
               if uninstalled else None)
    if missing:
        unavailable("REQUIRE_NODE", missing)


def test_the_node_example_gets_what_its_python_twin_gets(run_suite, tmp_path):
    node = run_suite("--store", NODE_EXAMPLE, "--groups", "all", report_dir=tmp_path / "node")
    python = run_suite("--store", "examples/stores/count_window.py:CountWindowStore", "--groups", "all",
                       report_dir=tmp_path / "python")
    assert node.exit_code == 0 and python.exit_code == 0, node.output
    for key in ("shape", "capabilities", "conformance_level", "status"):
        assert node.summary[key] == python.summary[key], key
    outcomes = {(r["nodeid"], r["outcome"]) for r in node.summary["results"]}
    assert outcomes == {(r["nodeid"], r["outcome"]) for r in python.summary["results"]}
    assert node.summary["store_file"] == str(NODE_STORES / "count_window.mjs") and node.summary["store_line"] == 7
    assert [e["nodeid"] for e in node.summary["latency"]] == [e["nodeid"] for e in python.summary["latency"]]


def test_a_typescript_store_runs_through_tsx(run_suite):
    """A store written in TypeScript (types, an interface, a parameter property) loads through tsx
    from its project, and gets the example's capabilities and verdicts."""
    result = run_suite("--store", "tests/stores/node/typed.ts:TypedCountWindowStore", "--groups",
                       "core,count-window,ttl,hygiene")
    assert result.exit_code == 0, result.output
    assert result.summary["capabilities"] == ["clear", "core", "count-window", "namespace", "ttl"]
    assert result.summary["store_line"] == 10 and result.summary["totals"]["failed"] == 0


LANGCHAIN_JS = "node:@langchain/redis:RedisChatMessageHistory"
# what @langchain/redis 1.1.2 fails, each with what its failure says: its node-redis client has no
# 'error' listener, so a connection the server closes ends the process (always caught); and a history's
# first calls at once both connect its client, which the writers sharing one store meet when their first
# calls arrive in one turn of Node's event loop (caught in some runs: about two of three here, under
# load). langchain_alone.mjs shows both with the library alone, the second every time.
LANGCHAIN_JS_CRASHES = {
    "test_store_reconnects_after_its_connections_are_killed": "): it exited with status 1",
    "test_store_neither_duplicates_nor_loses_a_message_whose_reply_was_lost": "): it exited with status 1",
    "test_a_restart_between_turns_loses_nothing": "): it exited with status 1",
}
LANGCHAIN_JS_RACE = {"test_concurrent_writers_lose_nothing": "store.Error: Socket already opened"}


def test_langchain_js_redis_history_runs_natively_and_fails_where_the_library_alone_fails(run_suite, tmp_path):
    """The package's export, with no adapter: recognised as a LangChain.js chat history (one per session,
    whole messages in LangChain.js's own objects, tool calls in its format), it passes the round trips,
    tool calls and TTL, and fails only where the test below shows the library alone failing."""
    result = run_suite("--store", LANGCHAIN_JS, cwd=TEST_STORES, report_dir=tmp_path / "reports")
    assert result.exit_code == 1, result.output
    summary = result.summary
    assert summary["capabilities"] == ["clear", "core", "tool-calls", "ttl"], summary["capabilities"]
    assert summary["shape"] == "one object per session: add_message(message); messages as dict", summary["shape"]
    causes = {**LANGCHAIN_JS_CRASHES, **LANGCHAIN_JS_RACE}
    assert set(LANGCHAIN_JS_CRASHES) <= result.failing_scenarios() <= set(causes), result.output
    for failure in summary["failures"]:
        assert causes[failure["scenario"]] in failure["message"], failure["message"]
    passed = {r["scenario"] for r in summary["results"] if r["outcome"] == "passed"}
    assert {"test_tool_calls_and_metadata_round_trip", "test_append_refreshes_ttl",
            "test_round_trip_keeps_role_content_and_order"} <= passed


def test_the_langchain_js_failures_reproduce_with_the_library_alone(redis_server):
    def alone(mode):
        return subprocess.run(["node", "langchain_alone.mjs", redis_server.url(), mode], cwd=TEST_STORES,
                              capture_output=True, text=True, timeout=60)
    killed = alone("killed")
    assert killed.returncode == 1, killed.stdout + killed.stderr
    assert "Unhandled 'error' event" in killed.stderr and "SocketClosedUnexpectedlyError" in killed.stderr
    concurrent = alone("concurrent")
    assert concurrent.stdout.splitlines() == ["stored", "threw: Socket already opened"], concurrent.stdout


@pytest.mark.parametrize("twin", TWINS, ids=lambda twin: twin.__name__)
def test_a_broken_node_store_is_caught_as_its_python_twin_is(run_suite, twin):
    expected = set(BROKEN[twin])
    left_out = [group for group, scenarios in SLOW_GROUPS.items() if not scenarios & expected]
    result = run_suite("--store", f"tests/stores/node/broken.mjs:{twin.__name__}",
                       *(("-k", " and ".join(f"not {group}" for group in left_out)) if left_out else ()))
    assert result.exit_code == 1, result.output
    failing = result.failing_scenarios()
    assert failing - broken.MAY_ALSO_CATCH == expected - broken.MAY_ALSO_CATCH, result.output
    _kind, patterns = declared_cause(twin)
    for failure in result.summary["failures"]:
        if failure["scenario"] in patterns:
            assert re.search(patterns[failure["scenario"]], failure["message"]), failure["message"]


def test_what_a_node_store_throws_prints_or_hangs_on_is_its_own(run_suite):
    """An error the store throws fails the scenarios that meet it, with the store's name, message and
    stack (not the driver's); a store that exits the program fails with what it printed and its exit
    status; what it prints stays out of the protocol; a call that never answers is cut off by
    --call-timeout, naming it, and leaves no process behind."""
    thrown = run_suite("--store", "tests/stores/node/hostile.mjs:ThrowsOnSystem", "--groups", "core")
    assert thrown.exit_code == 1 and "test_round_trip_keeps_role_content_and_order" in thrown.failing_scenarios()
    details = next(f["details"] for f in thrown.summary["failures"]
                   if f["scenario"] == "test_round_trip_keeps_role_content_and_order")
    assert "store.TypeError: no system messages here" in details and "hostile.mjs:8" in details
    assert "driver.mjs" not in details
    exited = run_suite("--store", "tests/stores/node/hostile.mjs:ExitsOnLoad", "-k", "round_trip")
    assert exited.exit_code == 1, exited.output
    message = exited.summary["failures"][0]["message"]
    assert re.search(r"the store's program \(node .*driver\.mjs .*ExitsOnLoad\): it exited with status 7", message)
    assert re.search(r"its stderr ended:\nE? +shutting down", exited.summary["failures"][0]["details"])
    hung = run_suite("--store", "tests/stores/node/hostile.mjs:HangsOnLoad", "-k", "round_trip", "--call-timeout", "2",
                     workers=1)   # cut off with the worker it is in
    assert hung.exit_code == 1 and hung.summary["leftovers"] == [], hung.output
    assert "the store's get_messages('round-trip') did not return within 2 s" in hung.summary["failures"][0]["message"]


@pytest.mark.parametrize("spec, args, phrase", [
    ("tests/stores/node/hostile.mjs:TakesAClient", (), "requires 'client', which would be the contract's 'redis': it "
     "cannot cross to the store's process (take redis_url (redisUrl) and build the client in the store)"),
    ("tests/stores/node/hostile.mjs:NoSuchStore", (), "loading it failed:\nError: "),
    ("tests/stores/node/missing.mjs:Store", (), "no file tests/stores/node/missing.mjs under the working directory"),
    ("cmd:python3 tests/stores/node/not_a_driver.py garbage", (), "its first line is not the protocol's greeting "
     "(memory-regression-store/1): 'Listening on port 3000'"),
    ("cmd:python3 tests/stores/node/not_a_driver.py silent", (), "): it exited with status 0"),
    ("cmd:python3 tests/stores/node/not_a_driver.py mute", ("--scenario-timeout", "3"),
     ": it said nothing within 1.5 s of starting"),
    ("cmd:no-such-program --serve", (), "'no-such-program' is not installed or not on PATH"),
], ids=["client", "no-export", "no-file", "garbage", "silent", "mute", "no-program"])
def test_a_program_that_cannot_serve_the_store_is_a_usage_error(run_suite, spec, args, phrase):
    result = run_suite("--store", spec, "--groups", "core", *args)
    assert_usage_error(result, phrase)
