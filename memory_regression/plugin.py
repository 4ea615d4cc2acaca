"""The pytest plugin that runs the suite against a user's store.

It reads the options, loads the store and starts Redis before collection, parametrizes
scenarios over window sizes and model profiles, gives each scenario a :class:`ScenarioContext`
(fixture ``memory``) on a clean database, skips scenarios whose capability the store lacks,
records per-case properties in junit.xml, adds to pytest-html's report through its hooks, and
writes summary.md and summary.json. ``suite/conftest.py`` loads it.
"""

from __future__ import annotations

import asyncio
import hashlib
import html
import inspect
import time
import traceback
from pathlib import Path
from typing import Any

import pytest

from .backend import Backend, BackendError, EmptyDatabaseRequired, install_signal_handlers, open_backend
from .capabilities import MISSING_REASON, Capability, conformance_level, detect
from .contract import ContractError, StoreAdapter, StoreBinding, bind_store, close_quietly, load_object
from .profiles import ModelProfile
from .reference import HistoryMismatch
from .reports import (EXIT_FAILED, EXIT_INTERRUPTED, EXIT_PASSED, EXIT_REDIS, EXIT_USAGE, RunSummary,
                      ScenarioResult, render_terminal, write_error_junit, write_summaries)
from .settings import OPTIONS, ROOMY_TTL_S, WINDOWLESS, RunSettings, option_value, report_dir, resolve_settings

MAX_KEYS_WITHOUT_TTL = 200


class ScenarioContext:
    """What one scenario gets: stores built afresh by the user's factory, and a view of the keys.

    The database is flushed when the context is made, so every key seen belongs to the scenario.
    """

    def __init__(self, run: "SuiteRun", nodeid: str):
        self.run = run
        self.binding: StoreBinding = run.binding
        self.backend: Backend = run.backend
        self.namespace = "mrs:" + hashlib.sha1(nodeid.encode()).hexdigest()[:8] + ":"
        self.profile: ModelProfile = run.settings.profiles[0]
        self._loop = asyncio.Runner() if self.binding.is_async else None
        self._stores: list[Any] = []
        self._clients: list[Any] = []
        self.backend.flush()

    def run_awaitable(self, awaitable: Any) -> Any:
        if self._loop is None:
            return asyncio.run(awaitable)
        return self._loop.run(awaitable)

    def store(self, *, max_messages: int = WINDOWLESS, profile: ModelProfile | None = None,
              ttl: int = ROOMY_TTL_S) -> StoreAdapter:
        """A new store instance. Arguments not about the scenario's subject are roomy: a window
        of a million messages, an unbounded token budget, a TTL of an hour."""
        profile = profile or self.profile.unbounded()
        client = self.backend.client(asynchronous=self.binding.is_async)
        self._clients.append(client)
        values = {
            "redis": client, "redis_url": self.backend.url, "namespace": self.namespace,
            "max_messages": max_messages, "max_tokens": profile.max_tokens,
            "count_tokens": self.run.settings.counters[profile.name], "ttl": ttl, "profile": profile,
        }
        instance = self.binding.factory(**self.binding.build_kwargs(values))
        self._stores.append(instance)
        return StoreAdapter(self.binding, instance, self.run_awaitable)

    def keys(self) -> list[str]:
        return sorted(self.backend.admin.scan_iter(count=1000))

    def pttl_ms(self, key: str) -> int:
        return self.backend.admin.pttl(key)

    def close(self, nodeid: str) -> None:
        for instance in self._stores:
            close_quietly(instance, self.run_awaitable)
        for client in self._clients:
            try:
                if self.binding.is_async:
                    self.run_awaitable(client.aclose())
                else:
                    client.close()
            except Exception:
                pass
        if self._loop is not None:
            self._loop.close()
        self.run.note_keys_without_ttl(nodeid, [k for k in self.keys() if self.pttl_ms(k) == -1])


