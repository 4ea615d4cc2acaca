"""The suite against stores whose behaviour we know: every broken store is caught by exactly the
scenarios meant for it, and no correct store fails."""

import ast
import re
from collections import Counter

import pytest

from tests.conftest import ROOT
from tests.stores import (broken, compaction, concurrency, consistency, expiry, faults, footprint, latency, messages,
                          policies, server, stateful_bugs)

TOKEN_ARGS = ("--model-profiles", "small-4k,llama-3-8b")
# groups that take seconds, run only on the broken stores meant for them (-k names them)
SLOW_GROUPS = {"stateful": {broken.STATEFUL}, "expiry": {expiry.ACTIVE, expiry.IDLE},
               "concurrency": {concurrency.LOSE_NOTHING, concurrency.KEEP_THE_WINDOW,
                               concurrency.KEEP_THE_TOKEN_BUDGET}}
# the guarantees a correct store's default run holds; a windowed one whose trim goes with its push (in
# one transaction or script) also atomic-window (correct.TokenStore trims in a second step: not it)
HELD = "+bounded-storage+steady-appends"
HELD_WINDOWED = HELD + "+atomic-window"
WINDOWED = "core+count-window+ttl+namespace+clear"   # a count-window store's capabilities, before its others
POLICY_LEVEL = "core+count-window+token-window+ttl+namespace+clear" + HELD_WINDOWED


def policy_args(rules: str) -> tuple[str, ...]:
    """A policy store's run: its policy, N=1 (where keep-system keeps the system message alone) and
    N=5, and the token profiles."""
    return ("--window-policy", rules, "--window-sizes", "1,5", *TOKEN_ARGS)


CORRECT_STORES = {
    "examples/stores/count_window.py:CountWindowStore": ((), "core+count-window+ttl+namespace+clear" + HELD_WINDOWED),
    "examples/stores/token_window.py:TokenWindowStore": (
        ("--token-counter", "examples/stores/token_window.py:message_tokens"),
        "core+token-window+clear" + HELD_WINDOWED),
    "examples/stores/async_store.py:AsyncChatMemory": ((), f"{WINDOWED}+async" + HELD_WINDOWED),
    "examples/stores/compacting.py:CompactingStore": ((), f"{WINDOWED}+compaction" + HELD_WINDOWED),
    "examples/stores/two_backends.py:TwoBackendStore": ((), f"{WINDOWED}+consistency" + HELD_WINDOWED),
    "tests.stores.correct:ListStore": ((), "core+count-window+ttl+namespace+clear" + HELD_WINDOWED),
    "tests.stores.consistency:AsyncTwoBackendStore": (
        (), "core+count-window+ttl+namespace+clear+consistency+async+bounded-storage+atomic-window"),
    "tests.stores.correct:TokenStore": ((), "core+token-window+ttl+namespace+clear" + HELD),
    "tests.stores.policies:StartOnUserStore": (policy_args("start-on-user"), POLICY_LEVEL),
    "tests.stores.policies:KeepSystemStore": (policy_args("keep-system"), POLICY_LEVEL),
    "tests.stores.policies:StartOnUserKeepSystemStore": (
        policy_args("start-on-user,keep-system"), POLICY_LEVEL),
    "tests.stores.messages:ToolAwareWindow": ((), "core+count-window+ttl+namespace+clear+tool-calls" + HELD_WINDOWED),
    "tests.stores.shapes:TypedMessages": ((), "core+ttl+namespace+clear+tool-calls" + HELD),
    "tests.stores.shapes:SessionHistory": ((), "core+count-window+ttl+namespace+clear" + HELD_WINDOWED),
    # async def methods over a synchronous client: its coroutines never suspend
    "tests.stores.shapes:NeverSuspends": ((), "core+count-window+ttl+namespace+clear+async" + HELD_WINDOWED),
    "tests.stores.libraries:AsyncOnlyHistory": ((), "core+ttl+namespace+clear+tool-calls+async" + HELD),
    "tests.stores.compaction:CompactingListStore": ((), f"{WINDOWED}+compaction" + HELD_WINDOWED),
    "tests.stores.compaction:CompactingTokenStore": ((), "core+token-window+ttl+namespace+clear+compaction" + HELD),
    "tests.stores.compaction:AsyncCompactingStore": ((), f"{WINDOWED}+compaction+async" + HELD_WINDOWED),
}
# guarantees a correct store holds on some runs and not on others, left out of its level's comparison:
# AsyncTwoBackendStore's mirror copies rewrite the whole session on the caller's loop, so whether they
# slow the median of the last appends past the growth threshold depends on how they fall (measured:
# 49× once, steady the next run). AsyncOnlyHistory (one RPUSH and EXPIRE per append) was warned on
# two clean-clone runs of command 2 in about ten (four processes on two cores): once with its last
# 300 appends at 3.61 ms against 1.01 ms for its first, while the control appends to short sessions
# made meanwhile took 0.96 ms; never alone, nor beside six CPU-bound processes: the cause is not known
MAY_LACK = {"tests.stores.consistency:AsyncTwoBackendStore": {"steady-appends"},
            "tests.stores.libraries:AsyncOnlyHistory": {"steady-appends"}}
