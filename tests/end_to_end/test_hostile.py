"""Stores that attack the run (tests/stores/hostile.py): whatever they do, the run survives, names
what happened as a finding about the store, goes on with the other scenarios in a fresh worker,
and leaves valid reports and no process behind (checked for every run in conftest.py)."""

import os
import re

import pytest
import redis
from junitparser import JUnitXml

from memory_regression.engines.servers import FORBIDDEN_COMMANDS, ServerProcess, find_server_binary
from tests.conftest import GOOD, RedisServer, run_entrypoint

ROUND_TRIP = "test_round_trip_keeps_role_content_and_order"
STATEFUL = "test_random_operations_match_the_model"
NO_CAP = "test_no_silent_cap"
# the round trip's append that the stores of _OnRoundTrip misbehave in, as a verdict names it
ROUND_TRIP_CALL = "append('round-trip', 'assistant', \"<b>bold</b> <script>alert('x')</script> &amp; &lt;\")"
CALL_TIMEOUT = "2"         # short enough to keep the tests quick, long enough for every call of a correct store
GRACE_S = 2                # a hung call's scenario ends within CALL_TIMEOUT and this (the dump, the kill)
TIMEOUT = "4"              # the scenario timeout where it is the subject: long enough for every correct scenario
# the scenarios a hostile store's run holds beside the one it misbehaves in (the round trip), where
# the others are not the subject: the quick groups. That the run survived shows in the scenarios
# judged after the misbehaving one (all_but_one's counts); the slow groups would add seconds of the
# correct store's work and no other way to survive (and the stateful scenario, on a machine loaded
# by the tests running beside it, can take longer than TIMEOUT)
QUICK_GROUPS = ("--groups", "core,count-window,ttl,hygiene,faults")


@pytest.fixture(scope="module")
def all_but_one(tmp_path_factory):
    """The totals of a run of these stores that fails one scenario, the round trip, and judges every
    other as the correct store they are built on does: derived from a run of that store, never a
    count written here."""
    correct = run_entrypoint(["--store", "tests.stores.correct:ListStore", *QUICK_GROUPS],
                             report_dir=tmp_path_factory.mktemp("correct") / "reports")
    totals = correct.summary["totals"]
    assert correct.exit_code == 0 and totals["failed"] == totals["errors"] == 0, correct.output
    return {**totals, "passed": totals["passed"] - 1, "failed": 1}


def hostile(name):
    return f"tests.stores.hostile:{name}"


def slow(name):
    return f"tests.stores.slow:{name}"


@pytest.mark.parametrize("store, message, where, in_junit", [
    ("ExitsWithStatusZero", "the store ended the process with status 0 during "
                            f"test_core.py::{ROUND_TRIP}", None, "status 0"),
    ("Segfaults", f"the store's process was killed by SIGSEGV during test_core.py::{ROUND_TRIP}",
     "Segmentation fault", "SIGSEGV"),
    ("KillsItself", "the store's process was killed by SIGKILL (the out-of-memory killer, or a kill -9) "
                    f"during test_core.py::{ROUND_TRIP}", None, "SIGKILL"),
    ("SpinsInC", f"the store's {ROUND_TRIP_CALL} did not return within {CALL_TIMEOUT} s during "
                 f"test_core.py::{ROUND_TRIP}: cut off (a hang, a blocking call without a timeout, or retries that "
                 "outlast it)",
     "in misbehave", "did not return"),
    ("Sleeps", f"the store's {ROUND_TRIP_CALL} did not return within {CALL_TIMEOUT} s during "
               f"test_core.py::{ROUND_TRIP}: cut off", "in misbehave", "did not return"),
    ("BlocksInC", f"the store's {ROUND_TRIP_CALL} did not return within {CALL_TIMEOUT} s during "
                  f"test_core.py::{ROUND_TRIP}: cut off", "in misbehave", "did not return"),
    ("RaisesSystemExit", "the store raised SystemExit: 3", None, "SystemExit: 3"),
])
def test_a_store_that_takes_its_worker_down_fails_only_that_scenario(run_suite, all_but_one, store, message, where,
                                                                     in_junit):
    """Whatever the store does in one call (end the process, hang in Python or in C code that
    holds the GIL), that scenario fails within the call timeout, saying what happened and in which
    call, and the others run in a fresh worker."""
    result = run_suite("--store", hostile(store), "--call-timeout", CALL_TIMEOUT, *QUICK_GROUPS, workers=None)
    assert result.exit_code == 1, result.output
    summary = result.summary
    assert summary["status"] == "failed"
    assert [f["scenario"] for f in summary["failures"]] == [ROUND_TRIP], result.output
    failure = summary["failures"][0]
    assert failure["message"].startswith(message), failure
    assert failure["duration_s"] < float(CALL_TIMEOUT) + GRACE_S, failure
    if where:
        assert where in failure["details"] and "tests/stores/hostile.py" in failure["details"], failure
    assert summary["totals"] == all_but_one, "the scenarios after the crash did not all run"
    cases = {case.name: case for suite in JUnitXml.fromfile(str(result.report_dir / "junit.xml")) for case in suite}
    assert len(cases) == all_but_one["total"] and in_junit in cases[ROUND_TRIP].result[0].message
    assert f"{ROUND_TRIP}</td>" in (result.report_dir / "report.html").read_text(encoding="utf-8")