class SuiteRun:
    """One run of the suite: settings, the store, the backend, results and the summary."""

    def __init__(self, config: pytest.Config):
        self.config = config
        self.settings: RunSettings | None = None
        self.backend: Backend | None = None
        self.binding: StoreBinding | None = None
        self.capabilities: frozenset[Capability] = frozenset()
        self.summary = RunSummary()
        self.report_dir = report_dir(config)
        self.started = time.monotonic()
        self.results: dict[str, ScenarioResult] = {}
        self.aborted = False
        self.collection_errors: list[str] = []

    # -- start -------------------------------------------------------------------------------
    def start(self) -> None:
        """Resolve the options, load the store, open Redis and bind the store to the contract.

        Anything wrong stops the run before collection, with every report still written."""
        install_signal_handlers()
        try:
            self._start()
        except (ContractError, EmptyDatabaseRequired) as exc:
            self.abort("usage error", EXIT_USAGE, str(exc))
        except BackendError as exc:
            self.abort("redis error", EXIT_REDIS, str(exc))

    def _start(self) -> None:
        summary = self.summary
        self.settings = settings = resolve_settings(self.config)
        summary.store = settings.store_spec
        summary.window_sizes = settings.window_sizes
        summary.profiles = [{"name": p.name, "context_tokens": p.context_tokens,
                             "reserved_output_tokens": p.reserved_output_tokens,
                             "per_message_overhead": p.per_message_overhead, "max_tokens": p.max_tokens,
                             "counter": settings.counters[p.name].description}
                            for p in settings.profiles]
        factory, source = load_object(settings.store_spec, settings.workdir)
        summary.store_file = str(source) if source else None
        summary.store_line = definition_line(factory)
        self.backend = open_backend(settings.redis_choice, settings.allow_flush)
        summary.backend = self.backend.description
        summary.backend_warning = self.backend.warning
        self.binding = bind_store(settings.store_spec, factory, source, settings.method_overrides, self._probe)
        if (self.backend.kind == "fakeredis" and self.binding.accepts("redis_url")
                and not self.binding.accepts("redis")):
            raise ContractError(f"--store {settings.store_spec!r} connects by redis_url, which "
                                "fakeredis cannot serve: use --redis server or a redis:// URL")
        self.capabilities = detect(self.binding)
        summary.capabilities = sorted(c.value for c in self.capabilities)

    def _probe(self, binding: StoreBinding) -> Any:
        """A store built only to look at its methods (factories that are not classes)."""
        self.binding = binding
        return ScenarioContext(self, "probe").store().instance

    def abort(self, status: str, exit_code: int, message: str) -> None:
        """Stop before any scenario: nothing is collected, the exit status says why, and the reports
        are written (junit.xml last, in pytest_unconfigure, over pytest's empty one)."""
        self.aborted = True
        self.binding = None
        self.summary.status, self.summary.exit_code, self.summary.message = status, exit_code, message

    def write_summaries(self) -> None:
        self.summary.report_files.update(summary_md=str(self.report_dir / "summary.md"),
                                         summary_json=str(self.report_dir / "summary.json"))
        write_summaries(self.summary, self.report_dir)

    # -- results (the run is registered as a plugin for this hook) ---------------------------
    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.collection_errors.append(f"{report.nodeid}: {report.longreprtext}")

    def note_keys_without_ttl(self, nodeid: str, keys: list[str]) -> None:
        room = MAX_KEYS_WITHOUT_TTL - len(self.summary.keys_without_ttl)
        self.summary.keys_without_ttl.extend(f"{k} ({nodeid})" for k in keys[:max(room, 0)])

    def record(self, item: pytest.Item, report: pytest.TestReport, excinfo: Any) -> None:
        info: ScenarioResult = item.stash[RESULT_KEY]
        if report.when == "call" or info.nodeid not in self.results:
            outcome = ("skipped" if report.skipped else "passed" if report.passed
                       else "failed" if report.when == "call" else "error")
        else:  # a teardown error after the call
            outcome = "error" if report.failed else self.results[info.nodeid].outcome
        if report.passed and report.when != "call":
            return
        message, details = describe_outcome(report, excinfo, self.settings.scenario_timeout)
        info.outcome, info.message, info.details = outcome, message, details
        info.duration_s = round(info.duration_s + report.duration, 4)
        self.results[info.nodeid] = info

    def finish(self, session: pytest.Session, exitstatus: int) -> None:
        """Judge the run (unless it stopped before any scenario), write the summaries, set the exit status."""
        summary = self.summary
        if not self.aborted:
            self._judge(exitstatus)
        summary.duration_s = round(time.monotonic() - self.started, 3)
        summary.report_files = {"junit": str(self.report_dir / "junit.xml")}
        if getattr(self.config.option, "htmlpath", None):
            summary.report_files["html"] = str(Path(self.config.option.htmlpath).resolve())
        self.write_summaries()
        session.exitstatus = summary.exit_code

    def _judge(self, exitstatus: int) -> None:
        summary = self.summary
        summary.results = list(self.results.values())
        summary.conformance_level = conformance_level(
            self.capabilities,
            [(frozenset(Capability(c) for c in r.requires), r.outcome) for r in summary.results
             if r.outcome != "skipped"])
        if self.collection_errors:
            summary.status, summary.exit_code = "suite error", EXIT_USAGE
            summary.message = ("the suite's own files could not be loaded (a broken installation?):\n"
                               + "\n".join(self.collection_errors)[-3000:])
        elif exitstatus == pytest.ExitCode.INTERRUPTED:
            summary.status, summary.exit_code = "interrupted", EXIT_INTERRUPTED
            summary.message = "the run was interrupted; the results below are partial"
        elif exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
            summary.status, summary.exit_code = "usage error", EXIT_USAGE
            summary.message = "no scenario was selected: check the -k expression"
        elif exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
            failed = bool(summary.failures())
            summary.status = "failed" if failed else "passed"
            summary.exit_code = EXIT_FAILED if failed else EXIT_PASSED
        else:
            summary.status, summary.exit_code = "usage error", EXIT_USAGE
            summary.message = f"pytest stopped with exit status {int(exitstatus)}"


