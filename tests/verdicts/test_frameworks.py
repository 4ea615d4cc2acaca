"""Stores of the libraries people use, run with nothing of ours but options: LangChain's
``RedisChatMessageHistory`` (langchain-community, langchain-redis), LlamaIndex's ``RedisChatStore``, OpenAI Agents'
``RedisSession``, LangGraph's Redis checkpointers, redisvl's ``MessageHistory``, installed from
PyPI (the test extras pin them), each at the verdict the verdicts table gives it. Beside them, the
contract's own shapes: one object per session, and whole messages as dicts or as the append
parameter's annotated class."""

import warnings

import pytest

from tests.conftest import NO_DEPS_INSTALLS, require_installed, require_venv
from tests.services import serving
from tests.stores.libraries import LIBRARIES, LIBRARY_STORES

with warnings.catch_warnings():   # langchain-community warns at import that it is being sunset
    warnings.simplefilter("ignore")
    import agents.extensions.memory  # noqa: F401
    import agno.db.redis  # noqa: F401
    import google_adk_redis  # noqa: F401
    import langchain_community.chat_message_histories  # noqa: F401
    import langchain_redis  # noqa: F401
    import llama_index.storage.chat_store.redis  # noqa: F401
    import redisvl.extensions.message_history  # noqa: F401

# the two scenarios that append until a budget append for 2 s here, not their own 20 s and 10 s: what they check
# of these stores (nothing lost, nothing capped below what was appended) holds within it, and the growth they
# warn of on some runs only (``may_warn``) needs the full budgets, which bench/verdicts.py gives the table
APPEND_BUDGET = ("--append-budget", "2")


@pytest.mark.parametrize("entry", LIBRARY_STORES, ids=lambda entry: f"{entry.package}:{entry.spec.rpartition(':')[2]}")
def test_a_library_store_gets_its_known_verdict(request, run_suite, entry):
    """The verdicts table's rows (bench/verdicts.py): the libraries' stores as they are, and the
    memories over them, fail exactly the scenarios of their known bug or contract mismatch, and on some
    runs those of a race their calls meet or not (``may_fail``) (a store built on Redis modules runs on
    Redis Stack, fixture ``redis_stack``), with APPEND_BUDGET unless the row gives its own."""
    server = request.getfixturevalue("redis_stack").url() if entry.needs_modules else "server"
    budget = () if "--append-budget" in entry.args else APPEND_BUDGET   # a row that needs more gives its own
    if entry.package in NO_DEPS_INSTALLS:
        require_installed(entry.package)
    python = require_venv(entry.venv) if entry.venv else None
    with serving(entry.service, server) as service:
        result = run_suite("--store", entry.spec, "--redis", server, *service, *entry.args, *budget, python=python)
    summary = result.summary
    assert set(entry.failing) <= result.failing_scenarios() <= {*entry.failing, *entry.may_fail}, result.output
    warned = {w["nodeid"].split("::")[-1].split("[")[0] for w in summary["warnings"]}
    assert warned - set(entry.may_warn) == set(entry.warned), result.output
    assert summary["status"] == ("failed" if entry.failing else "passed"), result.output
    assert summary["totals"]["errors"] == 0, result.output
    if entry.spec in LIBRARIES:
        shape, capabilities, level = LIBRARIES[entry.spec]
        assert [summary["shape"], summary["capabilities"]] == [shape, capabilities], result.output
        # a scenario that may warn (a growth the machine's speed shows or hides) decides on each run whether its
        # guarantee is in the level: the rest of the level must be as the row says
        varying = {guarantee for r in summary["results"] if r["scenario"] in entry.may_warn
                   for guarantee in r["guarantees"]}
        assert ([word for word in summary["conformance_level"].split("+") if word not in varying]
                == [word for word in level.split("+") if word not in varying]), result.output


def test_framework_messages_a_plain_store_returns_are_read_with_the_frameworks_converters(run_suite):
    """A store of no framework whose load returns LangChain messages (tool calls in LangChain's own
    form) is read as a LangChain store's history is: its tool calls compare as appended."""
    result = run_suite("--store", "tests.stores.shapes:ReturnsLangChainMessages", "-k", "tool_calls or round_trip")
    assert result.exit_code == 0, result.output
    assert result.summary["conformance_level"] == "core+tool-calls"
    assert result.summary["totals"]["passed"] == 2


def test_a_message_class_is_built_through_its_own_constructor(run_suite):
    """TextAndParts(role, parts) names its content otherwise: the suite builds it with the content as a list of
    one part and reads its parts back, and the store passes."""
    result = run_suite("--store", "tests.stores.shapes:PartsMessages", "--groups", "core")
    assert result.exit_code == 0, result.output
    assert result.summary["shape"] == ("one object for all sessions: add_message(session_id, message); messages as "
                                       "TextAndParts")


def test_a_tenant_taken_by_the_methods_is_given_and_judged(run_suite):
    """TenantInMethods takes the user id beside the session id in its methods (positionally in append and get,
    keyword-only in clear): it is given the suite's tenant, claims tenants, and a variant that keys a session by
    its id alone fails the tenants scenario only (the correct one's full run is the corpus')."""
    result = run_suite("--store", "tests.stores.shapes:TenantInMethodsLeftOut", "--groups", "identity")
    assert "tenants" in result.summary["capabilities"], result.output
    assert result.failing_scenarios() == {"test_tenants_keep_their_own_conversations"}, result.output
