"""Stopping a run from outside: Ctrl-C and SIGTERM at any moment and twice in a row, SIGKILL of the
runner (on one server and on a cluster), and two runs sharing a report directory."""

import shutil
import signal
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.conftest import CLUSTER, CLUSTER_ENGINE

HANGING = "tests.stores.hostile:Sleeps"       # its round trip blocks until the run is stopped
STOP_WITHIN_S = 10                              # docker stop waits 10 s before it kills


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("at", [0.15, 0.5, 1.2, 3.0], ids=["starting", "importing", "workers-starting", "running"])
@pytest.mark.parametrize("times", [1, 2], ids=["once", "twice"])
def test_an_interrupt_at_any_moment_ends_in_130_with_reports_that_say_so(run_suite, signum, at, times):
    signals = [(at + 0.05 * i, signum) for i in range(times)]
    result = run_suite("--store", HANGING, signals=signals, workers=None)   # the default, as interrupted in use
    assert result.exit_code == 130, result.output
    summary = result.summary
    assert summary["status"] == "interrupted", summary
    assert summary["message"].startswith(f"the run was interrupted by {signum.name}")
    assert result.seconds < at + STOP_WITHIN_S, "stopping took too long"


def test_killing_the_runner_leaves_no_server_and_no_worker_behind(run_suite):
    """The private redis-server and the workers get a parent-death signal; conftest checks that no
    process of the run is left."""
    result = run_suite("--store", HANGING, signals=[(3.0, signal.SIGKILL)], expect_reports=False)
    assert result.exit_code == -signal.SIGKILL


def test_two_runs_sharing_a_report_directory_keep_their_own_verdicts(run_suite, tmp_path):
    shared = tmp_path / "shared-reports"
    stores = {"tests.stores.broken:OffByOneTrim": 1, "tests.stores.correct:ListStore": 0}
    with ThreadPoolExecutor(max_workers=2) as pool:
        for _round in range(3):
            runs = {store: pool.submit(run_suite, "--store", store, "-k", "count_window or fresh",
                                       report_dir=shared, expect_reports=False)
                    for store in stores}
            for store, expected in stores.items():
                assert runs[store].result().exit_code == expected, runs[store].result().output


def test_a_run_stopped_by_sigterm_removes_every_node_and_its_directory(run_suite):
    scratch = Path(tempfile.mkdtemp(prefix="mrc-"))   # short: the supervisor's socket path lives in it too
    try:
        result = run_suite("--store", HANGING, *CLUSTER, signals=[(4.0, signal.SIGTERM)],
                           env={"TMPDIR": str(scratch)})
        assert result.exit_code == 130, result.output
        assert CLUSTER_ENGINE in result.summary["backend"]
        assert not list(scratch.glob("memory-regression-redis-*"))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def test_killing_the_runner_leaves_no_node_behind(run_suite):
    """Each node gets the parent-death signal; conftest checks that no process of the run is left."""
    result = run_suite("--store", HANGING, *CLUSTER, signals=[(4.0, signal.SIGKILL)], expect_reports=False)
    assert result.exit_code == -signal.SIGKILL
