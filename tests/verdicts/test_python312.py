"""Stores of libraries that need Python 3.12, run from the virtual environment .venv312
(tests/py312-requirements.txt, the suite installed beside them): Strands Agents' session managers,
bound with no option (frameworks/strands.py; their rows in the verdicts table are checked by
test_frameworks.py), and Redis' agent-memory-server's client, bound with --service-url naming a service the
test starts (frameworks/agent_memory.py): their defects, each shown with the library alone.

Strands' Valkey session manager keeps a session in RedisJSON documents found by SCAN patterns made of
the session id: ``delete_session('alice')`` deletes ``alice2`` too, and the session ``al*`` lists the
messages of ``al``, ``alice`` and ``alice2``. It refuses ids holding ``:``, which is a warning. Its Redis
session manager deletes by the pattern ``<namespace>:<id>:*``, so ``delete_session('alice')`` deletes
``alice:2``; and an agent numbers its messages from the index it keeps, so two agents on one session
(two replicas of a service) overwrite each other's.

agent-memory-server keys a session's working memory ``working_memory:<user>:<session>`` and one of
no user ``working_memory:<session>``: user ``bob``'s session ``s1`` and session ``bob:s1`` of no user
are one key, each can read and delete the other's; and its client puts the session id in the URL's
path unquoted, so ``al?`` is session ``al`` (``alice/2`` and a URL are not found: refusals, warned); its
client appends by reading the session and putting it back whole, so appends that overlap lose messages;
and the service refuses a message of empty content (HTTP 400).
"""

import re
import subprocess

import pytest

from tests.conftest import ROOT, require_venv
from tests.services import AGENT_MEMORY_VENV, AgentMemoryServer
from tests.stores.identity import CLEARING, EVERY_ID, TENANTS

STRANDS_VALKEY = "strands_valkey_session_manager:ValkeySessionManager"
AGENT_MEMORY = "agent_memory_client:MemoryAPIClient"


def test_strands_valkey_reads_and_deletes_other_sessions_by_a_pattern(run_suite, redis_stack):
    result = run_suite("--store", STRANDS_VALKEY, "--redis", redis_stack.url(), "--groups", "identity",
                       python=require_venv(".venv312"))
    messages = {f["scenario"]: f["message"] for f in result.summary["failures"]}
    assert set(messages) == {EVERY_ID, CLEARING}, result.output
    assert re.match(r"session 'al\*' loads the messages of session 'al' too, though session 'al' does not load its: "
                    r"the load of 'al\*' reads keys by a pattern: the id reached a key pattern \(KEYS, SCAN MATCH\) "
                    r"unescaped", messages[EVERY_ID]), messages
    assert re.match(r"clear\(session 'alice'\) deleted session '[^']+' and \d+ more \(.*\): '[^']+' starts with "
                    r"'alice': the keys are found by a pattern of the id and a trailing \*",
                    messages[CLEARING]), messages
    [refused] = [w["text"] for w in result.summary["warnings"]] or [r["warnings"][0]["text"] for r in
                                                                    result.summary["results"] if r["warnings"]]
    assert "'alice:2' (colon separator)" in refused and "session_id cannot contain ':'" in refused, refused


def test_the_strands_failures_reproduce_with_the_library_alone(redis_stack):
    python = require_venv(".venv312")
    try:
        done = subprocess.run([python, "tests/stores/strands_alone.py", redis_stack.url()], cwd=ROOT,
                              capture_output=True, text=True, timeout=120)
        assert done.stdout.splitlines() == ["al* lists: hi from al, hi from alice, hi from alice2", "left: al, al*"], (
            done.stdout + done.stderr)
    finally:
        redis_stack.client().flushdb()   # the suite runs only on an empty database


def test_the_strands_redis_failures_reproduce_with_the_library_alone(redis_server):
    done = subprocess.run([require_venv(".venv312"), "tests/stores/strands_redis_alone.py", redis_server.url()],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.stdout.splitlines() == ["s1 holds: from replica 2", "left: none"], done.stdout + done.stderr


@pytest.fixture
def agent_memory_service(redis_stack):
    """agent-memory-server over the module's Redis Stack (tests/services.py), whose database is emptied after it:
    the suite runs only on an empty database."""
    require_venv(AGENT_MEMORY_VENV)
    service = AgentMemoryServer(redis_stack.url())
    yield service.url
    service.stop()
    redis_stack.client().flushdb()


def test_agent_memory_server_joins_user_and_session_into_one_key(run_suite, redis_stack, agent_memory_service):
    """Its client bound natively (frameworks/agent_memory.py), with the service's URL and its Redis."""
    result = run_suite("--store", AGENT_MEMORY, "--redis", redis_stack.url(), "--service-url", agent_memory_service,
                       "--groups", "identity", python=require_venv(AGENT_MEMORY_VENV))
    messages = {f["scenario"]: f["message"] for f in result.summary["failures"]}
    assert set(messages) == {EVERY_ID, TENANTS}, result.output
    assert messages[EVERY_ID].endswith("it is cut at its first '?' or '#' (put in a URL's path unquoted, the rest is "
                                       "the URL's query or fragment)"), messages
    assert re.search(r"loads the messages of user 'bob''s session 'x:s1' too, .*: the user id and the session id "
                     r"are joined with ':' into one key", messages[TENANTS]), messages
    assert result.summary["shape"].startswith("agent-memory-server working memory"), result.summary["shape"]


def test_the_agent_memory_server_failures_reproduce_with_the_library_alone(agent_memory_service):
    done = subprocess.run([require_venv(AGENT_MEMORY_VENV), "-W", "ignore", "tests/stores/agent_memory_alone.py",
                           agent_memory_service], cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert done.stdout.splitlines() == [
        "bob's s1 reads: no user's bob:s1", "bob:s1 of no user after deleting bob's s1: none",
        "race keeps all 40: False", "al? reads: al's",
        "empty content: MemoryServerError Message content cannot be empty"], done.stdout + done.stderr[-3000:]
