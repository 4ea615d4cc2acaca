"""The options as the runner reads them, checked in-process: pip arguments, window policies,
latency budgets, groups, token counters and the bounds of sizes and budgets, each error saying what
to fix."""


import pytest

from memory_regression.runner.requirements import pip_arguments
from memory_regression.errors import UsageError
from memory_regression.groups import ALL, describe_groups, known_groups, parse_groups
from memory_regression.contract.profiles import BUILTIN_PROFILES, resolve_counter
from memory_regression.settings import Settings, parse_latency_budget, parse_window_policy


def test_pip_arguments_only_in_an_explicit_form(tmp_path):
    (tmp_path / "requirements.txt").write_text("redis\n")
    assert pip_arguments("requirements.txt", tmp_path) == ["-r", "requirements.txt"]
    assert pip_arguments("pip: langchain-core==0.3 'redis>=5'", tmp_path) == ["langchain-core==0.3", "redis>=5"]
    assert pip_arguments("--no-index --find-links wheels tinydep", tmp_path) == [
        "--no-index", "--find-links", "wheels", "tinydep"]
    with pytest.raises(UsageError, match="no such file"):
        pip_arguments("langchain-core", tmp_path)


@pytest.mark.parametrize("spec, said", [
    ("start-on-usr", "--window-policy 'start-on-usr': unknown policy 'start-on-usr'; the known ones are suffix, "
                     "start-on-user, keep-system (example: --window-policy start-on-user,keep-system)"),
    ("keep-system,", "--window-policy 'keep-system,': unknown policy ''; the known ones are suffix, start-on-user, "
                     "keep-system (example: --window-policy start-on-user,keep-system)"),
    ("keep-system,keep-system", "--window-policy 'keep-system,keep-system': keep-system is given twice"),
])
def test_window_policy_errors_say_what_to_fix(spec, said):
    with pytest.raises(UsageError) as caught:
        parse_window_policy(spec)
    assert str(caught.value) == said


def test_window_policy_reaches_the_workers_settings(tmp_path):
    """Rules in any order, spaces allowed, named in one order; the workers rebuild it from ``values``."""
    settings = Settings.from_mapping({"store": "x.py:S", "window_policy": " keep-system, start-on-user"}, tmp_path)
    assert str(settings.window_policy) == "start-on-user,keep-system"
    assert Settings.from_mapping(settings.values, tmp_path).window_policy == settings.window_policy
    assert str(Settings.from_mapping({"store": "x.py:S"}, tmp_path).window_policy) == "suffix"


BUDGET_EXAMPLE = "(example: --latency-budget-ms append=5,load=10)"


@pytest.mark.parametrize("spec, said", [
    ("append5", f"'append5' is not operation=milliseconds {BUDGET_EXAMPLE}"),
    ("save=5", f"unknown operation 'save'; the operations are append, load {BUDGET_EXAMPLE}"),
    ("append=5,append=3", "append is given twice"),
    ("load=fast", f"load='fast' is not a number of milliseconds above 0 {BUDGET_EXAMPLE}"),
    ("append=0", f"append='0' is not a number of milliseconds above 0 {BUDGET_EXAMPLE}"),
    ("append=inf", f"append='inf' is not a number of milliseconds above 0 {BUDGET_EXAMPLE}"),
    ("append=5,", f"'' is not operation=milliseconds {BUDGET_EXAMPLE}"),
])
def test_latency_budget_errors_say_what_to_fix(spec, said):
    with pytest.raises(UsageError) as caught:
        parse_latency_budget(spec)
    assert str(caught.value) == f"--latency-budget-ms {spec!r}: {said}"


def test_latency_budget_reaches_the_workers_settings(tmp_path):
    settings = Settings.from_mapping({"store": "x.py:S", "latency_budget_ms": " load = 10 , append=2.5"}, tmp_path)
    assert settings.latency_budget_ms == {"load": 10.0, "append": 2.5}
    assert Settings.from_mapping(settings.values, tmp_path).latency_budget_ms == settings.latency_budget_ms
    assert Settings.from_mapping({"store": "x.py:S"}, tmp_path).latency_budget_ms == {}
    assert Settings.from_mapping({"store": "x.py:S", "latency_budget_ms": ""}, tmp_path).latency_budget_ms == {}



SERVICE_FIX = ("give the http:// or https:// URL of the service your store calls (example: --service-url "
               "http://127.0.0.1:8000)")