def test_a_store_that_hangs_from_its_first_append_is_judged_not_refused(run_suite):
    """The probe at binding appends first: a store whose every append hangs is told so in the header, and
    the scenario fails on its own call, cut off at the call timeout, as any hang is: never a usage error."""
    result = run_suite("--store", hostile("HangsFromTheStart"), "--call-timeout", CALL_TIMEOUT, "-k", ROUND_TRIP)
    assert result.exit_code == 1, result.output
    assert "the store's first calls, two appends at binding, did not return within 1 s" in result.output
    [failure] = result.summary["failures"]
    assert failure["scenario"] == ROUND_TRIP
    assert failure["message"].startswith("the store's append('round-trip', 'user', ") and \
        f"did not return within {CALL_TIMEOUT} s during test_core.py::{ROUND_TRIP}" in failure["message"], failure
    assert "tests/stores/hostile.py" in failure["details"] and "in append" in failure["details"], failure


def test_an_async_store_that_never_resolves_is_cut_off(run_suite):
    result = run_suite("--store", hostile("AsyncNeverResolves"), "--call-timeout", CALL_TIMEOUT, *QUICK_GROUPS)
    assert result.exit_code == 1, result.output
    assert [f["scenario"] for f in result.summary["failures"]] == [ROUND_TRIP]
    failure = result.summary["failures"][0]
    assert failure["message"].startswith(f"the store's {ROUND_TRIP_CALL} did not return within {CALL_TIMEOUT} s"), \
        failure
    assert "asyncio" in failure["details"], "the dump shows the event loop waiting"


def test_a_hang_in_the_stateful_scenario_ends_it_at_once(run_suite):
    """Hypothesis would take a timeout inside its state machine for a failure and retry it: the
    worker is killed instead, so the scenario ends at the call timeout."""
    result = run_suite("--store", hostile("HangsInTheStatefulScenario"), "--call-timeout", CALL_TIMEOUT,
                       "--groups", "stateful")
    assert result.exit_code == 1, result.output
    failures = result.summary["failures"]
    assert {f["scenario"] for f in failures} == {STATEFUL}, failures   # once per window size, if any
    for failure in failures:
        assert failure["message"].startswith(f"the store's get('s1:2') did not return within {CALL_TIMEOUT} s "
                                             f"during test_stateful.py::{STATEFUL}"), failure
        assert "in get" in failure["details"]
        assert failure["duration_s"] < float(CALL_TIMEOUT) + GRACE_S, failure


