"""The suite's options, defined once, and :class:`Settings`, built from a plain mapping of them.

The runner fills the mapping from its command line (and a GitHub Action's inputs), the plugin from
pytest's options, and a worker from what the runner hands it: nothing here needs pytest. Every
check that needs no user code happens here, so bad input stops a run before anything starts.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping
from urllib.parse import urlsplit

from .engines.registry import engine_names
from .contract.rules import STORE_PARAMETERS, contract_parameter
from .errors import UsageError
from .groups import DEFAULT, parse_groups
from .contract.profiles import DEFAULT_PROFILES, ModelProfile, check_counter_name, load_profiles
from .redaction import redact_url
from .reference.model import Rule, SUFFIX_NAME, WindowPolicy
from .reports.figures import LATENCY_OPERATIONS
from .reports.baseline import DEFAULT_FAIL_ON, FAIL_ON, FAIL_ON_ALL, FAIL_ON_NONE


@dataclass(frozen=True)
class Option:
    flag: str
    default: Any
    help: str
    metavar: str | None = None
    is_switch: bool = False
    runner_only: bool = False     # the runner's own (installing, changing directory, exit status)
    pytest_flag: str | None = None   # its name under plain pytest, where pytest has the flag already
    shown: str = ""               # its default as docs/running.md's table says it (`5,20`, off, found by name)
    doc: str = ""                 # what it does, in full, for that table (docs/build_options.py writes it)

    @property
    def plugin_flag(self) -> str:
        """Its name among pytest's options (``pytest -p memory_regression.plugin``)."""
        return self.pytest_flag or self.flag

    @property
    def key(self) -> str:
        """Its name in a settings mapping: ``--window-sizes`` is ``window_sizes``."""
        return self.flag.lstrip("-").replace("-", "_")

    @property
    def dest(self) -> str:
        """Its name among pytest's options, kept apart from other plugins' options."""
        return "memory_" + self.key


def _method_option(role: str, examples: str, more: str) -> Option:
    """``--append-method``, ``--load-method``, ``--clear-method``: the store's own name of a method."""
    return Option(f"--{role}-method", None, f"name of the store's {role} method, if not found by name", "NAME",
                  shown="found by name", doc=f"your {role} method's name, if the search does not find it (`--list` "
                                             f"proposes one whose name says it {examples}){more}")


MAX_WINDOW = 10_000   # the largest --window-sizes entry; bench/bench_window_cost.py measures it

