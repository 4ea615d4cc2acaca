"""adk-session-services' Redis session service for Google ADK, from the virtual environment .venv-adk-services
(tests/adk-services-requirements.txt, the suite installed beside it), bound by the ADK framework module with no
option, as google-adk-redis' service is (its row in the verdicts table is checked by test_frameworks.py). It keys
a session ``<prefix>:sessions:<app>:<user>:<session>``: user ``bob``'s session ``x:s1`` and user ``bob:x``'s
session ``s1`` are one conversation, each can read and delete the other's; shown here with ADK alone."""

import subprocess

from tests.conftest import ROOT, require_venv


def test_the_adk_services_failure_reproduces_with_the_library_alone(redis_server):
    done = subprocess.run([require_venv(".venv-adk-services"), "tests/stores/adk_services_alone.py",
                           redis_server.url()], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.stdout.splitlines() == ["bob:x's s1 reads: bob's x:s1",
                                        "bob's x:s1 after deleting bob:x's s1: none"], done.stdout + done.stderr