def test_a_correct_store_slow_as_its_history_grows_passes_with_a_warning(run_suite):
    """A store whose append rewrites the whole history is slow, not hung: it passes every
    scenario; the no-silent-cap scenario stops at its budget (a quarter of the scenario timeout
    here, 4 s), says how far it got, and warns how the append time grew (the steady-appends
    guarantee, which its conformance level then lacks). The budget leaves the growth room to show
    on a loaded machine (with a 2 s budget, one CI run of all the tests got no warning: the fewer
    appends a budget holds, the shorter the history grows). The concurrency and stateful groups are left out: their
    hundreds of rewrites (retried under WATCH when writers race) take longer than the short
    scenario timeout on a loaded machine."""
    result = run_suite("--store", slow("RewritesTheWholeHistory"), "--scenario-timeout", "16",
                       "--groups", "-concurrency,-stateful")
    assert result.exit_code == 0, result.output
    assert result.summary["totals"]["failed"] == 0
    no_cap = next(r for r in result.summary["results"] if r["scenario"] == NO_CAP)
    assert len(no_cap["findings"]) == len(no_cap["warnings"]) == 1, no_cap
    [budget] = no_cap["findings"]
    [warning] = no_cap["warnings"]
    assert warning["guarantee"] == "steady-appends"
    growth = warning["text"]
    assert growth.startswith("append time grows with history length: "), growth
    assert "steady-appends" not in result.summary["conformance_level"]
    appended = int(re.search(r"length: ([0-9,]+) appends in ", growth).group(1).replace(",", ""))
    assert budget == (f"appended {appended:,} of 3,000 messages within the 4 s budget; the history held all of "
                      f"them (a cap above {appended:,} would not show)")
    assert no_cap["duration_s"] < 4 + GRACE_S, no_cap


def test_a_scenario_server_dies_with_a_worker_cut_off_in_its_scenario(run_suite):
    """A store that hangs in a scenario that runs on a redis-server of its own: the worker is cut off,
    and that server ends with it (run_suite checks that no process of the run is left)."""
    result = run_suite("--store", hostile("HangsOnItsOwnServer"), "--call-timeout", CALL_TIMEOUT,
                       "-k", "memory_is_full")
    assert result.exit_code == 1, result.output
    failure = result.summary["failures"][0]
    assert failure["message"].startswith("the store's append('pressure', 'user', 'pressure 0001 "), failure
    assert (f"did not return within {CALL_TIMEOUT} s during test_memory_pressure.py::"
            "test_append_raises_when_memory_is_full") in failure["message"], failure


def test_a_scenario_slow_throughout_is_cut_off_by_the_scenario_timeout(run_suite):
    """No call of this store is past the call timeout, but the scenario is past the scenario
    timeout, the backstop: the verdict says so, and which call was running."""
    result = run_suite("--store", slow("SleepsInEveryAppend"), "--call-timeout", "1", "--scenario-timeout", "1.5",
                       "-k", "round_trip")
    assert result.exit_code == 1, result.output
    failure = result.summary["failures"][0]
    assert failure["message"].startswith(
        f"the scenario did not finish within 1.5 s during test_core.py::{ROUND_TRIP}: cut off by the scenario "
        "timeout, with no call of the store past the call timeout"), failure
    assert "; it was in append('round-trip', " in failure["message"], failure


def test_scenarios_not_about_tokens_hand_the_store_a_cheap_counter(run_suite):
    """gpt-4o counts with tiktoken: the round trip (an unbounded budget) hands the store approx,
    the token-window scenario the profile's own counter (the store raises otherwise)."""
    result = run_suite("--store", slow("ChecksItsCounter"), "--model-profiles", "gpt-4o",
                       "-k", "round_trip or token_window")
    assert result.exit_code == 0, result.output
    assert result.summary["totals"]["passed"] == 2, result.summary["totals"]


def test_threads_the_store_leaves_running_do_not_keep_the_run_alive(run_suite):
    result = run_suite("--store", hostile("LeavesAThread"), *QUICK_GROUPS)
    assert result.exit_code == 0, result.output
    assert result.seconds < 60, "the run waited for the store's thread"


@pytest.mark.parametrize("store, command", [("FlushesAll", "FLUSHALL"), ("ShutsDownTheServer", "SHUTDOWN"),
                                            ("PausesTheServer", "CLIENT PAUSE"),
                                            ("KillsTheSuitesConnections", "CLIENT KILL")])
def test_a_store_that_sabotages_the_server_is_a_finding_that_names_the_command(run_suite, all_but_one, store, command):
    result = run_suite("--store", hostile(store), *QUICK_GROUPS)
    assert result.exit_code == 1, result.output
    assert [f["scenario"] for f in result.summary["failures"]] == [ROUND_TRIP]
    assert result.summary["failures"][0]["message"].startswith(
        f"the store ran {command} on the suite's Redis server, which the suite forbids")
    assert result.summary["totals"] == all_but_one


