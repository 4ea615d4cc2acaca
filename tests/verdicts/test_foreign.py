"""Stores in another language, run through the store protocol (memory_regression/contract/foreign.py): the
Node.js count-window and token-window examples get the scenarios, conformance level and verdicts
their Python twins get, the token window counted by the store's own counter; a store built with the
suite's token counter and summariser, which it calls back, gets the token-window and compaction
scenarios; the broken twins are caught by the scenarios that catch their Python twins, with the
same causes named; LangChain.js's Redis history runs natively, failing only where the library alone fails too; a
store that throws or exits is a finding with its own error; a program that breaks the protocol, or a
parameter that cannot cross to another process, is a usage error, never a hang."""

import re
import subprocess

import pytest

from tests.conftest import NODE_TEST_STORES, ROOT, assert_usage_error, require_node_stores
from tests.corpus import BROKEN, TOKEN_ARGS, declared_cause, same_level
from tests.stores import broken, compaction, faults, identity
from tests.stores.libraries import KILLED, NODE_LIBRARY_STORES
from tests.verdicts.test_corpus import SLOW_GROUPS

NODE_COUNTER = ("--token-counter", "examples/stores/node/token_window.mjs:messageTokens")
# each Node.js example, with its options, and its Python twin with its own
EXAMPLES = {
    "examples/stores/node/count_window.mjs:CountWindowStore": (
        (), "examples/stores/count_window.py:CountWindowStore", ()),
    "examples/stores/node/token_window.mjs:TokenWindowStore": (
        NODE_COUNTER, "examples/stores/token_window.py:TokenWindowStore",
        ("--token-counter", "examples/stores/token_window.py:message_tokens")),
}
# each broken Python store's Node.js twin (same name), with its options; ClientRetries's failure names
# its language's client, where its Python twin's names redis-py
TWINS = {broken.OffByOneTrim: ("broken.mjs", ()), broken.ReversedOrder: ("broken.mjs", ()),
         broken.TTLNotRefreshed: ("broken.mjs", ()), broken.SessionKeyCollision: ("broken.mjs", ()),
         broken.TokenOverTrim: ("broken.mjs", (*TOKEN_ARGS, *NODE_COUNTER)),
         broken.OversizeKeepsRest: ("broken.mjs", (*TOKEN_ARGS, *NODE_COUNTER)),
         compaction.UncountedSummary: ("compacting.mjs", TOKEN_ARGS), faults.ClientRetries: ("broken.mjs", ())}
CLIENT_NAMED = {faults.ClientRetries: r"its client \(ioredis re-sends the commands in flight when its connection drops"}


@pytest.fixture(autouse=True)
def node_stores():
    require_node_stores()


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda spec: spec.rpartition(":")[2])
def test_a_node_example_gets_what_its_python_twin_gets(run_suite, tmp_path, example):
    args, twin, twin_args = EXAMPLES[example]
    node = run_suite("--store", example, *args, "--groups", "all", report_dir=tmp_path / "node")
    python = run_suite("--store", twin, *twin_args, "--groups", "all", report_dir=tmp_path / "python")
    assert node.exit_code == 0 and python.exit_code == 0, node.output
    for key in ("shape", "capabilities", "conformance_level", "status"):
        assert node.summary[key] == python.summary[key], key
    outcomes = {(r["nodeid"], r["outcome"]) for r in node.summary["results"]}
    assert outcomes == {(r["nodeid"], r["outcome"]) for r in python.summary["results"]}
    path, _, name = example.rpartition(":")
    lines = (ROOT / path).read_text().splitlines()
    defined = next(number for number, line in enumerate(lines, 1) if line.startswith(f"export class {name} "))
    assert node.summary["store_file"] == str(ROOT / path) and node.summary["store_line"] == defined
    assert [e["nodeid"] for e in node.summary["latency"]] == [e["nodeid"] for e in python.summary["latency"]]