BROKEN = {**broken.CAUGHT_BY, **policies.CAUGHT_BY, **messages.CAUGHT_BY, **expiry.CAUGHT_BY,
          **concurrency.CAUGHT_BY, **faults.CAUGHT_BY, **server.CAUGHT_BY, **compaction.CAUGHT_BY,
          **consistency.CAUGHT_BY, **latency.CAUGHT_BY}
# stores that break a guarantee (a cost, a transient effect): they pass, warned by exactly these scenarios
WARNED = {**footprint.WARNED_BY, **concurrency.WARNED_BY}
CATCHES = {**BROKEN, **WARNED}


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


def stateful_points(summary: dict) -> set[str]:
    """Where a run's stateful scenario ran: at each window size on a count-windowed store, else once."""
    if "count-window" in summary["capabilities"]:
        return {f"N={n}" for n in summary["window_sizes"]}
    return {""}


def corpus_args(store: type) -> tuple[str, ...]:
    """A store's own options (``CORPUS_ARGS``: a latency budget), else its policy's, else the token profiles."""
    if hasattr(store, "CORPUS_ARGS"):
        return store.CORPUS_ARGS
    if issubclass(store, policies.PolicyStore):
        return policy_args(",".join(store.RULES))
    if store in consistency.CAUGHT_BY:   # their mirrors never agree: a second is as good as the default 5
        return ("--consistency-timeout", "1")
    return TOKEN_ARGS if issubclass(store, broken.TokenStore) else ()


def declared_cause(store: type) -> tuple[str, dict[str, str]]:
    """What a broken store's failures must say of its cause, as the store declares it beside its
    docstring: ``CAUSE``, the cause named, or ``LISTED_CAUSE``, where the evidence cannot single it
    out and the failure lists the possible causes, this one among them. A pattern every failure of
    the scenarios that catch it matches, or a mapping of the scenarios whose failures can show it
    to a pattern each. Returns the attribute's name and the mapping."""
    declared = [name for name in ("CAUSE", "LISTED_CAUSE") if name in vars(store)]
    assert len(declared) == 1, f"{store.__name__} declares {declared or 'neither CAUSE nor LISTED_CAUSE'}"
    pattern = vars(store)[declared[0]]
    return declared[0], pattern if isinstance(pattern, dict) else dict.fromkeys(BROKEN[store], pattern)


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


@pytest.mark.parametrize("store", sorted(BROKEN, key=lambda c: c.__name__), ids=lambda c: c.__name__)
def test_broken_store_is_caught(run_suite, store, corpus_run):
    """The stateful scenario runs on the stores meant for it, and must catch them at every window
    size. On the others it may catch the bug too (which their fixed scenarios pin already): left
    out there, it would only lengthen the corpus, as would the expiry scenarios' waits. A policy
    store runs under its policy."""
    expected = set(BROKEN[store])
    left_out = [group for group, scenarios in SLOW_GROUPS.items() if not scenarios & expected]
    args = (*corpus_args(store), *(("-k", " and ".join(f"not {group}" for group in left_out)) if left_out else ()))
    result = run_suite("--store", f"{store.__module__}:{store.__name__}", *args)
    assert result.exit_code == 1, result.output
    failing = result.failing_scenarios()
    assert expected <= failing, result.output
    assert failing - broken.MAY_ALSO_CATCH == expected - broken.MAY_ALSO_CATCH, result.output
    if broken.STATEFUL in expected:
        caught_at = {f["point"] for f in result.summary["failures"] if f["scenario"] == broken.STATEFUL}
        assert caught_at == stateful_points(result.summary), result.output
    kind, patterns = declared_cause(store)
    for failure in result.summary["failures"]:
        if failure["scenario"] in patterns:
            assert re.search(patterns[failure["scenario"]], failure["message"]), (kind, failure["message"])


