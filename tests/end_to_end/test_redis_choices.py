"""The Redis a run is given: an unreachable URL, a server choice with no binary, the fallback to
fakeredis, and a user's own server, which must start empty, is left empty, and may refuse the
suite what it needs."""


import pytest

from tests.conftest import GOOD, ONE_SCENARIO, RedisServer, assert_error_reports, assert_usage_error


@pytest.fixture(scope="module")
def external_server():
    server = RedisServer()
    yield server
    server.stop()


def test_unreachable_redis_url(run_suite):
    import socket
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    result = run_suite("--store", GOOD, "--redis", f"redis://127.0.0.1:{port}/0")
    assert result.exit_code == 3, result.output
    assert "cannot reach the server" in result.output
    assert_error_reports(result)


def test_server_choice_without_a_binary(run_suite):
    result = run_suite("--store", GOOD, "--redis", "server", env={"PATH": "/nonexistent"})
    assert result.exit_code == 3, result.output
    assert "no redis-server or valkey-server on PATH" in result.output
    assert_error_reports(result)


def test_auto_falls_back_to_fakeredis_with_a_warning(run_suite):
    result = run_suite("--store", GOOD, env={"PATH": "/nonexistent"})
    assert result.exit_code == 0, result.output
    summary = result.summary
    assert "fakeredis" in summary["backend"]
    assert "used fakeredis" in summary["backend_warning"]
    assert "used fakeredis" in (result.report_dir / "summary.md").read_text(encoding="utf-8")
    assert "used fakeredis" in (result.report_dir / "report.html").read_text(encoding="utf-8")
    assert "WARNING: no redis-server" in result.output


def test_fakeredis_by_choice_has_no_warning(run_suite):
    result = run_suite("--store", GOOD, "--redis", "fakeredis", *ONE_SCENARIO)
    assert result.exit_code == 0, result.output
    assert result.summary["backend_warning"] is None


def test_external_server_must_start_empty(run_suite, external_server):
    external_server.client().set("someone-elses-key", "keep me")
    try:
        result = run_suite("--store", GOOD, "--redis", external_server.url())
        assert_usage_error(result, "holds 1 keys", "--allow-flush")
        assert external_server.client().get("someone-elses-key") == "keep me"
        result = run_suite("--store", GOOD, "--redis", external_server.url(), "--allow-flush", *ONE_SCENARIO)
        assert result.exit_code == 0, result.output
        assert "external server" in result.summary["backend"]
    finally:
        external_server.client().flushdb()


def test_external_server_on_an_empty_database_is_left_empty(run_suite, external_server):
    """Scenarios that write leave nothing behind in an external database: the next run on it needs no
    --allow-flush."""
    for _ in range(2):
        result = run_suite("--store", GOOD, "--redis", external_server.url(7), "-k", "round_trip or fresh")
        assert result.exit_code == 0, result.output
        assert result.summary["totals"]["passed"] >= 2
        assert external_server.client(7).dbsize() == 0


OWN_SERVER_SCENARIOS = {"test_append_raises_when_memory_is_full", "test_eviction_leaves_sessions_whole_or_gone",
                        "test_a_restart_between_turns_loses_nothing"}


@pytest.mark.parametrize("where, reason", [
    ("url", "there is no redis-server or valkey-server on PATH"),
    ("fakeredis", "needs a real Redis server"),
])
def test_scenarios_on_a_server_of_their_own_skip_where_none_can_start(run_suite, external_server, where, reason):
    """The memory-pressure and restart scenarios start a redis-server of their own: with a --redis URL on
    a machine without a server binary they are skipped, saying so, and on fakeredis too; the others run."""
    redis = external_server.url() if where == "url" else "fakeredis"
    result = run_suite("--store", GOOD, "--redis", redis, "-k", "memory_pressure or restart or round_trip_keeps",
                       env={"PATH": "/nonexistent"})
    assert result.exit_code == 0, result.output
    skipped = {r["scenario"]: r["message"] for r in result.summary["results"] if r["outcome"] == "skipped"}
    assert set(skipped) == OWN_SERVER_SCENARIOS, result.output
    assert all(reason in message for message in skipped.values()), skipped


def test_external_user_that_may_not_flush(run_suite, external_server):
    client = external_server.client()
    client.execute_command("ACL", "SETUSER", "noflush", "on", ">pw-noflush", "~*", "+@all", "-flushdb")
    result = run_suite("--store", GOOD, "--redis", external_server.url(userinfo="noflush:pw-noflush"))
    assert_usage_error(result, "may not run FLUSHDB")