OPTIONS: tuple[Option, ...] = (
    Option("--store", None, "your store: path/to/file.py:NAME or package.module:NAME (a class or factory); "
           "path/to/file.mjs:NAME for a Node.js module's export (.js, .cjs, .ts too), node:PACKAGE:NAME for a "
           "Node.js package's; 'cmd:PROGRAM ARGS' for any "
           "program that speaks the store protocol (docs/protocol.md)", "SPEC",
           shown='(required, here or in pyproject.toml)',
           doc='`path/to/file.py:NAME` (relative to the working directory) or `package.module:NAME` importable from '
               "it; `path/to/file.mjs:NAME` (also `.js`, `.cjs`, `.ts`, `.mts`, `.cts`) for a Node.js module's "
               "export, `node:PACKAGE:NAME` for a Node.js package's, or `cmd:PROGRAM ARGS` for any program that "
               'speaks the store protocol ([protocol](protocol.md))'),
    Option("--window-sizes", "5,20", f"count windows N to test, comma-separated, each 1 to {MAX_WINDOW:,}", "N,N",
           shown='`5,20`',
           doc='count windows to test, whole numbers from 1 to 10,000 (a larger window would reach the scenario '
               'timeout on a correct store: N=10,000 takes about 4 s, see [Measured](measured.md))'),
    Option("--window-policy", SUFFIX_NAME, "what your store keeps within its window: suffix (the newest "
           "messages that fit), or rules, comma-separated: start-on-user (the history never starts with an "
           "assistant or tool message), keep-system (a leading system message is always kept, and counts)",
           "RULES",
           shown='`suffix`',
           doc='what your store keeps within its window: `suffix`, or rules, comma-separated: `start-on-user`, '
               '`keep-system` (see [Window policies](contract.md#window-policies)); `suffix` combined with a rule, or'
               ' an unknown name, is a usage error'),
    Option("--model-profiles", DEFAULT_PROFILES,
           "built-in profile names, comma-separated, or a YAML file of profiles", "NAMES|FILE",
           shown='all built-ins',
           doc='built-in profile names, comma-separated, or a YAML file of profiles'),
    Option("--token-counter", None,
           "count tokens as your store does: chars, words, approx, a tiktoken encoding, or "
           "module:function / file.py:function (the whole per-message cost)", "COUNTER",
           shown="the profile's",
           doc='`chars`, `words`, `approx`, a tiktoken encoding, or `module:function` / `file.py:function`, or a '
               "function of another language in `--store`'s forms (`counter.mjs:messageTokens`: "
               '[protocol](protocol.md#what-crosses-and-what-does-not)); a function is called once before the run, '
               'and one that raises or returns anything but a whole number of at least 0 is a usage error'),
    Option("--groups", DEFAULT, "scenario groups to run, comma-separated: names (core, count-window, "
           "concurrency, ...; --list shows them), all, default, or -name to leave one out "
           "(default,-concurrency)", "GROUPS",
           shown='`default`',
           doc='scenario groups to run, comma-separated ([the scenarios](scenarios.md), by name: `core`, '
               '`count-window`, `concurrency`, ...): group names run just those; `all` and `default` start from every'
               ' group or from the default set, and `-name` leaves one out (`default,-concurrency`); an unknown name '
               'is a usage error that lists the groups. Every group is in the default set (the default run stays '
               'under 10 s, see [Measured](measured.md))'),
    Option("--redis", "auto", "auto (private server, else fakeredis with a warning), server, valkey, "
           "cluster (a private 3-master Redis Cluster), fakeredis, image:NAME (a container image's server, "
           "through Docker), or a redis:// URL; several, comma-separated (server,fakeredis), run every "
           "scenario on each and compare", "ENGINES",
           shown='`auto`',
           doc='`auto`, `server`, `valkey`, `cluster` (a private 3-master Redis Cluster), `fakeredis`, `image:NAME` '
               "(a container image's server, through Docker) or a `redis://` URL; several, comma-separated "
               '(`server,fakeredis`, `server,valkey`, `image:redis:8.2,image:valkey/valkey:8`), run every scenario on'
               ' each and compare (see [Redis](engines.md))'),
    Option("--service-url", None, "the http(s) URL of the memory service your store is a client of "
           "(agent-memory-server's): the suite gives it to the store as service_url; let --redis name the "
           "Redis the service uses", "URL",
           shown='',
           doc="the `http://` or `https://` URL of the memory service your store is a client of (Redis' "
               "agent-memory-server, whose client binds with no other option): the suite gives it to your factory as"
               " `service_url`, and a store that requires it without this option is a usage error. The service "
               'keeps sessions in the Redis it was started with, so let `--redis` name that Redis (a URL, on the '
               'database the service uses): the scenarios then read and observe what the service wrote, and those '
               "that need a server of their own (a restart, a full memory) judge nothing the store did not touch "
               "([frameworks](frameworks.md#agent-memory-server-a-service-of-your-own))"),
    Option("--strict", False, "fail the scenarios that warn (a cost or a transient effect, such as storage a "
           "window does not bound), as well as those that fail", is_switch=True, pytest_flag="--memory-strict",
           shown='off',
           doc='fail the scenarios that warn (a cost or a transient effect: storage a window does not bound, a reader'
               ' over the window between a push and its trim, append time that grows with the history) as well as '
               'those that fail; under plain pytest the flag is `--memory-strict`, as pytest has a `--strict` of its '
               'own'),
    Option("--allow-flush", False, "let the suite flush a non-empty database of --redis URL",
           is_switch=True,
           shown='off',
           doc='let the suite flush a non-empty database of a `--redis` URL'),
    Option("--report-dir", "memory-reports", "where junit.xml, report.html, summary.md and "
           "summary.json are written", "DIR",
           shown='`memory-reports`',
           doc='where the reports are written'),
    Option("--store-params", None, "your factory's parameters that are contract parameters under another "
           "name, as yours=contract's, comma-separated (limit=max_messages,expire_seconds=ttl): the suite "
           "fills them as it fills the contract's", "NAME=PARAM,...",
           shown='',
           doc="your factory's parameters that are contract parameters under another name, as yours=contract's "
               '(`limit=max_messages,expire_seconds=ttl`; a contract alias works too): the suite fills them as the '
               "contract's, and the capabilities follow; two parameters that stand for one contract parameter "
               "(mapped, or by name: redisvl's `name=namespace` beside its `prefix`) both get its value. A name your "
               'factory does not take, or a parameter mapped twice, is a usage error. See [Before the '
               'scenarios](contract.md#before-the-scenarios-what-the-store-does-with-what-it-is-given)'),
    *(_method_option(role, examples, more) for role, examples, more in (
        ("append", "appends: `remember`, `add_turn`", ""),
        ("load", "loads: `recall`, `fetch_history`", "; on a store built per session (its factory takes `session_id`), "
         "it may name a property, read as the history (redisvl's `messages`)"),
        ("clear", "clears: `forget`, `drop_session`", ""))),
    Option("--call-timeout", "10", "seconds before one call of your store (an append, a load, a clear) is "
           "cut off and reported as a hang, naming the call", "SECONDS",
           shown='`10`',
           doc='one call of your store (an append, a load, a clear) that takes longer is cut off: its worker is '
               'killed and the hang reported, naming the call and its arguments, with where your store was. 10 s is a'
               ' hundred times or more the slowest call of a correct store we know of (the 3,000th append of one that'
               ' rewrites its whole history: 0.03 s here, about 0.1 s on the machine of issue 8, where its 3,000 '
               'appends took 171 s), and the time after which a hang is reported'),
    Option("--scenario-timeout", "300", "seconds before a whole scenario, or the import of your store, is "
           "cut off: the backstop for a hang outside the store's calls and a store slow throughout",
           "SECONDS",
           shown='`300`',
           doc='a scenario (or the import of your store) that takes longer is cut off the same way: the backstop for '
               "a hang outside the store's calls (its import, closing it, a thread it started) and for a store slow "
               'throughout. The longest scenario of a slow but correct store stays far below it: no-silent-cap stops '
               'appending after 20 s'),
    Option("--append-budget", None, "seconds the scenarios that append only to find caps and growth (no-silent-cap, "
           "up to 3,000 appends; many-fast-appends, up to 400) append at most: a slow store is judged on what it "
           "appended by then (default: their own 20 s and 10 s; at most a quarter of --scenario-timeout)", "SECONDS",
           shown='their own: 20 and 10',
           doc='the longest the two scenarios that append only to find caps and growth keep appending: no-silent-cap '
               '(up to 3,000 messages, 20 s) and many-fast-appends (up to 400, 10 s). A slow store is judged on what '
               'it appended by then, and a note says how far it got; fewer than 200 appends leave steady-appends '
               'unjudged. A correct store on a real server appends all of them in under a second, so it only shortens'
               ' runs of slow stores (a library that rewrites its whole session at every append spends 30 s in these '
               'two by default), at the cost of caps and growth above what the shorter budget reaches. At most a '
               'quarter of `--scenario-timeout`'),
    Option("--consistency-timeout", "5", "seconds the suite polls consistent_state, for a store that has it, "
           "until every backend the store writes agrees; still False then is a failure (at most a quarter of "
           "--scenario-timeout is waited; each poll is one call, cut off at --call-timeout)", "SECONDS",
           shown='`5`',
           doc="how long the consistency scenarios poll your store's `consistent_state` (with tenacity: every 2 ms, "
               'then 2 ms longer each round, at most 50 ms apart) until its backends agree on every session they '
               'wrote; still False then fails the scenario, saying for how long and for which sessions. At most a '
               'quarter of `--scenario-timeout` is waited, so the scenario can still say what lagged; each poll is '
               'one call of your store, cut off at `--call-timeout` like any other. 5 s is about 250 times what the '
               'two-backend example takes (its mirror lags 20 ms by design: p50 about 20 ms after the writes end)'),
    Option("--latency-budget-ms", None, "turn latency into failures: the most milliseconds the p95 of an "
           "append or a load may take, as operation=ms, comma-separated (append=5,load=10); without it "
           "latency is only reported", "OP=MS,...",
           shown='',
           doc="latency budgets, which turn the latency scenario's figures into failures: the most milliseconds the "
               "**p95** of an append or a load may take on the run's server (`append=5,load=10`; either alone); "
               'without it latency is a finding in the reports, never a failure. p95, because one call in twenty over'
               ' the budget is what users notice, while a p99 of a few hundred samples is decided by one or two calls'
               ' a pause of the machine slowed. A malformed value is a usage error (exit 2) that says what to fix'),
    Option("--requirements", None, "your store's dependencies, installed before the run: a requirements "
           "file that must exist, or pip arguments after 'pip:' (pip: package==1.0) or starting with -",
           "FILE|ARGS", runner_only=True,
           shown='',
           doc="install your store's dependencies first: `pip install -r FILE` (a FILE that does not exist is a usage"
               " error, never a package name to look up on the index), or pip's own arguments in an explicit form, "
               '`pip: package==1.0 other` or starting with `-` (`-r a.txt -c b.txt`)'),
    Option("--working-directory", None, "run from this directory (store paths and --report-dir are "
           "relative to it)", "DIR", runner_only=True,
           shown='the current one',
           doc='run from DIR'),
    Option("--run-timeout", "3600", "seconds the whole run may take: past it the workers are stopped and the "
           "reports written, saying \"did not finish\" (exit 1)", "SECONDS", runner_only=True,
           shown='`3600`',
           doc="the whole run's deadline, kept by a timer of the runner's that nothing in a worker can reach: past it"
               ' the workers are killed and the reports written with what was judged, status "did not finish", exit 1'
               ' (also under `--fail-on-failure false`: it is no verdict on the store)'),
    Option("--baseline", None, "the summary.json of an earlier run (the base branch's) to compare this run "
           "with: every report then says which scenarios newly fail or pass, what the conformance level and the "
           "warnings lost or gained, and which figures (latency against the Redis floor, bytes per message) moved "
           "beyond the noise", "FILE", runner_only=True,
           shown='',
           doc="the `summary.json` of an earlier run (the base branch's) to compare this run with: every report gets "
               'a section saying which scenarios newly fail, pass or are skipped, what the conformance level lost or '
               'gained, which warnings are new or gone, and which figures (latency against the Redis floor, bytes per'
               ' message) moved beyond the noise ([reports](reports.md#compared-with-a-baseline)); it is read before '
               'any scenario runs, and a file that is missing, larger than 16 MB, a pipe that does not deliver within '
               '10 s, or no summary of a run (each field is checked: the message names the one that is wrong) is a '
               'usage error (exit 2)'),
    Option("--write-baseline", None, "also write this run's summary as a baseline to commit (memory-baseline.json), "
           "for --baseline to compare later runs with: summary.json without what changes between runs of the same "
           "code (durations, the server's port, report paths); written when the run judged the store", "FILE",
           runner_only=True,
           shown='',
           doc="also write the run's summary as a baseline to commit (`memory-baseline.json`), without what changes "
               'between runs of the same code; written when the run judged the store; a directory that does not exist'
               ' is a usage error'),
    Option("--fail-on-regression", None, "with --baseline, what fails the run (exit 1), comma-separated: "
           + ", ".join(f"{name} ({words})" for name, words in FAIL_ON.items())
           + f"; {FAIL_ON_ALL} for all of them, {FAIL_ON_NONE} for none; the default, {','.join(DEFAULT_FAIL_ON)}, "
           "lets a scenario that failed in the baseline too pass",
           "WHAT,...", runner_only=True,
           shown='`new-failures`',
           doc='with `--baseline`, what makes the run exit 1: `new-failures` (scenarios failing now that did not in '
               'the baseline), `failures` (any), `lost-guarantees` (capabilities and guarantees lost from the '
               "conformance level by their own scenarios' failures), `figures` (latency or bytes per message worse "
               'beyond the noise); `true` for all of them, `false` for none; an unknown name is a usage error; '
               'without `--baseline` it changes nothing, and the run says so '
               '([reports](reports.md#compared-with-a-baseline))'),
    Option("--fail-on-failure", "true", "false: exit 0 when scenarios fail (usage and Redis errors "
           "still exit 2 and 3)", "true|false", runner_only=True,
           shown='`true`',
           doc='`false`: exit 0 when scenarios fail'),
)
SUITE_OPTIONS = tuple(o for o in OPTIONS if not o.runner_only)

