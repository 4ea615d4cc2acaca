"""The verdict tests run the tool forked from a server process that has imported it, with their
scenarios in that process (tests/forked_runs.py): what they judge is the verdict, which a run with
worker processes gives alike; the end-to-end tests run ``entrypoint.py`` itself."""

import pytest

from tests.conftest import ROOT, run_forked_entrypoint


@pytest.fixture
def run_suite(tmp_path):
    """Run the suite on a store; reports go under tmp_path unless ``report_dir`` says otherwise."""
    def run(*args, cwd=ROOT, env=None, report_dir=None, workers=0):
        return run_forked_entrypoint(args, report_dir=report_dir or tmp_path / "reports", cwd=cwd, env=env,
                                     workers=workers)
    return run
