"""CAMEL's Redis key-value storage (camel-ai's ``RedisStorage``), bound with no option
(frameworks/camel_storage.py; its row in the verdicts table is checked by test_frameworks.py), run
from .venv-camel, whose pydantic and tiktoken pins exclude the test extras'. Its failures, shown here
with the library alone: ``save`` replaces the conversation with the records it is given (so each turn
a ChatHistoryMemory saves drops the earlier ones), and every error is logged and swallowed."""

import subprocess

from tests.conftest import ROOT, free_port, require_venv


def test_the_camel_failures_reproduce_with_the_library_alone(redis_server):
    dead = f"redis://127.0.0.1:{free_port()}/0"
    done = subprocess.run([require_venv(".venv-camel"), "tests/stores/camel_alone.py", redis_server.url(), dead],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.stdout.splitlines() == ["s1 holds turns: 2", "save with no server: returned"], (
        done.stdout + done.stderr)
