"""Before judging: what a store does with the suite's parameters (memory_regression/observe.py), on
correct stores whose window or TTL is named outside the contract, or that connect on their own."""


from tests.conftest import free_port
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


def test_a_store_that_writes_nothing_to_redis_is_a_usage_error(run_suite):
    result = run_suite("--store", "tests.stores.misbound:InTheProcess")
    assert result.exit_code == 2, result.output
    assert "wrote no key on the server under test" in result.summary["message"]


def test_stores_that_take_everything_are_not_probed(tmp_path):
    done = runner("--list", "--store", "tests.stores.correct:ListStore", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "observed" not in done.stdout and "does not fill" not in done.stdout


def test_a_store_that_cannot_be_built_passes_nothing(run_suite):
    """Every build raises: every scenario that builds the store fails with that error, the server-down
    scenario too, which accepts a build error only on the dead server, once the store built on the live one."""
    result = run_suite("--store", "tests.stores.misbound:RefusesToBeBuilt", "--groups", "core,faults")
    assert result.exit_code == 1, result.output
    outcomes = {r["scenario"]: r["outcome"] for r in result.summary["results"]}
    assert outcomes["test_store_raises_when_the_server_is_down"] == "failed", outcomes
    assert "passed" not in outcomes.values(), outcomes
    assert all("mutually exclusive" in f["message"] for f in result.summary["failures"]), result.summary["failures"]