def definition_line(factory: Any) -> int | None:
    """The line where the store is defined, for annotations that point at it."""
    try:
        return inspect.getsourcelines(factory)[1]
    except (OSError, TypeError):
        return None


RUN_KEY = pytest.StashKey[SuiteRun]()
RESULT_KEY = pytest.StashKey[ScenarioResult]()


def describe_outcome(report: pytest.TestReport, excinfo: Any, timeout: float) -> tuple[str, str]:
    """One line saying what happened, and the details worth reading (expected against actual)."""
    if report.skipped:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        return reason.removeprefix("Skipped: "), ""
    if report.passed or excinfo is None:
        return "", ""
    exc = excinfo.value
    steps = "\n".join(getattr(exc, "__notes__", []))  # Hypothesis lists the steps of a failing sequence here
    if isinstance(exc, HistoryMismatch):
        return exc.diagnosis, "\n".join(filter(None, [str(exc).partition("\n")[2], steps]))
    if isinstance(exc, pytest.fail.Exception) and str(exc).startswith("Timeout"):
        return (f"the store did not return within {timeout:g} s: cut off by the scenario timeout "
                "(a hang, or a blocking call without a timeout)", report.longreprtext[-3000:])
    if isinstance(exc, AssertionError):
        text = str(exc).split("\nassert ")[0]
        first, _, rest = text.partition("\n")
        return first, rest
    origin = "the store raised" if report.when == "call" else f"{report.when} failed:"
    short = "".join(traceback.format_exception_only(type(exc), exc)).strip().splitlines()[-1]
    return f"{origin} {short}", report.longreprtext[-3000:]


# -- pytest hooks --------------------------------------------------------------------------------

def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("memory-regression", "LLM memory regression suite")
    for option in OPTIONS:
        if option.is_switch:
            group.addoption(option.flag, dest=option.dest, action="store_true", default=False,
                            help=option.help)
        else:
            group.addoption(option.flag, dest=option.dest, default=option.default,
                            metavar=option.metavar, help=option.help)


def active_run(config: pytest.Config) -> SuiteRun | None:
    """The run, if this pytest session runs the suite: the plugin is inert without --store."""
    return config.stash.get(RUN_KEY, None)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "requires(*capabilities): capabilities the scenario needs")
    if option_value(config, "--store") is None:
        return
    directory = report_dir(config)
    if not config.option.xmlpath:
        config.option.xmlpath = str(directory / "junit.xml")
    if hasattr(config.option, "htmlpath") and not config.option.htmlpath:
        config.option.htmlpath = str(directory / "report.html")
        config.option.self_contained_html = True
        config.pluginmanager.register(_HtmlTitle(), "memory-regression-html-title")
    config.stash[RUN_KEY] = run = SuiteRun(config)
    config.pluginmanager.register(run, "memory-regression-run")


def pytest_sessionstart(session: pytest.Session) -> None:
    run = active_run(session.config)
    if run is not None:
        run.start()


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    run = active_run(config)
    return True if run is not None and run.aborted else None


def pytest_report_header(config: pytest.Config) -> list[str]:
    run = active_run(config)
    if run is None or run.binding is None:
        return []
    lines = [f"store: {run.settings.store_spec} [{', '.join(run.summary.capabilities)}]",
             f"redis: {run.backend.description}"]
    if run.backend.warning:
        lines.append(f"WARNING: {run.backend.warning}")
    return lines


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    run = active_run(metafunc.config)
    if run is None:
        return
    settings = run.settings
    if "window" in metafunc.fixturenames:
        metafunc.parametrize("window", settings.window_sizes, ids=[f"N={n}" for n in settings.window_sizes])
    if "profile" in metafunc.fixturenames:
        metafunc.parametrize("profile", settings.profiles, ids=[p.name for p in settings.profiles])


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    run = active_run(config)
    if run is None:
        if any("memory" in getattr(item, "fixturenames", ()) for item in items):
            raise pytest.UsageError("these are memory-regression scenarios: give --store path/to/file.py:NAME "
                                    "(or package.module:NAME)")
        return
    for item in items:
        requires = [str(Capability(c)) for m in item.iter_markers("requires") for c in m.args]
        params = getattr(getattr(item, "callspec", None), "params", {})
        window = params.get("window")
        profile = params.get("profile")
        point = f"N={window}" if window is not None else profile.name if profile is not None else ""
        group = Path(str(item.fspath)).stem.removeprefix("test_").replace("_", "-")
        item.stash[RESULT_KEY] = ScenarioResult(item.nodeid, item.originalname, group, point, requires,
                                                "error")
        item.user_properties += [
            ("scenario", item.originalname), ("group", group),
            ("capability", "+".join(requires) or "core"),
            ("window", "" if window is None else str(window)),
            ("profile", profile.name if profile is not None else ""),
            ("backend", run.backend.description),
        ]
        if item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(run.settings.scenario_timeout))