def test_the_private_server_forbids_the_stores_every_command_it_names():
    """Each forbidden command is refused to the default user (the stores'), ACL's own included: the
    user that forbids them is that user, so a rule placed after ACL's would fail unseen."""
    server = ServerProcess.start(find_server_binary())
    try:
        with redis.Redis.from_url(server.admin_url, decode_responses=True) as admin:
            rules = admin.acl_getuser("default")["commands"]
    finally:
        server.stop()
    allowed = [command for command in FORBIDDEN_COMMANDS if f"-{command}" not in rules]
    assert allowed == [], f"the stores may run {allowed}: {rules}"


@pytest.mark.parametrize("store, note", [
    ("RunsAnEndlessScript", "a Lua script of the store's ran on and held the server, which answered every other "
                            "client BUSY: the suite ended it with SCRIPT KILL"),
    ("WritesThenLoopsInAScript", "and had written, so SCRIPT KILL could not end it: the suite restarted its private "
                                 "server"),
])
def test_a_script_that_holds_the_server_is_the_stores_failure_and_the_run_goes_on(run_suite, all_but_one, store, note):
    """A script that never returns holds the whole server (BUSY to every other client): a failure of
    the store, not Redis going away; the suite ends the script, or restarts its own server when
    the script has written, and the other scenarios run. Every failure says the server was held:
    the one whose report the runner examined first names what held it and what the suite did, and
    a failure of a scenario that ran meanwhile on another worker says the server was held then.
    Which failure reaches the runner first is the workers' race (the round trip's call is cut off
    by the call timeout; a scenario of another worker may fail on BUSY before it)."""
    result = run_suite("--store", hostile(store), "--call-timeout", CALL_TIMEOUT, "--fail-on-failure", "false",
                       *QUICK_GROUPS, workers=None)
    assert result.exit_code == 0, result.output
    summary = result.summary
    assert summary["status"] == "failed" and summary["message"] is None, summary["message"]
    assert summary["totals"]["total"] == all_but_one["total"], "every scenario was judged"
    [failure] = [f for f in summary["failures"] if f["scenario"] == ROUND_TRIP]
    assert note in failure["message"], failure
    for other in summary["failures"]:
        if other["scenario"] != ROUND_TRIP:
            assert note in other["message"] or "while it ran, the server was held" in other["message"], other
    cases = {case.name: case for suite in JUnitXml.fromfile(str(result.report_dir / "junit.xml")) for case in suite}
    # the element's text, the whole report: pytest 9.2 cuts the message attribute at 500 characters,
    # and a round trip that ran while another scenario's failure found the server held says so first
    assert note in cases[ROUND_TRIP].result[0].text


def test_a_pause_on_a_server_of_the_users_is_named_from_its_command_statistics(run_suite, all_but_one, redis_server):
    """A server of the user's cannot forbid CLIENT PAUSE: the suite waits for it to answer again and
    names the pause from INFO commandstats, and the run goes on."""
    result = run_suite("--store", hostile("PausesTheServer"), "--call-timeout", CALL_TIMEOUT, "--redis",
                       redis_server.url(), *QUICK_GROUPS)
    assert result.exit_code == 1, result.output
    [failure] = result.summary["failures"]
    assert failure["scenario"] == ROUND_TRIP
    assert "the store paused the server's clients (CLIENT PAUSE, seen in INFO commandstats)" in failure["message"]
    assert result.summary["totals"] == all_but_one


def test_a_script_no_one_may_end_on_a_server_of_the_users_stops_the_run_as_the_stores_failure(run_suite,
                                                                                           redis_server):
    """A script that has written can only end by SHUTDOWN NOSAVE, which the suite does not do to a
    server it did not start: the run stops, as a failure of the store (--fail-on-failure false is
    heeded), not as Redis going away."""
    result = run_suite("--store", hostile("WritesThenLoopsInAScript"), "--call-timeout", CALL_TIMEOUT, "--redis",
                       redis_server.url(), "--fail-on-failure", "false", *QUICK_GROUPS)
    assert result.exit_code == 0, result.output
    summary = result.summary
    assert summary["status"] == "failed"
    assert summary["message"].startswith(f"the store made the Redis server unusable during test_core.py::{ROUND_TRIP}: "
                                         "a Lua script of the store's ran on"), summary["message"]
    assert "UNKILLABLE" in summary["message"] and summary["message"].endswith("the scenarios after it did not run")
    assert [f["scenario"] for f in summary["failures"]] == [ROUND_TRIP]


