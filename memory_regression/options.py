"""The suite's options, defined once: each flag with its default, its help, and the full text that
docs/running.md's table gives it (docs/build_options.py writes that table and action.yml's inputs
from here). :mod:`.settings` checks their values and builds the run's :class:`~.settings.Settings`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .groups import DEFAULT
from .contract.profiles import DEFAULT_PROFILES
from .reference.model import SUFFIX_NAME
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


def defaults() -> dict[str, Any]:
    return {option.key: option.default for option in OPTIONS}