def test_a_store_built_with_the_suites_counter_and_summariser_calls_them_back(run_suite):
    """countTokens and summarize reach the Node.js store as async functions that run in the suite:
    the token-window and compaction scenarios run on it, and it passes them as its Python twin does
    (its append and trim one script, where the twin's trim is a second step: atomic-window too)."""
    spec = "tests/stores/node/compacting.mjs:CompactingTokenStore"
    result = run_suite("--store", spec, *TOKEN_ARGS)
    assert result.exit_code == 0, result.output
    assert same_level(spec, result.summary["conformance_level"],
                      "core+token-window+ttl+namespace+clear+compaction+bounded-storage+steady-appends+atomic-window"
                      "+any-session-id+prefixed-keys"), result.summary["conformance_level"]
    passed = {r["scenario"] for r in result.summary["results"] if r["outcome"] == "passed"}
    assert {"test_token_window_keeps_maximal_suffix", "test_compaction_keeps_the_token_budget",
            "test_a_failing_summarizer_leaves_the_session_as_it_was"} <= passed, result.output


def test_the_options_name_a_node_stores_parameters_and_methods_in_its_own_spelling(run_suite):
    """--store-params and the method options take the store's own names (historyLimit, recordTurn), as
    they take a Python store's."""
    result = run_suite("--store", "tests/stores/node/shapes.mjs:OwnNames", "--store-params",
                       "historyLimit=max_messages", "--append-method", "recordTurn", "--load-method", "transcript",
                       "--groups", "core,count-window")
    assert result.exit_code == 0, result.output
    assert result.summary["capabilities"] == ["core", "count-window"], result.summary["capabilities"]
    assert "test_count_window_keeps_last_n" in {r["scenario"] for r in result.summary["results"]
                                                if r["outcome"] == "passed"}


def test_a_typescript_store_runs_through_tsx(run_suite):
    """A store written in TypeScript (types, an interface, a parameter property) loads through tsx
    from its project, and gets the example's capabilities and verdicts."""
    result = run_suite("--store", "tests/stores/node/typed.ts:TypedCountWindowStore", "--groups",
                       "core,count-window,ttl,hygiene")
    assert result.exit_code == 0, result.output
    assert result.summary["capabilities"] == ["clear", "core", "count-window", "namespace", "ttl"]
    assert result.summary["store_line"] == 10 and result.summary["totals"]["failed"] == 0


# what each failure of a Node.js library store says, as the scripts of the library alone show it
LIBRARY_CAUSES = {
    "node:@langchain/redis:RedisChatMessageHistory": {
        **dict.fromkeys(KILLED, "): it exited with status 1"),
        "test_concurrent_writers_lose_nothing": "store.Error: Socket already opened"},
    "node:@langchain/community/stores/message/ioredis:RedisChatMessageHistory": {
        "test_store_raises_when_the_server_is_down": "did not return within 10 s",
        "test_store_neither_duplicates_nor_loses_a_message_whose_reply_was_lost":
            "stored 2 times after the reply to its LPUSH was lost: the append was sent again, a blind retry of a "
            "non-idempotent write, by the store's own retry loop or by its client (ioredis re-sends"},
}


@pytest.mark.parametrize("entry", [entry for entry in NODE_LIBRARY_STORES if entry.package.startswith("@langchain/")],
                         ids=lambda entry: entry.package)
def test_a_langchain_js_redis_history_runs_natively_and_fails_where_the_library_alone_fails(run_suite, tmp_path,
                                                                                            entry):
    """The package's export, with no adapter: recognised as a LangChain.js chat history (one per session,
    whole messages in LangChain.js's own objects, tool calls in its format), it passes the round trips,
    tool calls and TTL, and fails only where the test below shows the library alone failing (a race
    in some runs only: ``may_fail``)."""
    result = run_suite("--store", entry.spec, *entry.args, cwd=ROOT / entry.project, report_dir=tmp_path / "reports",
                       workers=1)   # the call timeout, which a worker's supervisor keeps, as in a user's run
    assert result.exit_code == 1, result.output
    summary = result.summary
    assert summary["capabilities"] == ["clear", "core", "tool-calls", "ttl"], summary["capabilities"]
    assert summary["shape"] == "LangChain.js chat history: add_message(message)", summary["shape"]
    assert set(entry.failing) <= result.failing_scenarios() <= {*entry.failing, *entry.may_fail}, result.output
    for failure in summary["failures"]:
        assert LIBRARY_CAUSES[entry.spec][failure["scenario"]] in failure["message"], failure["message"]
    assert not summary["warnings"], summary["warnings"]
    passed = {r["scenario"] for r in summary["results"] if r["outcome"] == "passed"}
    assert {"test_tool_calls_and_metadata_round_trip", "test_append_refreshes_ttl",
            "test_round_trip_keeps_role_content_and_order"} <= passed