WINDOWLESS = 1_000_000      # max_messages in scenarios that are not about the count window
ROOMY_TTL_S = 3600          # ttl in scenarios that are not about expiry
DEFAULT_TENANT = "tenant-1"  # user_id in scenarios that are not about tenants
METHOD_ROLES = ("append", "load", "clear")
BUDGET_SHARE = 4            # a scenario's time budget (a wait, a bounded run of appends) is at most this part
                            # of the scenario timeout, which leaves the rest of the scenario room


def defaults() -> dict[str, Any]:
    return {option.key: option.default for option in OPTIONS}


@dataclass(frozen=True)
class Settings:
    """Everything a run needs to know, checked. ``values`` is the mapping it was built from, which
    is what a worker process receives to build the same settings."""

    store_spec: str
    window_sizes: tuple[int, ...]
    window_policy: WindowPolicy
    groups: tuple[str, ...]
    profiles: tuple[ModelProfile, ...]
    token_counter: str | None
    redis_choice: str
    allow_flush: bool
    strict: bool
    report_dir: Path
    method_overrides: dict[str, str | None]
    call_timeout: float
    scenario_timeout: float
    consistency_timeout: float
    workdir: Path
    append_budget: float | None = None   # --append-budget: the most any bounded run of appends takes
    latency_budget_ms: dict[str, float] = field(default_factory=dict)   # operation -> the p95's budget
    store_params: dict[str, str] = field(default_factory=dict)   # --store-params: the factory's name -> canonical
    service_url: str | None = None      # --service-url: the memory service the store is a client of
    values: dict[str, Any] = field(repr=False, compare=False, default_factory=dict)

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any], workdir: Path) -> "Settings":
        """Check every option; raise UsageError saying what to fix."""
        values = {**defaults(), **{k: v for k, v in values.items() if v is not None}}
        store = str(values["store"] or "").strip()
        if not store:
            raise UsageError("no store given: pass --store path/to/file.py:NAME or package.module:NAME")
        profiles = load_profiles(str(values["model_profiles"]), workdir)
        try:
            engine_names(str(values["redis"]))
        except ValueError as exc:
            raise UsageError(f"--redis {redact_url(str(values['redis']))!r}: {exc}") from None
        counter = values["token_counter"] or None
        if counter and ":" not in counter:
            check_counter_name(counter, "--token-counter")
        return cls(
            store_spec=store,
            window_sizes=parse_window_sizes(values["window_sizes"]),
            window_policy=parse_window_policy(values["window_policy"]),
            groups=parse_groups(values["groups"]),
            profiles=tuple(profiles),
            token_counter=counter,
            redis_choice=str(values["redis"]),
            allow_flush=is_on(values["allow_flush"]),
            strict=is_on(values["strict"]),
            report_dir=workdir / str(values["report_dir"]),
            method_overrides={role: values[f"{role}_method"] or None for role in METHOD_ROLES},
            call_timeout=parse_timeout(values["call_timeout"], "--call-timeout"),
            scenario_timeout=parse_timeout(values["scenario_timeout"], "--scenario-timeout"),
            consistency_timeout=parse_timeout(values["consistency_timeout"], "--consistency-timeout"),
            workdir=workdir,
            append_budget=None if values["append_budget"] in (None, "") else parse_timeout(values["append_budget"],
                                                                                          "--append-budget"),
            latency_budget_ms=parse_latency_budget(values["latency_budget_ms"]),
            store_params=parse_store_params(values["store_params"]),
            service_url=parse_service_url(values["service_url"]),
            values={k: values[k] for k in (o.key for o in SUITE_OPTIONS)},
        )

    @property
    def redis_shown(self) -> str:
        """The --redis choice as it may be printed: a URL's credentials are redacted."""
        return redact_url(self.redis_choice)


