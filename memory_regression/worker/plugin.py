"""The process that runs the user's store: a pytest-xdist worker, or the runner itself with ``-n 0``.

:class:`ScenarioWorker` is the pytest plugin there. It imports and binds the store (telling the
runner what it found, or why it could not), parametrizes the scenarios over window sizes and model
profiles, skips those whose capability the store lacks, gives each scenario a
:class:`ScenarioContext` (fixture ``scenario_context``, which the scenario's own fixtures of
:mod:`.fixtures` are built on) on a clean database, and turns each outcome into a
verdict in store terms. Everything it puts in a report is redacted and capped, so a store's text
can neither leak a password nor blow up the reports.
"""

from __future__ import annotations

import faulthandler
import inspect
import os
import signal
import traceback
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import redis

from ..harness import fixtures
from ..engines.backend import Connection, Endpoint
from ..harness.context import ScenarioContext, ScenarioSetup
from ..harness.scenario_stores import Stores
from ..contract.capabilities import Capability, UnknownCapability, detect, lookup, lookup_guarantee, skip_reason
from ..contract.binding import StoreBinding
from ..errors import UsageError
from ..contract.frames import without_harness_frames
from ..contract.profiles import TokenCounter
from ..redaction import Redactor, map_strings, sendable
from ..groups import scenario_group
from ..harness.command_evidence import listing
from .outcomes import describe_outcome, module_command, redacted, server_misfit, unrendered_report
from ..contract.connection_choice import choose
from .observe import PROBE_WAIT_SHARE, Observed, observe_within, probe_hung, unfilled_text
from ..contract.proposals import fixes_of
from ..reports.phase_report import GuaranteeWarning, PhaseReport, Verdict, attach
from ..reports.results import CAPTURE_LIMIT, DETAILS_LIMIT, LISTED_NOT_RUN, MESSAGE_LIMIT, Status, cap
from ..settings import Settings
from ..channel.call_page import CallPage, call_page_path
from ..harness.writers import bind, counter_for
from ..channel.messages import (Abort, Bound, End, Hello, ScenarioInfo, Start, StoreDescription,
                                scenario_from_nodeid)


KEYS_WITHOUT_TTL_KEY = pytest.StashKey[list]()
FINDINGS_KEY = pytest.StashKey[list]()
WARNINGS_KEY = pytest.StashKey[list]()   # Findings.warn's records
UNJUDGED_KEY = pytest.StashKey[list]()   # Findings.not_judged's guarantees
MEASUREMENTS_KEY = pytest.StashKey[list]()   # Findings.measure's records
OWN_SERVERS_KEY = pytest.StashKey[list]()   # the scenario's own servers (fixture own_server)
STORES_KEY = pytest.StashKey[list]()   # the store instances the scenario built, whose clients a diagnosis may name
COMMANDS_KEY = pytest.StashKey[Any]()   # what the stores sent (a .store_commands.CommandLog), None: not logged
FINDINGS_PER_SCENARIO = 20