@pytest.mark.parametrize("spec, said", [
    ("ftp://host/", f"--service-url 'ftp://host/': {SERVICE_FIX}"),
    ("127.0.0.1:8000", f"--service-url '127.0.0.1:8000': {SERVICE_FIX}"),
    ("http://", f"--service-url 'http://': {SERVICE_FIX}"),
    ("http://host:port", "--service-url 'http://host:port': not a URL (Port could not be cast to integer value as "
                         f"'port'): {SERVICE_FIX}"),
    ("http://ho st", "--service-url 'http://ho st': longer than 2,048 characters or holding spaces or control "
                     f"characters: {SERVICE_FIX}"),
    ("http://u:secret@host/\a", "--service-url 'http://***@host/\\x07': longer than 2,048 characters or holding "
                                 f"spaces or control characters: {SERVICE_FIX}"),
    ("http://h/" + "a" * 2048, f"--service-url {'http://h/' + 'a' * 71!r}: longer than 2,048 characters or holding "
                               f"spaces or control characters: {SERVICE_FIX}"),
])
def test_a_service_url_that_is_no_http_url_says_what_to_fix(tmp_path, spec, said):
    with pytest.raises(UsageError) as caught:
        Settings.from_mapping({"store": "x.py:S", "service_url": spec}, tmp_path)
    assert str(caught.value) == said


def test_the_service_url_reaches_the_workers_settings(tmp_path):
    settings = Settings.from_mapping({"store": "x.py:S", "service_url": " https://memory.internal:8000/ "}, tmp_path)
    assert settings.service_url == "https://memory.internal:8000/"
    assert Settings.from_mapping(settings.values, tmp_path).service_url == settings.service_url
    assert Settings.from_mapping({"store": "x.py:S", "service_url": ""}, tmp_path).service_url is None

def test_groups_name_left_out_and_chosen_ones():
    every = known_groups()
    assert {"core", "count-window", "concurrency", "faults", "stateful"} <= set(every)
    assert parse_groups("all") == every
    assert parse_groups("default,-concurrency") == tuple(g for g in parse_groups("default") if g != "concurrency")
    assert parse_groups("-concurrency") == parse_groups("default,-concurrency")   # leaving out starts from default
    assert parse_groups(" ttl , core") == ("core", "ttl")                          # in the suite's order
    assert parse_groups("all,-core,core") == every                                 # the last word on a group wins
    assert describe_groups(every) == ALL
    assert describe_groups(("core", "ttl")) == (
        f"core, ttl (left out: {', '.join(g for g in every if g not in ('core', 'ttl'))})")


@pytest.mark.parametrize("spec, said", [
    ("cores", "there is no group 'cores'; the groups are compaction, concurrency, consistency, core, "),
    ("core,", "'' is not a group or a set of them (example: --groups default,-concurrency"),
    ("-all", "'-all' is not a group or a set of them"),
    ("core,-core", "leaves no group to run"),
])
def test_group_errors_say_what_to_fix(spec, said):
    with pytest.raises(UsageError) as caught:
        parse_groups(spec)
    assert str(caught.value).startswith(f"--groups {spec!r}: {said}") or (
        said in str(caught.value) and str(caught.value).startswith(f"--groups {spec!r}")), str(caught.value)


COUNTERS = """
def floats(content):
    return len(content) / 4

def negative(content):
    return -1

def text(content):
    return "12"

def raises(content):
    raise ValueError("no model")
"""


COUNTER_FAULTS = {
    "floats": "returned 6.25 for 'Hello, how are you today?': it must return the message's cost as a whole number",
    "negative": "returned -1 for", "text": "returned '12' for",
    "raises": "raised on 'Hello, how are you today?': ValueError: no model"}


@pytest.mark.parametrize("name", sorted(COUNTER_FAULTS))
def test_each_way_a_token_counter_fails_is_said(tmp_path, name):
    (tmp_path / "counters.py").write_text(COUNTERS)
    with pytest.raises(UsageError) as raised:
        resolve_counter(BUILTIN_PROFILES["small-4k"], f"counters.py:{name}", tmp_path)
    assert f"--token-counter 'counters.py:{name}' {COUNTER_FAULTS[name]}" in str(raised.value)


def test_window_sizes_and_budgets_are_bounded(tmp_path):
    with pytest.raises(UsageError, match="999,999,999 is over the largest window the suite runs, 10,000"):
        Settings.from_mapping({"store": "x.py:S", "window_sizes": "5,999999999"}, tmp_path)
    (tmp_path / "huge.yaml").write_text("profiles:\n  - name: huge\n"
                                        "    context_tokens: 1000000000000000000000000000000\n")
    with pytest.raises(UsageError, match="context_tokens is 1,000,000,000,000,000,000,000,000,000,000, over the "
                                         "largest the suite runs, 2,000,000 tokens"):
        Settings.from_mapping({"store": "x.py:S", "model_profiles": "huge.yaml"}, tmp_path)