def pytest_runtest_setup(item: pytest.Item) -> None:
    run = active_run(item.config)
    if run is None or RESULT_KEY not in item.stash:
        return
    missing = [Capability(c) for c in item.stash[RESULT_KEY].requires
               if Capability(c) not in run.capabilities]
    if missing:
        pytest.skip("; ".join(f"store lacks {c.value}: {MISSING_REASON[c]}" for c in missing))


@pytest.fixture
def memory(request: pytest.FixtureRequest) -> Any:
    """The scenario's context: ``memory.store(...)`` builds a store; ``memory.keys()`` lists keys."""
    context = ScenarioContext(request.config.stash[RUN_KEY], request.node.nodeid)
    yield context
    context.close(request.node.nodeid)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Any:
    report = yield
    run = active_run(item.config)
    if run is not None and RESULT_KEY in item.stash:
        run.record(item, report, call.excinfo)
        result = item.stash[RESULT_KEY]
        if report.failed and result.details:
            _attach_html(report, result)
    return report


def _attach_html(report: pytest.TestReport, result: ScenarioResult) -> None:
    try:
        from pytest_html import extras
    except ImportError:
        return
    block = (f"<div class='memory-diagnosis'><p><b>{html.escape(result.message)}</b></p>"
             f"<pre>{html.escape(result.details)}</pre></div>")
    report.extras = [*getattr(report, "extras", []), extras.html(block)]


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    run = active_run(session.config)
    if run is not None and (run.binding is not None or run.aborted):
        run.finish(session, exitstatus)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    run = active_run(terminalreporter.config)
    if run is not None and (run.binding is not None or run.aborted):
        terminalreporter.write_sep("=", "memory regression summary")
        terminalreporter.write_line(render_terminal(run.summary))


def pytest_unconfigure(config: pytest.Config) -> None:
    run = active_run(config)
    if run is None:
        return
    if run.aborted:
        write_error_junit(run.summary, run.report_dir)
    if run.backend is not None:
        run.backend.stop()


class _HtmlTitle:
    """Registered only for a suite run, so other pytest sessions keep pytest-html's own title."""

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_report_title(self, report: Any) -> None:
        report.title = "Memory regression report"


@pytest.hookimpl(optionalhook=True)
def pytest_html_results_summary(prefix: list, summary: list, postfix: list, session: pytest.Session) -> None:
    run = active_run(session.config)
    if run is None:
        return
    data = run.summary
    items = [("Store", data.store), ("Capabilities", ", ".join(data.capabilities)),
             ("Conformance level", data.conformance_level), ("Redis", data.backend)]
    items += [(f"Profile {p['name']}", f"budget {p['max_tokens']} tokens, counter {p['counter']}")
              for p in data.profiles]
    if data.message:
        items.insert(0, ("Status", f"{data.status}: {data.message}"))
    parts = ["<style>.memory-matrix td, .memory-matrix th {padding: 2px 8px; text-align: left}"
             " .memory-matrix .passed {color: #060} .memory-matrix .failed, .memory-matrix .error"
             " {color: #b00; font-weight: bold} .memory-matrix .skipped {color: #888}"
             " .memory-warning {color: #b00}</style>", "<div class='memory-summary'>"]
    if data.backend_warning:
        parts.append(f"<p class='memory-warning'><b>Warning:</b> {html.escape(data.backend_warning)}</p>")
    parts.append("<ul>" + "".join(f"<li><b>{html.escape(k)}:</b> {html.escape(str(v))}</li>"
                                  for k, v in items if v) + "</ul>")
    columns, rows = data.matrix()
    if rows:
        parts.append("<table class='memory-matrix'><tr><th>group</th><th>scenario</th>"
                     + "".join(f"<th>{html.escape(c)}</th>" for c in columns) + "</tr>")
        for group, scenario, cells in rows:
            parts.append(f"<tr><td>{html.escape(group)}</td><td>{html.escape(scenario)}</td>"
                         + "".join(f"<td class='{cells.get(c, 'none')}'>{cells.get(c, '')}</td>"
                                   for c in columns) + "</tr>")
        parts.append("</table>")
    prefix.extend([*parts, "</div>"])
