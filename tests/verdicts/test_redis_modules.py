"""A store built on a Redis module passes against a server that has the module (against one that
lacks it, it is one configuration error: tests/end_to_end/test_runner.py). The server is Redis
Stack (fixture ``redis_stack``, tests/verdicts/conftest.py).
"""

SEARCH_STORE = "tests.stores.shapes:NeedsSearch"


def test_a_store_on_redisearch_passes_against_a_server_with_the_module(run_suite, redis_stack):
    assert redis_stack.client().execute_command("FT._LIST") == [], "RediSearch is not loaded"
    result = run_suite("--store", SEARCH_STORE, "--redis", redis_stack.url())
    assert result.exit_code == 0, result.output
    assert result.summary["conformance_level"] == ("core+count-window+ttl+namespace+clear+bounded-storage"
                                                   "+steady-appends+atomic-window+any-session-id+prefixed-keys")
    # the memory-pressure and shared-database scenarios run on a redis-server the suite starts from PATH,
    # without the module: skipped, saying so, instead of stopping the run as a server without RediSearch would
    own_server = [r for r in result.summary["results"] if r["group"] == "memory-pressure"
                  or r["scenario"] == "test_a_shared_database_is_left_as_it_was"]
    assert len(own_server) == 3, own_server
    assert own_server and all(r["outcome"] == "skipped" and "the redis-server the suite started for this "
                              "scenario" in r["message"] for r in own_server), own_server
