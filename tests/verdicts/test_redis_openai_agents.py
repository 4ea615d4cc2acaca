"""redis-openai-agents' AgentSession (installed without its dependencies, tests/conftest.py's NO_DEPS_INSTALLS), bound
with ``--store-params conversation_id=session_id`` on Redis Stack (its row in the verdicts table is checked by
test_frameworks.py): its failures, shown here with the library alone."""

import subprocess
import sys

from tests.conftest import ROOT, require_installed


def test_the_redis_openai_agents_failures_reproduce_with_the_library_alone(redis_stack):
    require_installed("redis-openai-agents")
    try:
        done = subprocess.run([sys.executable, "tests/stores/redis_openai_agents_alone.py", redis_stack.url()],
                              cwd=ROOT, capture_output=True, text=True, timeout=180)
        assert done.stdout.splitlines() == ["get_messages() returns: 1000", "b after clearing a: 0 messages",
                                            "bob's c1 reads: carol's"], done.stdout + done.stderr[-3000:]
    finally:
        redis_stack.client().flushdb()   # the suite runs only on an empty database
