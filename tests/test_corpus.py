"""The suite against stores whose behaviour we know: every broken store is caught by exactly the
scenarios meant for it, and no correct store fails."""

import ast

import pytest

from tests.conftest import ROOT
from tests.stores import broken

TOKEN_ARGS = ("--model-profiles", "small-4k,llama-3-8b")

CORRECT_STORES = {
    "examples/stores/count_window.py:CountWindowStore": ((), "core+count-window+ttl+namespace+clear"),
    "examples/stores/token_window.py:TokenWindowStore": (
        ("--token-counter", "examples/stores/token_window.py:message_tokens"), "core+token-window+clear"),
    "examples/stores/async_store.py:AsyncChatMemory": ((), "core+count-window+ttl+namespace+clear+async"),
    "tests.stores.correct:ListStore": ((), "core+count-window+ttl+namespace+clear"),
    "tests.stores.correct:TokenStore": ((), "core+token-window+ttl+namespace+clear"),
}


def suite_scenarios() -> set[str]:
    names = set()
    for path in (ROOT / "suite").glob("test_*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names.update(node.name for node in tree.body
                     if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"))
    return names


def test_every_scenario_has_a_broken_store_it_catches():
    caught = set().union(*broken.CAUGHT_BY.values())
    assert suite_scenarios() - caught == set()
    assert caught - suite_scenarios() == set(), "CAUGHT_BY names scenarios the suite does not have"


def test_every_scenario_but_a_few_has_a_store_only_it_catches():
    sole = {names[0] for names in broken.CAUGHT_BY.values() if len(names) == 1}
    assert suite_scenarios() - sole == set(broken.NO_SOLE_CATCH)


@pytest.mark.parametrize("store", sorted(broken.CAUGHT_BY, key=lambda c: c.__name__),
                         ids=lambda c: c.__name__)
def test_broken_store_is_caught(run_suite, store, corpus_run):
    """The stateful scenario runs on the stores meant for it. On the others it may catch the bug too
    (which their fixed scenarios pin already), and shrinking that failure takes it half a minute."""
    expected = set(broken.CAUGHT_BY[store])
    args = (*(TOKEN_ARGS if issubclass(store, broken.TokenStore) else ()),
            *(() if broken.STATEFUL in expected else ("-k", "not stateful")))
    result = run_suite("--store", f"tests.stores.broken:{store.__name__}", *args)
    assert result.exit_code == 1, result.output
    failing = result.failing_scenarios()
    assert expected <= failing, result.output
    assert failing - broken.MAY_ALSO_CATCH == expected - broken.MAY_ALSO_CATCH, result.output


@pytest.mark.parametrize("spec", sorted(CORRECT_STORES))
def test_correct_store_passes(run_suite, spec, corpus_run):
    args, level = CORRECT_STORES[spec]
    result = run_suite("--store", spec, *args)
    assert result.exit_code == 0, result.output
    summary = result.summary
    assert summary["totals"]["failed"] == summary["totals"]["errors"] == 0
    assert summary["conformance_level"] == level
    assert summary["totals"]["passed"] > 0