@pytest.mark.parametrize("store", sorted(WARNED, key=lambda c: c.__name__), ids=lambda c: c.__name__)
def test_store_breaking_a_guarantee_passes_warned(run_suite, store):
    """A cost or a transient effect is a warning: the store passes, exactly the scenarios meant for it
    warn (each naming the guarantee its conformance level then lacks), and --strict fails them."""
    expected = set(WARNED[store])
    group = {"concurrency"} if concurrency.KEEP_THE_WINDOW in expected else {"footprint"}
    args = ("--store", f"{store.__module__}:{store.__name__}", *corpus_args(store), "--groups", *group)
    result = run_suite(*args)
    assert result.exit_code == 0, result.output
    warned = {r["scenario"] for r in result.summary["results"] if r["warnings"]}
    assert warned == expected, result.output
    guarantees = {w["guarantee"] for w in result.summary["warnings"]}
    assert guarantees and not guarantees & set(result.summary["conformance_level"].split("+")), result.summary
    strict = run_suite(*args, "--strict")
    assert strict.exit_code == 1, strict.output
    assert strict.failing_scenarios() == expected, strict.output
    assert all(f["message"].endswith("(a warning: --strict fails it)") for f in strict.summary["failures"])


@pytest.mark.parametrize("store", [broken.OffByOneTrim, stateful_bugs.OneTooFew], ids=lambda c: c.__name__)
def test_the_stateful_scenario_alone_catches_a_window_one_off(run_suite, store):
    """A window of N+1 or N-1 messages, the count-window scenario's to pin, is caught by the stateful
    scenario on its own too, at every window size: its fills reach full and past-full windows."""
    result = run_suite("--store", f"{store.__module__}:{store.__name__}", "-k", "stateful")
    assert result.exit_code == 1, result.output
    failures = result.summary["failures"]
    assert {f["point"] for f in failures} == stateful_points(result.summary), result.output
    assert all(re.search(r"(kept|history has) \d+ messages, expected \d+", f["message"]) for f in failures), failures


@pytest.mark.parametrize("spec", sorted(CORRECT_STORES))
def test_correct_store_passes(run_suite, spec, corpus_run):
    args, level = CORRECT_STORES[spec]
    result = run_suite("--store", spec, *args)
    assert result.exit_code == 0, result.output
    summary = result.summary
    assert summary["totals"]["failed"] == summary["totals"]["errors"] == 0
    varying = MAY_LACK.get(spec, set())
    assert [word for word in summary["conformance_level"].split("+") if word not in varying] == [
        word for word in level.split("+") if word not in varying]
    assert summary["totals"]["passed"] > 0
    assert summary["leftovers"] == [], "a correct store left no process running: these are the suite's"
    stateful = {r["point"]: r["findings"] for r in summary["results"] if r["scenario"] == broken.STATEFUL}
    if stateful:   # what it reached, noted at each window size: full, past-full and refilled windows among it
        assert set(stateful) == stateful_points(summary), stateful
        for point, findings in stateful.items():
            assert len(findings) == 1 and findings[0].startswith(f"{point or 'unwindowed'}: "), findings
            if point:
                reached = re.search(r"loads at full (\d+), past full (\d+), refilled after clearing a full window "
                                    r"(\d+);", findings[0])
                full, past, refilled = map(int, reached.groups())
                assert full and past and (refilled or "clear" not in summary["capabilities"]), findings


def test_a_store_following_another_policy_is_told_to_pass_it(run_suite):
    """A correct start-on-user store run under the default policy, suffix, fails both window
    scenarios, and every failure names the policy the store follows."""
    result = run_suite("--store", "tests.stores.policies:StartOnUserStore", *TOKEN_ARGS,
                       "-k", "count_window or token_window")
    assert result.exit_code == 1, result.output
    failures = result.summary["failures"]
    assert {f["scenario"] for f in failures} == {policies.COUNT_WINDOW, policies.TOKEN_WINDOW}, result.output
    hint = "; this is what --window-policy start-on-user expects: if the store means to do that, pass it"
    assert all(f["message"].endswith(hint) for f in failures), result.output
    assert next(f["message"] for f in failures if f["point"] == "N=5") == (
        "N=5, after 6 appends: lost message 2 of 6 (assistant: 'turn 0002'): history has 4 messages, expected 5"
        + hint)
