"""agno's Redis database (``agno.db.redis.RedisDb``, pinned in the test extras) runs with nothing of
ours but ``--store``: driven as an agent's runs save to it, its failures are the library's own, each
shown here with agno alone, through the agent's own storing code (``read_or_create_session`` and
``persist_run_in_session``, what ``Agent.run`` calls after the model answers, here with no model):

- every run is a key of its own whose TTL is set when it is written, and later runs do not refresh
  it: the oldest messages of an active session expire;
- its index sets get no TTL: they outlive every session;
- a read that fails (the server is down) is taken for a session that does not exist, and the run
  goes on from an empty history;
- a session is the session key and one key per run, so eviction removes some runs of a session and
  leaves the rest;
- each run reads every earlier run of the session again, so appends slow as it grows;
- a session is keyed by its id alone, its user only kept beside it: user ``carol``'s session ``s1``
  goes into user ``bob``'s, which then holds her messages, and she reads none.

What agno does by design, keeping one system prompt per session, is no failure: the round trip
names it in a note."""

import socket
import time

from agno.agent import Agent
from agno.agent._run import persist_run_in_session
from agno.agent._storage import read_or_create_session
from agno.db.base import SessionType
from agno.db.redis import RedisDb
from agno.models.message import Message
from agno.run.agent import RunOutput
from agno.run.base import RunStatus

from memory_regression.frameworks.agno import ONE_SYSTEM_PROMPT
from tests.stores.libraries import AGNO

ROUND_TRIP = "test_round_trip_keeps_role_content_and_order"


def test_one_system_prompt_is_judged_as_the_rule_and_the_round_trip_says_so(run_suite):
    """The round trip appends a system message every third message; agno gives back the first only,
    which the scenario expects, saying why."""
    result = run_suite("--store", AGNO, "-k", ROUND_TRIP)
    assert result.exit_code == 0, result.output
    [round_trip] = [r for r in result.summary["results"] if r["scenario"] == ROUND_TRIP]
    assert round_trip["findings"] == [f"3 of the 14 messages appended were not expected back, by the agno "
                                      f"database's own rule: {ONE_SYSTEM_PROMPT.text}"], round_trip


def agent_on(url, **options):
    return Agent(db=RedisDb(db_url=url, db_prefix="alone", **options), id="alone")


def run_turn(agent, session_id, text, user_id=None):
    """What an agent's run stores once the model has answered: the run, in the session."""
    session = read_or_create_session(agent, session_id, user_id)
    run = RunOutput(run_id=f"run-{text}", agent_id=agent.id, session_id=session_id, status=RunStatus.completed,
                    messages=[Message(role="user", content=text), Message(role="assistant", content=f"re: {text}")])
    persist_run_in_session(agent, run, session)


def replayed(agent, session_id):
    return [message.content for message in agent.get_session_messages(session_id)]


def test_older_runs_expire_while_the_session_is_active_with_the_library_alone(redis_server):
    """test_active_session_outlives_its_ttl and test_append_refreshes_ttl: with expire=2, a run every
    1.2 s; 2.4 s in, the session is alive and holds the second run only."""
    agent = agent_on(redis_server.url(), expire=2)
    run_turn(agent, "active", "one")
    time.sleep(1.2)
    run_turn(agent, "active", "two")
    time.sleep(1.2)
    assert replayed(agent, "active") == ["two", "re: two"]


def test_index_sets_outlive_every_session_with_the_library_alone(redis_server):
    """test_every_key_has_ttl_within_configured and test_idle_session_disappears_completely: after
    the session expired, its index sets are left, with no TTL."""
    agent = agent_on(redis_server.url(), expire=1)
    run_turn(agent, "idle", "one")
    time.sleep(1.2)
    client = redis_server.client()
    left = client.keys("alone:*")
    assert left and all(":index:" in key and client.ttl(key) == -1 for key in left), left


def test_a_failed_read_is_an_empty_session_with_the_library_alone():
    """test_store_raises_when_the_server_is_down: with nothing listening, the session an agent's run
    starts from is a new one, with no runs, and nothing raised (agno logs the error)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    session = read_or_create_session(agent_on(f"redis://127.0.0.1:{port}/0"), "down")
    assert session.session_id == "down" and not session.runs


def test_a_session_is_one_key_per_run_and_loses_the_runs_evicted_with_the_library_alone(redis_server):
    """test_eviction_leaves_sessions_whole_or_gone: deleting one run's key, as eviction does, leaves
    the session loading without that run's messages, and nothing tells."""
    agent = agent_on(redis_server.url())
    for text in ("one", "two", "three"):
        run_turn(agent, "evicted", text)
    redis_server.client().delete("alone:runs:run-two")
    assert replayed(agent, "evicted") == ["one", "re: one", "three", "re: three"]


def test_each_run_reads_every_earlier_run_with_the_library_alone(redis_server):
    """The steady-appends warnings: the GETs a run makes grow with the runs before it (one per run)."""
    agent, client = agent_on(redis_server.url()), redis_server.client()
    gets = {}
    for runs in range(1, 101):
        before = client.info("commandstats").get("cmdstat_get", {}).get("calls", 0)
        run_turn(agent, "growing", f"#{runs}")
        if runs in (10, 100):
            gets[runs] = client.info("commandstats")["cmdstat_get"]["calls"] - before
    assert gets[100] - gets[10] == 90, gets


def test_two_users_sessions_of_one_id_are_one_with_the_library_alone(redis_server):
    """test_tenants_keep_their_own_conversations: bob's run in session s1, then carol's: bob's session
    replays both, carol's reads as none."""
    agent = agent_on(redis_server.url())
    run_turn(agent, "s1", "bob's", user_id="bob")
    run_turn(agent, "s1", "carol's", user_id="carol")
    sessions = {user: agent.db.get_session("s1", SessionType.AGENT, user_id=user) for user in ("bob", "carol")}
    assert sorted(message.content for message in sessions["bob"].get_messages()) == [
        "bob's", "carol's", "re: bob's", "re: carol's"]
    assert sessions["carol"] is None
