"""The verdict tests run the tool forked from a server process that has imported it, with their
scenarios in that process (tests/forked_runs.py): what they judge is the verdict, which a run with
worker processes gives alike; the end-to-end tests run ``entrypoint.py`` itself.

Stores built on Redis modules run against Redis Stack (fixture ``redis_stack``:
:func:`tests.conftest.start_redis_stack`, one server per test module). Without its packages their
tests skip; with REQUIRE_REDIS_MODULES=1, as in CI, they fail instead.
"""


import pytest

from tests.conftest import ROOT, run_entrypoint, run_forked_entrypoint, start_redis_stack, unavailable


@pytest.fixture
def run_suite(tmp_path):
    """Run the suite on a store; reports go under tmp_path unless ``report_dir`` says otherwise. With
    ``python`` (another virtual environment's, whose library pins exclude the test extras'), entrypoint.py
    runs from that interpreter, with a worker process (it has no server process to fork from)."""
    def run(*args, cwd=ROOT, env=None, report_dir=None, workers=0, python=None):
        report_dir = report_dir or tmp_path / "reports"
        if python:
            return run_entrypoint(args, report_dir=report_dir, cwd=cwd, env=env, workers=workers or 1, python=python)
        return run_forked_entrypoint(args, report_dir=report_dir, cwd=cwd, env=env, workers=workers)
    return run


@pytest.fixture(scope="module")
def redis_stack(tmp_path_factory):
    try:
        stack = start_redis_stack(tmp_path_factory.mktemp("libssl-1.1"))
    except ImportError as exc:
        unavailable("REQUIRE_REDIS_MODULES", f"{exc.name} is not installed (pip install -e '.[test]' installs it "
                                             "on Python 3.11)")
    yield stack
    stack.stop()