def is_on(value: Any) -> bool:
    """A switch's value, from a flag (True) or an input's text."""
    return value in (True, "true", "True", "1")


def parse_window_sizes(spec: Any) -> tuple[int, ...]:
    """``--window-sizes 5,10,50``: whole numbers from 1 to MAX_WINDOW, no repeats."""
    sizes: list[int] = []
    for part in str(spec).split(","):
        part = part.strip()
        if not re.fullmatch(r"[0-9]{1,9}", part) or int(part) < 1:
            raise UsageError(f"--window-sizes {spec!r}: {part!r} is not a whole number of at least 1 "
                             "(example: --window-sizes 5,10,50)")
        if int(part) > MAX_WINDOW:
            raise UsageError(f"--window-sizes {spec!r}: {int(part):,} is over the largest window the suite runs, "
                             f"{MAX_WINDOW:,} (the window scenarios append 2N+3 messages and more: N={MAX_WINDOW:,} "
                             "takes seconds, a larger N would reach the scenario timeout on a correct store)")
        if int(part) in sizes:
            raise UsageError(f"--window-sizes {spec!r}: {part} is given twice")
        sizes.append(int(part))
    return tuple(sizes)


def parse_window_policy(spec: Any) -> WindowPolicy:
    """``--window-policy start-on-user,keep-system``: suffix alone, or rules, each once."""
    names = [part.strip() for part in str(spec).split(",")]
    known = ", ".join([SUFFIX_NAME, *(rule.value for rule in Rule)])
    rules: list[Rule] = []
    for name in names:
        if name == SUFFIX_NAME:
            if len(names) > 1:
                raise UsageError(f"--window-policy {spec!r}: {SUFFIX_NAME} is the policy without rules and "
                                 "combines with none: give it alone, or the rules alone (example: --window-policy "
                                 "start-on-user,keep-system)")
            continue
        if name not in {rule.value for rule in Rule}:
            raise UsageError(f"--window-policy {spec!r}: unknown policy {name!r}; the known ones are {known} "
                             "(example: --window-policy start-on-user,keep-system)")
        if Rule(name) in rules:
            raise UsageError(f"--window-policy {spec!r}: {name} is given twice")
        rules.append(Rule(name))
    return WindowPolicy(frozenset(rules))