def test_redis_going_away_is_a_redis_error(run_suite):
    result = run_suite("--store", hostile("KillsTheServer"), "--fail-on-failure", "false", *QUICK_GROUPS)
    assert result.exit_code == 3, result.output
    summary = result.summary
    assert summary["status"] == "redis error"
    assert summary["message"].startswith("Redis went away during ")
    assert "was killed by SIGKILL" in summary["message"]


def test_an_external_server_going_away_is_a_redis_error(run_suite, redis_server):
    result = run_suite("--store", hostile("KillsTheServer"), "--redis", redis_server.url(), *QUICK_GROUPS)
    assert result.exit_code == 3, result.output
    assert result.summary["message"].startswith("Redis went away during ")
    assert "the server does not answer" in result.summary["message"]


def test_captured_output_is_capped(run_suite):
    result = run_suite("--store", hostile("Floods"), "-k", "round_trip or fresh")
    assert result.exit_code == 0, result.output
    report = (result.report_dir / "report.html").read_text(encoding="utf-8")
    assert len(report) < 1_000_000, "report.html holds the whole flood"
    assert "more characters of captured stdout call cut: the suite keeps the first 64 KB of each" in report


@pytest.mark.parametrize("source, message", [
    ("import os\nos._exit(0)\n", "the store ended the process with status 0 while it was being imported and built"),
    ("import time\ntime.sleep(3600)\n",
     f"the store did not return within {TIMEOUT} s while it was being imported and built"),
    ("raise SystemExit(5)\n", "importing it failed"),
    ('raise RuntimeError("bad \\x00 byte, \\x1b[31m colour, \\x07 bell")\n', "RuntimeError: bad"),
])
def test_a_store_module_that_attacks_while_imported_is_a_usage_error(run_suite, tmp_path, source, message):
    (tmp_path / "store.py").write_text(source + "\nclass Store:\n    pass\n")
    result = run_suite("--store", "store.py:Store", "--scenario-timeout", TIMEOUT, cwd=tmp_path)
    assert result.exit_code == 2, result.output
    assert message in result.summary["message"], result.summary["message"]
    markdown = (result.report_dir / "summary.md").read_text(encoding="utf-8")
    assert "\x00" not in markdown and "\x1b" not in markdown and "\x07" not in markdown


def test_a_factory_that_exits_is_a_usage_error(run_suite):
    result = run_suite("--store", hostile("factory_raising_system_exit"))
    assert result.exit_code == 2, result.output
    assert "the factory raised while building a store to inspect" in result.summary["message"]
    assert "SystemExit: 4" in result.summary["message"]


def test_a_failure_pytest_cannot_render_is_still_that_scenarios_failure(run_suite, all_but_one):
    result = run_suite("--store", hostile("UnrenderableFailure"), *QUICK_GROUPS)
    assert result.exit_code == 1, result.output
    assert "INTERNALERROR" not in result.output
    [failure] = result.summary["failures"]
    assert failure["scenario"] == ROUND_TRIP
    assert failure["message"] == "the store raised RuntimeError: the store failed", failure
    assert "pytest could not render this failure: SystemError" in failure["details"]
    assert result.summary["totals"] == all_but_one, "the other scenarios ran"


def test_a_store_that_behaves_otherwise_on_a_replay_is_told_so(run_suite):
    """Hypothesis replays a failing sequence to shrink it; a store whose result does not follow from
    the steps makes it raise Flaky, whose own words ("The second run stopped drawing earlier ...")
    are no diagnosis: the verdict keeps the store's failure and says it did not repeat."""
    result = run_suite("--store", hostile("NotReproducible"), "-k", "stateful")
    assert result.exit_code == 1, result.output
    for failure in result.summary["failures"]:
        assert failure["scenario"] == STATEFUL
        assert "not reproducible: when the same steps ran again, the store behaved differently" in failure["message"]
        assert "second run" not in failure["message"] and "the store raised" not in failure["message"], failure