class ScenarioWorker:
    """The plugin in the process that runs the scenarios."""

    def __init__(self, settings: Settings, endpoints: list[tuple[str, dict[str, str]]], channel: Any,
                 redactor: Redactor, scratch: Path, dump_path: Path | None = None, listing: bool = False):
        from hypothesis.configuration import set_hypothesis_home_dir
        set_hypothesis_home_dir(scratch / "hypothesis")   # not .hypothesis/ in the user's directory
        self.settings = settings
        self.scratch = scratch         # the run's scratch directory, which the runner removes at the end
        self.dump_path = dump_path     # None when the scenarios run in the runner itself
        self.listing = listing         # --list: every scenario is skipped, saying whether it would run
        # the run's engines, in order: (name, its database); one engine is named ""
        self.endpoints = {name: Endpoint(**endpoint) for name, endpoint in endpoints}
        self.engine_names = list(self.endpoints)
        self.channel = channel
        self.redactor = redactor
        self.connections: dict[str, Connection] = {}
        self.binding: StoreBinding | None = None
        self.capabilities: frozenset[Capability] = frozenset()
        self.counters: dict[str, TokenCounter] = {}
        self.roomy_counter: TokenCounter | None = None   # the cheap one of scenarios not about tokens
        self.scenarios: dict[str, ScenarioInfo] = {}   # nodeid -> what it is (scenario_info)
        self.aborted = False
        self.hung_closes = 0   # closes of the stores built to bind the store that hung (ScenarioContext.close)
        self.elsewhere: str | None = None   # why the store's history is not on the server under test (.observe)
        self._dump: Any = None         # the file faulthandler writes to, kept open
        # the store call in progress, for the runner to cut off past the call timeout (in the runner
        # itself, -n 0, nothing is cut off)
        self.calls = CallPage(call_page_path(scratch, channel.worker, os.getpid()) if dump_path else None)
        self.channel.send(Hello(os.getpid()))

    def pytest_configure(self, config: pytest.Config) -> None:
        config.pluginmanager.register(fixtures, "memory-regression-fixtures")   # the scenarios' own

    # -- binding the store ----------------------------------------------------------------------
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        if self.dump_path is not None:
            # after pytest's own faulthandler plugin, which points it at stderr: the stack of a crash,
            # or of a hang when the runner asks (SIGUSR1) before cutting it off, goes to the runner
            self._dump = open(self.dump_path, "w", encoding="utf-8")  # noqa: SIM115 (kept open)
            faulthandler.enable(file=self._dump, all_threads=True)
            faulthandler.register(signal.SIGUSR1, file=self._dump, all_threads=True)
        if session.config.option.collectonly:
            return
        try:
            self.channel.send(Bound(self._bind()))
        except UsageError as exc:
            self.abort(Status.USAGE_ERROR, str(exc), getattr(exc, "fixes", None) or fixes_of([exc]))
        except (redis.RedisError, OSError) as exc:
            self.abort(Status.REDIS_ERROR, f"Redis went away while the store was being built: {exc}")
        except Exception:   # the suite's own fault: say so rather than crash the worker
            self.abort(Status.SUITE_ERROR, f"binding the store failed inside the suite:\n{traceback.format_exc()}")

    def _bind(self) -> dict[str, Any]:
        settings = self.settings
        self.connections = {name: Connection(endpoint) for name, endpoint in self.endpoints.items()}
        self.roomy_counter = counter_for(settings, None)
        self.counters = {p.name: counter_for(settings, p) for p in settings.profiles}
        self.binding = bind(settings, self._probe)
        self.binding, connection = choose(self.binding, self._probe)
        if (any(e.traits.in_process for e in self.endpoints.values()) and self.binding.accepts("redis_url")
                and not self.binding.accepts("redis")):
            raise UsageError(f"--store {settings.store_spec!r} connects by redis_url, which fakeredis "
                             "cannot serve: use --redis server or a redis:// URL")
        self.capabilities = detect(self.binding)
        source = self.binding.source_file
        return StoreDescription(
            file=str(source) if source else None, line=definition_line(self.binding.factory),
            capabilities=sorted(c.value for c in self.capabilities), shape=self.binding.shape,
            counters={name: counter.description for name, counter in self.counters.items()},
            unfilled=unfilled_text(self.binding),
            observations=[text for text in [connection] if text] + self._observe(),
            proposals=[str(proposal) for proposal in self.binding.proposals], fixes=fixes_of(self.binding.proposals))

    def _observe(self) -> list[str]:
        """What the store does with what the suite gives it (:mod:`.observe`), and whether its history
        reaches the server under test (:attr:`elsewhere`); a UsageError when it cannot be judged as bound."""
        observed = Observed()
        if not self.hung_closes:   # a store whose close hung would hang the probe too: the scenarios judge it
            context, seconds = ScenarioContext(self.setup(), "observe"), self.settings.call_timeout * PROBE_WAIT_SHARE
            found: Observed | None = Observed()
            try:
                found = observe_within(context, self.binding, seconds)
            finally:
                if found is not None:   # a probe still in the store keeps its instance: not closed under it
                    context.close(binding=True)
                    self.hung_closes += context.hung_closes
            if found is None:
                self.calls.clear()   # the probe's call, left running, is no scenario's to cut off
            observed = found if found is not None else Observed([probe_hung(seconds)])
        self.elsewhere = observed.elsewhere
        hung = (f"the store's close did not return within {self.settings.call_timeout:g} s (--call-timeout) while "
                "the suite bound it, and was left running: calls that wait behind it are cut off in the scenarios")
        return observed.texts + ([hung] if self.hung_closes else [])

    def _probe(self, binding: StoreBinding) -> Any:
        """A store built only to look at its methods (factories that are not classes)."""
        self.binding = binding
        context = ScenarioContext(self.setup(), "probe")
        try:
            return Stores(context).new().instance_for("probe")
        except Exception as exc:
            misfit = server_misfit(exc)
            if misfit:
                raise UsageError(misfit) from None
            raise
        finally:
            context.close(binding=True)
            self.hung_closes += context.hung_closes

    def setup(self) -> ScenarioSetup:
        """What a scenario starting now is set up from (the harness is given this, never the worker)."""
        return ScenarioSetup(self.settings, self.binding, self.capabilities, self.connections, self.counters,
                             self.roomy_counter, self.scratch, self.calls, self.elsewhere)

    def abort(self, status: Status, message: str, fixes: dict[str, str] | None = None) -> None:
        """This worker cannot run the store: the runner stops the run with ``status``."""
        self.aborted = True
        self.channel.send(Abort(status.value, self.redactor.text(message),
                                {key: self.redactor.text(value) for key, value in (fixes or {}).items()}))

    # -- collection -------------------------------------------------------------------------------
    def pytest_ignore_collect(self, collection_path: Path) -> bool | None:
        """Nothing more once the run was aborted; of the suite's files, only the chosen groups'."""
        if self.aborted:
            return True
        if collection_path.suffix == ".py" and collection_path.name.startswith("test_"):
            return scenario_group(collection_path.name) not in self.settings.groups or None
        return None

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        sizes, profiles = self.settings.window_sizes, self.settings.profiles
        if "window" in metafunc.fixturenames and (Capability.COUNT_WINDOW in self.capabilities
                                                  or any(metafunc.definition.iter_markers("requires"))):
            metafunc.parametrize("window", sizes, ids=[f"N={n}" for n in sizes])
        if "profile" in metafunc.fixturenames:
            metafunc.parametrize("profile", profiles, ids=[p.name for p in profiles])
        if len(self.engine_names) > 1:   # last, so that every id ends in its engine: test_x[N=5-fakeredis]
            metafunc.parametrize("memory_engine", self.engine_names, ids=self.engine_names)

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        # stable: the rest keep their order
        items.sort(key=lambda item: item.get_closest_marker("starts_first") is None)
        try:
            self.scenarios = {item.nodeid: scenario_info(item) for item in items}
        except UnknownCapability as exc:
            items.clear()
            self.abort(Status.SUITE_ERROR, str(exc))

    # -- running ---------------------------------------------------------------------------------
    def pytest_runtest_logstart(self, nodeid: str) -> None:
        self.channel.send(Start(nodeid, self.scenarios.get(nodeid) or scenario_from_nodeid(nodeid)))

    def pytest_runtest_logfinish(self, nodeid: str) -> None:
        self.channel.send(End(nodeid))

    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        missing = [Capability(c) for c in self.scenarios[item.nodeid].requires
                   if Capability(c) not in self.capabilities]
        if missing:
            pytest.skip(skip_reason(missing))
        real_server = item.get_closest_marker("real_server")
        engine = getattr(item, "callspec", None) and item.callspec.params.get("memory_engine")
        engine = engine or self.engine_names[0]
        if real_server and self.endpoints[engine].traits.in_process:
            pytest.skip(f"needs a real Redis server ({real_server.args[0]}), which fakeredis does not follow: "
                        "run with --redis server or a redis:// URL")
        if self.listing:
            pytest.skip(LISTED_NOT_RUN)

    @pytest.fixture
    def window(self) -> None:
        """The window of a core scenario that takes one (the stateful scenario), on a store without a
        count window: None, and the scenario runs once, unwindowed. Every other scenario that takes a
        window runs per window size (skipped where its capability is missing)."""
        return None

    @pytest.fixture(autouse=True)
    def memory_engine(self) -> str:
        """The engine a scenario runs on: with several (--redis server,fakeredis), every scenario is
        parametrized by it; with one, it is that one, named ""."""
        return ""

    @pytest.fixture
    def scenario_context(self, request: pytest.FixtureRequest, memory_engine: str) -> Any:
        """What the scenario's fixtures (:mod:`.fixtures`) share, closed when it ends."""
        context = ScenarioContext(self.setup(), request.node.nodeid, memory_engine)
        context.log_commands()
        request.node.stash[COMMANDS_KEY] = context.commands
        request.node.stash[FINDINGS_KEY] = context.findings.notes   # kept even if closing fails
        request.node.stash[WARNINGS_KEY] = context.findings.warnings
        request.node.stash[UNJUDGED_KEY] = context.findings.unjudged
        request.node.stash[MEASUREMENTS_KEY] = context.findings.measurements
        request.node.stash[OWN_SERVERS_KEY] = context.servers
        request.node.stash[STORES_KEY] = context.instances
        yield context
        request.node.stash[KEYS_WITHOUT_TTL_KEY] = context.close()

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo) -> Any:
        # --full-trace keeps the harness's frames (the option is not there without pytest's terminal plugin)
        if call.excinfo is not None and not item.config.getoption("fulltrace", False):
            without_harness_frames(call.excinfo.value)
            call.excinfo = pytest.ExceptionInfo.from_exception(call.excinfo.value)
        try:
            report = yield
        except Exception as exc:   # pytest could not render the failure: it stays the scenario's, the rest run
            report = unrendered_report(item, call, exc)
        warnings = item.stash.get(WARNINGS_KEY, [])
        if report.when == "call" and report.passed and warnings and self.settings.strict:
            text = "; ".join(warning["text"] for warning in warnings)
            report.outcome, report.longrepr = "failed", f"{text} (a warning: --strict fails it)"
        missing = module_command(call.excinfo.value) if report.failed and call.excinfo else None
        if missing and item.stash.get(OWN_SERVERS_KEY, None):   # the scenario's own server lacks it
            command, module = missing
            reason = (f"the store ran {command}, a command of the {module} module, which the redis-server the "
                      "suite started for this scenario (from PATH: memory limits, persistence and restarts are "
                      f"server-wide, so the server under test is never changed) lacks: put a server with {module} "
                      "on PATH to run it")
            report.outcome, report.longrepr = "skipped", (str(item.path), item.location[1], f"Skipped: {reason}")
        elif report.failed and call.excinfo and not self.aborted:   # the run stops: every scenario would fail alike
            misfit = server_misfit(call.excinfo.value)
            if misfit:
                self.abort(Status.USAGE_ERROR, misfit)
        verdict = self._verdict(item, call, report) if report.failed or report.skipped else None
        if report.failed:   # pytest's own rendering stays, unless it holds a secret or is too long
            text = report.longreprtext
            safe = cap(self.redactor.text(text), CAPTURE_LIMIT, "this failure's text")
            if safe != text:
                report.longrepr = safe
        report.sections = [(title, cap(self.redactor.text(content), CAPTURE_LIMIT, title.lower()))
                           for title, content in report.sections]
        attach(report, self._phase_report(item, report.when, verdict, warnings))
        return report

    def _verdict(self, item: pytest.Item, call: pytest.CallInfo, report: pytest.TestReport) -> Verdict:
        """A failure's or skip's verdict, with the store's commands listed where they were logged, within
        its bounds and redacted."""
        verdict = describe_outcome(report, call.excinfo, item.stash.get(STORES_KEY, []))
        log = item.stash.get(COMMANDS_KEY, None)
        if report.failed and report.when == "call" and log is not None and not verdict.not_judged:
            verdict = replace(verdict, details="\n\n".join(filter(None, [verdict.details,
                                                                         listing(log, verdict.message)])))
        verdict = replace(verdict, message=cap(verdict.message, MESSAGE_LIMIT, "this message"),
                          details=cap(verdict.details, CAPTURE_LIMIT, "these details"))
        return redacted(verdict, self.redactor)

    def _phase_report(self, item: pytest.Item, when: str, verdict: Verdict | None,
                      warnings: list[dict]) -> PhaseReport:
        """What the phase adds to pytest's report: its verdict, and after teardown what the scenario noted,
        warned, left unjudged and measured, and the keys it left without a TTL, each bounded and redacted."""
        if when != "teardown":
            return PhaseReport(verdict)
        return PhaseReport(
            verdict,
            findings=[cap(self.redactor.text(text), DETAILS_LIMIT, "this finding")
                      for text in item.stash.get(FINDINGS_KEY, [])[:FINDINGS_PER_SCENARIO]],
            warnings=[GuaranteeWarning(warning["guarantee"], cap(self.redactor.text(warning["text"]), DETAILS_LIMIT,
                                                                 "this warning"))
                      for warning in warnings[:FINDINGS_PER_SCENARIO]],
            unjudged=list(item.stash.get(UNJUDGED_KEY, [])),
            measurements=redacted(item.stash.get(MEASUREMENTS_KEY, [])[:FINDINGS_PER_SCENARIO], self.redactor),
            keys_without_ttl=item.stash.get(KEYS_WITHOUT_TTL_KEY, []))

    @pytest.hookimpl(wrapper=True)
    def pytest_report_to_serializable(self, report: Any) -> Any:
        """A report as xdist sends it to the runner, its text made such that UTF-8 can carry it: a
        store's role or exception may hold an unpaired surrogate, which would otherwise stop the
        send, and with it the scenario's place in the verdict."""
        data = yield
        return map_strings(data, sendable)

    def pytest_sessionfinish(self) -> None:
        for connection in self.connections.values():
            connection.close()


def scenario_info(item: pytest.Item) -> ScenarioInfo:
    """What the reports say about a scenario: its name, group, matrix point and capabilities."""
    requires = [lookup(c).value for mark in item.iter_markers("requires") for c in mark.args]
    guarantees = [lookup_guarantee(g).value for mark in item.iter_markers("guarantees") for g in mark.args]
    params = getattr(getattr(item, "callspec", None), "params", {})
    window, profile = params.get("window"), params.get("profile")
    point = f"N={window}" if window is not None else profile.name if profile is not None else ""
    return ScenarioInfo(getattr(item, "originalname", item.name), scenario_group(item.path.as_posix()), point,
                        requires, guarantees, params.get("memory_engine", ""))


def definition_line(factory: Any) -> int | None:
    """The line where the store is defined, for annotations that point at it (a store of another
    language: the line its program gave, :mod:`.foreign`)."""
    if hasattr(factory, "defined_at_line"):
        return factory.defined_at_line
    try:
        return inspect.getsourcelines(factory)[1]
    except (OSError, TypeError):
        return None