def parse_latency_budget(spec: Any) -> dict[str, float]:
    """``--latency-budget-ms append=5,load=10``: each operation once, a finite number of milliseconds
    above 0; empty (or not given) is no budget."""
    budget: dict[str, float] = {}
    if spec is None or not str(spec).strip():
        return budget
    example = "(example: --latency-budget-ms append=5,load=10)"
    for part in str(spec).split(","):
        name, equals, value = (piece.strip() for piece in part.partition("="))
        if not equals:
            raise UsageError(f"--latency-budget-ms {spec!r}: {part.strip()!r} is not operation=milliseconds {example}")
        if name not in LATENCY_OPERATIONS:
            raise UsageError(f"--latency-budget-ms {spec!r}: unknown operation {name!r}; the operations are "
                             f"{', '.join(LATENCY_OPERATIONS)} {example}")
        if name in budget:
            raise UsageError(f"--latency-budget-ms {spec!r}: {name} is given twice")
        milliseconds = positive_number(value)
        if milliseconds is None:
            raise UsageError(f"--latency-budget-ms {spec!r}: {name}={value!r} is not a number of milliseconds "
                             f"above 0 {example}")
        budget[name] = milliseconds
    return budget


def parse_store_params(spec: Any) -> dict[str, str]:
    """``--store-params limit=max_messages,expire_seconds=ttl``: each of the factory's parameters once,
    each onto a contract parameter (canonical or alias); two mapped onto one both get its value."""
    mapping: dict[str, str] = {}
    if spec in (None, ""):
        return mapping
    names = ", ".join(STORE_PARAMETERS)
    for part in str(spec).split(","):
        own, sep, theirs = (piece.strip() for piece in part.partition("="))
        if not sep or not own.isidentifier() or not theirs:
            raise UsageError(f"--store-params {spec!r}: {part.strip()!r} is not yours=contract's "
                             f"(limit=max_messages); the contract's parameters: {names}")
        canonical = contract_parameter(theirs)
        if canonical is None:
            raise UsageError(f"--store-params {spec!r}: {theirs!r} is no contract parameter; they are: {names}")
        if own in mapping:
            raise UsageError(f"--store-params {spec!r}: {own!r} is mapped twice")
        mapping[own] = canonical
    return mapping