def test_a_role_no_channel_can_carry_still_fails_the_round_trip(run_suite, all_but_one):
    """A role holding an unpaired surrogate cannot travel as UTF-8 from a worker: the report is sent
    in a form it can, and the round trip fails on it instead of vanishing from the verdict."""
    result = run_suite("--store", hostile("SurrogateRole"), *QUICK_GROUPS)
    assert result.exit_code == 1, result.output
    assert "INTERNALERROR" not in result.output
    assert ROUND_TRIP in result.failing_scenarios(), result.output
    assert result.summary["totals"]["total"] == all_but_one["total"], "no scenario vanished"
    assert all(r["outcome"] != "passed" or r["scenario"] != ROUND_TRIP for r in result.summary["results"])


@pytest.mark.parametrize("store, raised", [("SkipsItsAppends", "append raised SkipTest: storage is not configured"),
                                           ("SkipsWhenBuilt", "factory raised Skipped: no configuration"),
                                           ("ExitsPytest", "append raised Exit: the store is done")])
def test_a_skip_or_exit_raised_by_the_store_is_its_failure(run_suite, all_but_one, store, raised):
    """pytest takes a skip for the scenario's own decision and an exit for the end of the run: from
    store code, each is that scenario's failure, naming what was raised, and the other scenarios run."""
    result = run_suite("--store", hostile(store), *QUICK_GROUPS)
    assert result.exit_code == 1, result.output
    assert "INTERNALERROR" not in result.output and "keyboard-interrupt" not in result.output
    failures = result.summary["failures"]
    assert failures and all(raised in f["message"] for f in failures), failures
    assert all("raised from the store's" in f["message"] for f in failures), failures
    skipped = {r["scenario"] for r in result.summary["results"] if r["outcome"] == "skipped"}
    assert ROUND_TRIP not in skipped and "test_fresh_session_is_empty" not in skipped
    assert result.summary["totals"]["total"] == all_but_one["total"], "every scenario was judged"


def test_processes_the_store_leaves_end_with_the_run_named(run_suite):
    """A detached ``sleep`` and a forked grandchild holding the worker's output open: both are
    killed when the run ends (the run does not wait for them) and named as what the store left
    running, in the terminal and the reports; the verdict is the store's as before."""
    result = run_suite("--store", hostile("LeavesProcesses"), *QUICK_GROUPS)
    assert result.exit_code == 0, result.output
    assert result.seconds < 60, "the run waited for the store's processes"
    leftovers = result.summary["leftovers"]
    assert any(text.startswith("sleep 1000 (pid ") for text in leftovers), leftovers
    assert len(leftovers) == 2, leftovers   # the sleep and the grandchild, each once
    assert "left running after the run, killed: sleep 1000 (pid" in result.output
    assert "Processes the store left running after the run" in (result.report_dir / "summary.md").read_text()
    assert "Left running after the run, killed" in (result.report_dir / "report.html").read_text()
    for text in leftovers:
        pid = int(re.search(r"\(pid (\d+)\)$", text).group(1))
        assert not os.path.exists(f"/proc/{pid}") or "Z" in open(f"/proc/{pid}/stat").read().split()[2]


def test_huge_exceptions_of_the_store_leave_reports_and_output_of_a_few_mb(run_suite):
    """Six or more scenarios fail with a 20 MB message and a 20 MB note each: every report file and the run's
    output stay within a few MB, and each cut says how large the text was."""
    result = run_suite("--store", hostile("RaisesHugeErrors"), "--groups", "core,ttl")
    assert result.exit_code == 1, result.output[-3000:]
    assert len(result.summary["failures"]) >= 6, result.summary["totals"]
    sizes = {path.name: path.stat().st_size for path in result.report_dir.iterdir()}
    assert all(size < 4 << 20 for size in sizes.values()), sizes
    assert len(result.output.encode()) < 4 << 20, len(result.output.encode())
    assert "more characters of this message cut" in result.summary["failures"][0]["message"]