def alone(script: str, url: str, *mode: str) -> subprocess.CompletedProcess:
    return subprocess.run(["node", script, url, *mode], cwd=NODE_TEST_STORES, capture_output=True, text=True,
                          timeout=60)


def test_the_langchain_js_failures_reproduce_with_the_library_alone(redis_server):
    killed = alone("langchain_alone.mjs", redis_server.url(), "killed")
    assert killed.returncode == 1, killed.stdout + killed.stderr
    assert "Unhandled 'error' event" in killed.stderr and "SocketClosedUnexpectedlyError" in killed.stderr
    concurrent = alone("langchain_alone.mjs", redis_server.url(), "concurrent")
    assert concurrent.stdout.splitlines() == ["stored", "threw: Socket already opened"], concurrent.stdout


def test_the_langchain_community_failures_reproduce_with_the_library_alone(redis_server):
    """With no server, an append of the ioredis history raises only after ioredis's 20 retries (past
    the suite's 10 s call timeout); and an LPUSH whose reply a proxy dropped is stored twice."""
    down = alone("langchain_community_alone.mjs", redis_server.url(), "down")
    took = re.fullmatch(r"raised after ([\d.]+) s: Reached the max retries per request limit \(which is 20\)\..*\n",
                        down.stdout)
    assert took and float(took[1]) > 10, down.stdout + down.stderr
    lost = alone("langchain_community_alone.mjs", redis_server.url(), "lost-reply")
    assert lost.stdout == "stored 2 times\n", lost.stdout + lost.stderr


def test_mastra_deletes_other_threads_by_a_pattern(run_suite, tmp_path):
    """Mastra's Redis storage, bound by the Node.js driver as it is (a thread per session, as Mastra's Memory
    keeps it), on the identity group: deleteThread('al*') deletes thread 'alice' and the others its id matches
    as a pattern, and that delete walks the keyspace with SCAN; both failures say so."""
    require_node_stores()
    result = run_suite("--store", "node:@mastra/redis:RedisStore", "--groups", "identity", cwd=NODE_TEST_STORES,
                       report_dir=tmp_path / "reports")
    assert result.summary["shape"] == "Mastra storage: append(session_id, role, content)", result.output
    messages = {f["scenario"]: f["message"] for f in result.summary["failures"]}
    assert set(messages) == {identity.CLEARING, identity.SHARED_DATABASE}, result.output
    assert re.match(r"clear\(session 'al\*'\) deleted session '[^']+' and \d+ more .*: the id reached a key pattern "
                    r"\(KEYS, SCAN MATCH\) unescaped, and as a pattern 'al\*' matches", messages[identity.CLEARING])
    assert re.match(r"the store ran SCAN [\d,]+ times? in its clear: SCAN walks the whole keyspace",
                    messages[identity.SHARED_DATABASE]), messages


