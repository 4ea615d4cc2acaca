"""The corpus as declared: every scenario has a broken store it catches, all but a few one that
only it catches, and every broken store declares the cause its failures must name."""

import ast
import re
from collections import Counter

from tests.conftest import ROOT
from tests.corpus import BROKEN, CATCHES, declared_cause
from tests.stores import broken


def suite_scenarios() -> set[str]:
    names = set()
    for path in (ROOT / "suite").glob("test_*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names.update(node.name for node in tree.body
                     if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"))
    return names


def test_every_scenario_has_a_broken_store_it_catches():
    caught = set().union(*CATCHES.values())
    assert suite_scenarios() - caught == set()
    assert caught - suite_scenarios() == set(), "CAUGHT_BY names scenarios the suite does not have"


def test_every_scenario_but_a_few_has_a_store_only_it_catches():
    sole = {names[0] for names in CATCHES.values() if len(names) == 1}
    assert suite_scenarios() - sole == set(broken.NO_SOLE_CATCH)


def test_every_broken_store_declares_the_cause_its_failures_name():
    """Each declares one, for scenarios that catch it, and the figure docs/corpus.md gives is the count of
    them."""
    kinds = Counter()
    for store in BROKEN:
        kind, patterns = declared_cause(store)
        assert set(patterns) <= set(BROKEN[store]), (store.__name__, set(patterns) - set(BROKEN[store]))
        for pattern in patterns.values():
            re.compile(pattern)
        kinds[kind] += 1
    page = " ".join((ROOT / "docs" / "corpus.md").read_text(encoding="utf-8").split())
    figure = re.search(r"Diagnoses are right on (\d+) of (\d+) broken stores: .*? On the other (\d+), ", page)
    assert figure, "docs/corpus.md has no 'Diagnoses are right on N of M broken stores' figure"
    assert tuple(map(int, figure.groups())) == (kinds["CAUSE"], len(BROKEN), kinds["LISTED_CAUSE"]), kinds