def test_connections_the_store_exhausts_are_its_failure_not_redis_going_away(run_suite):
    """A store that keeps every connection it opens, on a server of the user's with maxclients 40: no new
    client can connect, the suite's included; the suite's reserved connection reads the server's count,
    and the run stops as the store's failure (exit 1), not as Redis going away (exit 3)."""
    server = RedisServer("--maxclients", "40")
    try:
        result = run_suite("--store", hostile("LeaksConnections"), "--redis", server.url(), "--groups", "core")
    finally:
        server.stop()
    assert result.exit_code == 1, result.output[-3000:]
    summary = result.summary
    assert summary["status"] == "failed", summary["message"]
    assert "connections are exhausted" in summary["message"] and "maxclients 40" in summary["message"], summary


def test_a_fork_chain_the_store_leaves_ends_with_the_run_named_once(run_suite):
    """Each generation forks its successor and exits: no generation lives long enough to be killed by its pid.
    The worker's process group, which every generation inherits, is killed as one once the worker has ended;
    the chain is named once (by the generations a look through /proc caught, or by its group when it caught
    none), and nothing of it outlives the run (run_suite checks)."""
    result = run_suite("--store", hostile("ForksAChain"), *QUICK_GROUPS)
    assert result.exit_code == 0, result.output
    assert result.seconds < 30, "the run's output stayed open: the chain outlived the run"
    leftovers = result.summary["leftovers"]
    assert len(leftovers) == 1 and re.fullmatch(
        r"processes in the process group of a worker \(pgid \d+\) that each lived too briefly to be named, as the "
        r"generations of a chain of forks do|a process the store forked from its worker, without exec \(pid \d+\)"
        r"(, and \d+ more of it)?", leftovers[0]), leftovers


def test_the_helpers_of_a_correct_stores_writer_processes_are_no_leftovers(run_suite):
    """The concurrency scenarios' writer processes leave each worker multiprocessing's forkserver and resource
    tracker, which end with it: on as many workers as the machine gives, no chain of forks is reported for them
    (before, two workers of three were reported on every run)."""
    result = run_suite("--store", GOOD, "--groups", "concurrency", workers=None)
    assert result.exit_code == 0, result.output
    assert result.summary["leftovers"] == [], result.summary["leftovers"]


def test_a_hang_no_timeout_of_a_worker_sees_ends_at_the_run_deadline(run_suite):
    """A store that hides its call from the call timeout and sleeps, under a scenario timeout longer
    than the run may take: the run's deadline stops it, the reports are written and say the run did
    not finish, exit 1 (whatever --fail-on-failure says: it is no verdict on the store)."""
    result = run_suite("--store", hostile("HidesItsCallAndSleeps"), "--run-timeout", "15", "--fail-on-failure",
                       "false", *QUICK_GROUPS)
    assert result.exit_code == 1, result.output
    assert result.seconds < 45, result.seconds
    summary = result.summary
    assert summary["status"] == "did not finish", summary["status"]
    assert summary["message"] == ("the run did not finish within --run-timeout 15 s: it was cut off, and the "
                                  "results below are partial")
    assert summary["totals"]["passed"] > 0, "what ran before the hang is kept"
    assert "did not finish" in (result.report_dir / "summary.md").read_text()


TOKEN = "ghs_" + "tokenOfTheTest0123456789"


def test_ci_credentials_are_kept_from_the_store_and_redacted_everywhere(run_suite, tmp_path):
    """GitHub's token and the Actions runtime's are removed from the environment the workers (and so
    the store) inherit; a store that finds the token anyway (in the runner's initial environment,
    in /proc) and puts it in its failure and its output has it redacted in the output and in all
    four reports."""
    result = run_suite("--store", hostile("ReportsCredentials"), *QUICK_GROUPS, "-k", "round_trip",
                       env={"GITHUB_TOKEN": TOKEN, "ACTIONS_RUNTIME_TOKEN": TOKEN[::-1],
                            "ACTIONS_RUNTIME_URL": "https://pipelines.example/runtime/"})
    assert result.exit_code == 1, result.output
    [failure] = result.summary["failures"]
    assert failure["message"] == ("the store raised RuntimeError: my environment holds no credential; the "
                                  "runner's token is ***"), failure
    assert TOKEN not in result.output and "the store printed the token ***" in result.output
    for name in ("junit.xml", "report.html", "summary.md", "summary.json"):
        text = (result.report_dir / name).read_text(encoding="utf-8")
        assert TOKEN not in text and TOKEN[::-1] not in text, name
