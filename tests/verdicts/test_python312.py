"""Stores of libraries that need Python 3.12 (Strands Agents' session managers), run through
tests/stores/py_program.py from the virtual environment .venv312 (tests/py312-requirements.txt), with
thin adapters until the suite binds them: their identity defects, each shown with the library alone.

Strands' Valkey session manager keeps a session in RedisJSON documents found by SCAN patterns made of
the session id: ``delete_session('alice')`` deletes ``alice2`` too, and the session ``al*`` lists the
messages of ``al``, ``alice`` and ``alice2``. It refuses ids holding ``:``, which is a warning.
"""

import re
import subprocess

from tests.conftest import ROOT, require_python312
from tests.stores.identity import CLEARING, EVERY_ID

STRANDS = "tests/stores/py_program.py tests/stores/strands_sessions.py:StrandsValkeySession"


def test_strands_valkey_reads_and_deletes_other_sessions_by_a_pattern(run_suite, redis_stack):
    python = require_python312()
    result = run_suite("--store", f"cmd:{python} {STRANDS}", "--redis", redis_stack.url(), "--groups", "identity")
    messages = {f["scenario"]: f["message"] for f in result.summary["failures"]}
    assert set(messages) == {EVERY_ID, CLEARING}, result.output
    assert re.match(r"session 'al\*' loads the messages of session 'al' too, though session 'al' does not load its: "
                    r"the load of 'al\*' reads keys by a pattern: the id reached a key pattern \(KEYS, SCAN MATCH\) "
                    r"unescaped", messages[EVERY_ID]), messages
    assert re.match(r"clear\(session 'alice'\) deleted session '[^']+' and \d+ more \(.*\): '[^']+' starts with "
                    r"'alice': the keys are found by a pattern of the id and a trailing \*", messages[CLEARING]), messages
    [refused] = [w["text"] for w in result.summary["warnings"]] or [r["warnings"][0]["text"] for r in
                                                                    result.summary["results"] if r["warnings"]]
    assert "'alice:2' (colon separator)" in refused and "session_id cannot contain ':'" in refused, refused


def test_the_strands_failures_reproduce_with_the_library_alone(redis_stack):
    python = require_python312()
    try:
        done = subprocess.run([python, "tests/stores/strands_alone.py", redis_stack.url()], cwd=ROOT,
                              capture_output=True, text=True, timeout=120)
        assert done.stdout.splitlines() == ["al* lists: hi from al, hi from alice, hi from alice2", "left: al, al*"], (
            done.stdout + done.stderr)
    finally:
        redis_stack.client().flushdb()   # the suite runs only on an empty database
