"""The Node.js driver's own tests (memory_regression/contract/drivers/node/test, run by ``node --test``): how it
reads parameters from a function's source, and the store protocol as it serves it."""

import shutil
import subprocess


from tests.conftest import ROOT, unavailable

DRIVER = ROOT / "memory_regression" / "contract" / "drivers" / "node"


def test_the_node_drivers_own_tests_pass():
    if shutil.which("node") is None:
        unavailable("REQUIRE_NODE", "node is not installed (apt-get install nodejs)")
    done = subprocess.run(["node", "--test", "test/"], cwd=DRIVER, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "# fail 0" in done.stdout and "# pass 0" not in done.stdout, done.stdout
