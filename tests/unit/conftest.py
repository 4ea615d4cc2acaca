"""Unit tests run in-process: none starts the runner, a worker, a container or any program but a
Redis server (RedisServer, or the engines' own), which the code under test talks to."""

import os
import subprocess

import pytest

SERVERS = ("redis-server", "valkey-server")


@pytest.fixture(autouse=True)
def in_process(monkeypatch):
    """Starting any other program fails the test, saying where it belongs."""
    start = subprocess.Popen.__init__

    def guarded(self, args, *more, **options):
        program = os.path.basename(str(args[0] if isinstance(args, (list, tuple)) else args).split()[0])
        if program not in SERVERS:
            raise AssertionError(f"a unit test started {program}: a test that runs programs belongs in "
                                 "tests/verdicts or tests/end_to_end")
        start(self, args, *more, **options)
    monkeypatch.setattr(subprocess.Popen, "__init__", guarded)