MAX_URL = 2048


def parse_service_url(spec: Any) -> str | None:
    """``--service-url http://127.0.0.1:8000``: an http or https URL with a host, of at most
    :data:`MAX_URL` characters and no spaces or control characters; empty (or not given) is none."""
    if spec is None or not str(spec).strip():
        return None
    url = str(spec).strip()
    fix = "give the http:// or https:// URL of the service your store calls (example: --service-url " \
          "http://127.0.0.1:8000)"
    if len(url) > MAX_URL or any(ch.isspace() or not ch.isprintable() for ch in url):
        raise UsageError(f"--service-url {redact_url(url)[:80]!r}: longer than {MAX_URL:,} characters or holding "
                         f"spaces or control characters: {fix}")
    try:
        parts = urlsplit(url)
        parts.port   # noqa: B018 (a port that is no number raises here)
    except ValueError as exc:
        raise UsageError(f"--service-url {redact_url(url)!r}: not a URL ({exc}): {fix}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(f"--service-url {redact_url(url)!r}: {fix}")
    return url


def parse_timeout(spec: Any, flag: str) -> float:
    """``--call-timeout``, ``--scenario-timeout``, ``--consistency-timeout``, ``--append-budget``: a finite number
    of seconds above 0."""
    timeout = positive_number(spec)
    if timeout is None:
        raise UsageError(f"{flag} {spec!r}: give a number of seconds above 0 (example: 30)")
    return timeout


def positive_number(spec: Any) -> float | None:
    """``spec`` as a finite number above 0, or None when it is not one."""
    try:
        number = float(spec)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) and number > 0 else None