def test_mastra_storage_runs_natively_and_fails_as_its_row_says(run_suite, tmp_path):
    """@mastra/redis's RedisStore, with no adapter: recognised as Mastra storage (a thread per session, role and
    content), it fails the scenarios of its row (and those of ``may_fail`` on some runs, or any other whose appends
    met its reordering of one millisecond's messages), with no warning."""
    require_node_stores()
    [entry] = [entry for entry in NODE_LIBRARY_STORES if entry.package == "@mastra/redis"]
    result = run_suite("--store", entry.spec, cwd=ROOT / entry.project, report_dir=tmp_path / "reports", workers=1)
    summary = result.summary
    assert [summary["shape"], summary["capabilities"]] == ["Mastra storage: append(session_id, role, content)",
                                                           ["clear", "core"]], result.output
    messages = {f["scenario"]: f["message"] for f in summary["failures"]}
    assert set(entry.failing) <= set(messages), result.output
    # messages saved in one millisecond come back out of order: any scenario that appends fast meets it on some runs
    beyond = set(messages) - {*entry.failing, *entry.may_fail}
    assert all("history is reordered" in messages[scenario] for scenario in beyond), result.output
    lost = messages["test_round_trip_keeps_role_content_and_order"]
    assert "every system message of the 14 and only those" in lost, lost
    assert not summary["warnings"], summary["warnings"]


def test_the_mastra_failure_reproduces_with_the_library_alone(redis_server):
    """deleteThread('al*') with @mastra/redis alone: thread 'alice' loses its message too."""
    deleted = alone("mastra_alone.mjs", redis_server.url())
    assert deleted.stdout.splitlines() == ["alice: 0 messages", "al*: 0 messages"], deleted.stdout + deleted.stderr


@pytest.mark.parametrize("twin", TWINS, ids=lambda twin: twin.__name__)
def test_a_broken_node_store_is_caught_as_its_python_twin_is(run_suite, twin):
    module, args = TWINS[twin]
    expected = set(BROKEN[twin])
    left_out = [group for group, scenarios in SLOW_GROUPS.items() if not scenarios & expected]
    result = run_suite("--store", f"tests/stores/node/{module}:{twin.__name__}", *args,
                       *(("-k", " and ".join(f"not {group}" for group in left_out)) if left_out else ()))
    assert result.exit_code == 1, result.output
    failing = result.failing_scenarios()
    assert failing - broken.MAY_ALSO_CATCH == expected - broken.MAY_ALSO_CATCH, result.output
    _kind, patterns = declared_cause(twin)
    for failure in result.summary["failures"]:
        if failure["scenario"] in patterns:
            assert re.search(patterns[failure["scenario"]], failure["message"]), failure["message"]
            assert re.search(CLIENT_NAMED.get(twin, ""), failure["message"]), failure["message"]


def test_what_a_node_store_throws_prints_or_hangs_on_is_its_own(run_suite):
    """An error the store throws fails the scenarios that meet it, with the store's name, message and
    stack (not the driver's); a store that exits the program fails with what it printed and its exit
    status, also when it exits between two calls; what it prints stays out of the protocol; a call
    that never answers is cut off by --call-timeout, naming it, and leaves no process behind."""
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
    idle = run_suite("--store", "tests/stores/node/hostile.mjs:ExitsWhenIdle", "--groups", "core")
    assert idle.exit_code == 1 and idle.summary["failures"], idle.output   # a new program for each scenario hid it
    assert all("): it exited with status 5" in f["message"] for f in idle.summary["failures"]), idle.output
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
    ("examples/stores/node/token_window.mjs:TokenWindowStore", ("--token-counter", "tests/stores/node/hostile.mjs:"
     "fractionalTokens"), "returned 6.25 for 'Hello, how are you today?': it must return the message's cost as a "
     "whole number of tokens"),
    ("examples/stores/node/token_window.mjs:TokenWindowStore", ("--token-counter", "tests/stores/node/missing.mjs:n"),
     "--token-counter 'tests/stores/node/missing.mjs:n': no file tests/stores/node/missing.mjs under"),
], ids=["client", "no-export", "no-file", "garbage", "silent", "mute", "no-program", "counter-fraction",
        "counter-no-file"])
def test_a_program_that_cannot_serve_the_store_is_a_usage_error(run_suite, spec, args, phrase):
    result = run_suite("--store", spec, "--groups", "core", *args)
    assert_usage_error(result, phrase)
