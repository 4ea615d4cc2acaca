"""Microsoft Agent Framework's Redis history provider (agent-framework-redis), bound with no option
(frameworks/agent_framework.py; its row in the verdicts table is checked by test_frameworks.py), run
from .venv-agent-framework, whose redis-py and redisvl pins exclude the test extras'. Its two failures,
shown here with the library alone: a message equal to the one before it is dropped by
``save_messages``, and ``max_messages`` trims a tool call away from its result."""

import subprocess

from tests.conftest import ROOT, require_venv

VENV = ".venv-agent-framework"


def test_the_agent_framework_failures_reproduce_with_the_library_alone(redis_server):
    python = require_venv(VENV)
    done = subprocess.run([python, "tests/stores/agent_framework_alone.py", redis_server.url()], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.stdout.splitlines() == ["s1 holds: user: hi, assistant: ok",   # the second 'ok' is dropped
                                        "s2 holds: tool: function_result, assistant: sunny"], done.stdout + done.stderr


def test_it_binds_with_no_option_given_the_client_and_its_trim_apart_from_the_push_is_named(run_suite):
    """The provider refuses a client and a URL together: it is given the client, as the header says; and the
    atomic-window warning names the steps its commands show: the push in MULTI/EXEC, the trim apart."""
    result = run_suite("--store", "agent_framework_redis:RedisHistoryProvider", "-k", "keep_the_window",
                       python=require_venv(VENV))
    assert result.exit_code == 0, result.output
    assert result.summary["shape"] == "Agent Framework HistoryProvider: save_messages(session_id, [message, ...])"
    assert result.summary["capabilities"] == ["async", "clear", "core", "count-window", "namespace", "tenants",
                                              "tool-calls"]
    assert result.summary["observations"] == [
        "the store refused the client and the URL together (ValueError: redis_client, redis_url, and "
        "credential_provider are mutually exclusive): it is given the client the suite opens alone, in every "
        "scenario"]
    texts = [warning["text"] for warning in result.summary["warnings"]]
    assert texts and all("the trim runs after the push, not with it: the store sent MULTI: RPUSH " in text
                         and "; EXEC and LTRIM " in text for text in texts), texts
