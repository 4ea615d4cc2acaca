"""Stores in another language, run through the store protocol (memory_regression/foreign.py): the
Node.js count-window example gets the scenarios, conformance level and verdicts its Python twin gets;
its broken twins are caught by the scenarios that catch their Python twins, with the same causes
named; a store that throws or exits is a finding with its own error; a program that breaks the
protocol, or a parameter that cannot cross to another process, is a usage error, never a hang."""

import os
import re
import shutil

import pytest

from tests.conftest import ROOT, assert_usage_error
from tests.corpus import BROKEN, declared_cause
from tests.stores import broken
from tests.verdicts.test_corpus import SLOW_GROUPS

NODE_STORES = ROOT / "examples" / "stores" / "node"
NODE_EXAMPLE = "examples/stores/node/count_window.mjs:CountWindowStore"
TWINS = (broken.OffByOneTrim, broken.ReversedOrder, broken.TTLNotRefreshed, broken.SessionKeyCollision)


@pytest.fixture(autouse=True)
def node_stores():
    """Node.js, and the examples' dependencies (npm ci --prefix examples/stores/node)."""
    missing = ("node is not installed" if shutil.which("node") is None else
               "the Node.js examples' dependencies are not installed: npm ci --prefix examples/stores/node"
               if not (NODE_STORES / "node_modules" / "ioredis").is_dir() else None)
    if missing:
        if os.environ.get("REQUIRE_NODE") == "1":
            pytest.fail(f"REQUIRE_NODE=1 but {missing}")
        pytest.skip(missing)


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
    assert re.search(r"its stderr ended:\nE +shutting down\n", exited.summary["failures"][0]["details"])
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
