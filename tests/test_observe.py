"""Before judging: what a store does with the suite's parameters (memory_regression/observe.py), on
correct stores whose window or TTL is named outside the contract, or that connect on their own."""

import pytest

from memory_regression.binding import inspect_parameters
from memory_regression.contract import UsageError
from memory_regression.settings import Settings, parse_store_params
from tests.conftest import free_port
from tests.test_cli import runner
from tests.stores.misbound import WindowCalledLimit


def test_a_window_of_another_name_stops_the_run_naming_it(run_suite):
    result = run_suite("--store", "tests.stores.misbound:WindowCalledLimit")
    assert result.exit_code == 2, result.output
    message = result.summary["message"]
    assert "keeps only the newest 20 of 100 messages" in message
    assert "limit=20" in message and "--store-params limit=max_messages" in message
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


@pytest.mark.parametrize("spec, error", [
    ("limit", "is not yours=contract's"), ("limit=windows", "'windows' is no contract parameter"),
    ("a=max_messages,a=ttl", "'a' is mapped twice"), ("a=max_messages,b=window", "two parameters are mapped onto"),
    ("1x=ttl", "is not yours=contract's"),
])
def test_store_params_that_cannot_be_read_say_what_to_fix(spec, error, tmp_path):
    with pytest.raises(UsageError, match=error):
        Settings.from_mapping({"store": "x.py:S", "store_params": spec}, tmp_path)


def test_store_params_map_onto_canonical_names_and_must_exist():
    mapping = parse_store_params("limit=window, expire_seconds=expire")
    assert mapping == {"limit": "max_messages", "expire_seconds": "ttl"}
    parameters, _, unfilled = inspect_parameters("s", WindowCalledLimit, {"limit": "max_messages"})
    assert parameters["max_messages"] == "limit" and unfilled == {}
    with pytest.raises(UsageError, match="'size', which --store 's' does not take: its parameters are redis"):
        inspect_parameters("s", WindowCalledLimit, {"size": "max_messages"})


def test_a_default_that_matches_is_blamed_only_on_a_parameter_named_as_a_window():
    """max_retries=30 beside a cap of 30 is no window: only a name such as limit, max_len or k is
    taken for one; the rest are listed as possible causes."""
    from memory_regression.observe import WINDOW_WORDS, _named
    assert [name for name in ("limit", "max_len", "k", "historyLimit", "window_size") if _named(name, WINDOW_WORDS)] \
        == ["limit", "max_len", "k", "historyLimit", "window_size"]
    assert not any(_named(name, WINDOW_WORDS) for name in ("max_retries", "pool_size", "timeout", "retries"))
