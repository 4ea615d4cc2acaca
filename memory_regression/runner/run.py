"""One run of the suite: :class:`SuiteRun` is the pytest plugin in the runner's process.

The runner builds it from :class:`~.settings.Settings` and hands it to ``pytest.main(...,
plugins=[run])`` (plain ``pytest --store ...`` builds it in :mod:`.plugin`), then reads
``run.summary``. It owns the Redis server, the supervision of the worker processes that run the
store (pytest-xdist, see :mod:`.supervisor`), the results as they arrive, the verdict, and the
reports. It never imports or calls the user's store itself.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import tempfile
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

import pytest

from ..reports import html_report, renderings, files as reports
from ..errors import BackendError, BackendUsageError
from ..engines.registry import Engines, open_engines
from ..reports.baseline import compare
from ..contract.foreign import close_all as close_programs
from ..contract.capabilities import level_of_results
from .interrupts import INTERRUPTS
from .leftovers import become_subreaper, children, end_leftovers
from ..contract.profiles import profile_fields
from ..redaction import Redactor, map_strings
from ..reports.phase_report import Verdict, add_to_verdict, with_verdict
from ..reports.results import RunSummary, Status
from ..settings import Settings
from ..contract.loader import raised_in
from .nodeids import engine_of, report_order
from .recording import Recorder
from .supervisor import DirectChannel, Supervisor
from .verdict import RunFacts, decide
from ..worker.plugin import ScenarioWorker
from ..channel.messages import ScenarioInfo, scenario_from_nodeid

# three: the expiry scenarios, which start first, mostly sleep (their TTLs pass), and leave a core to a
# third worker (on 2 cores, the count-window example's run: 4.46 s with two, 3.93 s with three, 4.84 s with four)
DEFAULT_WORKERS = 3
WORKER_INPUT = "memory_regression"


class SuiteRun:
    def __init__(self, settings: Settings, listing: bool = False,
                 phrase: Callable[[str], str] = lambda text: text, source_root: Path | None = None,
                 owns_process: bool = False, run_timeout: float | None = None, secrets: list[str] | None = None,
                 baseline: tuple[str, dict, tuple[str, ...]] | None = None):
        self.settings = settings
        self.baseline = baseline    # --baseline: the file as given, the summary it holds, --fail-on-regression's names
        self.secrets = list(secrets or [])   # redacted besides the servers' passwords (the CI tokens, .credentials)
        # the runner's own process (entrypoint), not a pytest session of the user's (the plugin): only
        # then are its children, past its servers, the store's leftovers (:mod:`.leftovers`)
        self.owns_process = owns_process
        self.run_timeout = run_timeout   # --run-timeout: kept by a timer of the runner's (owns_process only)
        self.deadline: threading.Timer | None = None
        self.deadline_passed = False
        self.source_root = source_root or settings.workdir   # junit.xml's file paths are relative to it
        self.listing = listing      # --list: bind the store, skip every scenario saying why, write no report
        self.phrase = phrase        # how the run's message names options (a GitHub Action: its inputs)
        self.rejected: str | None = None                    # pytest's complaint about its arguments
        self.paths = reports.ReportPaths(settings.report_dir)
        self.summary = RunSummary(store=settings.store_spec, window_sizes=list(settings.window_sizes),
                                  window_policy=str(settings.window_policy), groups=list(settings.groups),
                                  profiles=[profile_fields(p) for p in settings.profiles])
        self.redactor = Redactor(self.secrets)
        self.engines: Engines | None = None
        self.supervisor: Supervisor | None = None
        self.recorder = Recorder(self.summary, self._scenario_info)
        self.collection_errors: list[str] = []
        self.stopped: tuple[Status, str] | None = None     # why the run stopped early, if it did
        self.workers = 0                                    # 0: scenarios run in this process
        self.slots: dict[str, int] = {}                     # worker id -> its database
        self.crashed: set[str] = set()
        self.order: dict[str, int] = {}                     # nodeid -> its place in the collection
        self.started = time.monotonic()
        self.configured = False
        self.pytest_junit: Path | None = None               # where pytest writes junit.xml
        self.judged = False
        self.facts: RunFacts | None = None   # what the verdict was decided on (.verdict.decide), once judged
        self.own_children: set[int] = set()   # the runner's children before the workers: its servers
        self.announced = False    # the store's observations are in the header (_announce_store)
        self.written: tuple[Status, str | None] | None = None   # the verdict the reports were written with
        self.unwritten: list[str] = []   # report files pytest's plugins could not write, each with why
        self.held: tuple[str, str, float] | None = None   # what held the server, the failure it was found at, when

    # -- start -------------------------------------------------------------------------------------
    @pytest.hookimpl(wrapper=True)
    def pytest_cmdline_parse(self) -> Any:
        """pytest's complaint about its arguments is kept for the run's own usage error, instead of
        pytest's usage text naming the suite's pytest.ini."""
        try:
            return (yield)
        except pytest.UsageError as exc:
            text = "\n".join(map(str, exc.args))
            found = re.search(r"error: (.*)", text)
            self.rejected = found.group(1) if found else text.strip()
            raise pytest.UsageError() from None    # pytest prints nothing for it; the runner says why

    @pytest.hookimpl(tryfirst=True)
    def pytest_configure(self, config: pytest.Config) -> None:
        """Before xdist looks at its options: open Redis, choose the workers, name the report files."""
        self.config = config
        self.configured = True
        if not self.listing:
            reports.clear_old_reports(self.paths)
            # pytest writes junit.xml in a directory of the run's own; the reports move it over
            self.pytest_junit = Path(tempfile.mkdtemp(prefix="memory-regression-junit-")) / "junit.xml"
            config.option.xmlpath = str(self.pytest_junit)
            if hasattr(config.option, "htmlpath"):
                config.option.htmlpath = str(self.paths.html)
                config.option.self_contained_html = True
        try:
            self.engines = open_engines(self.settings.redis_choice, self.settings.allow_flush)
        except BackendUsageError as exc:
            self.stop(Status.USAGE_ERROR, str(exc))
        except BackendError as exc:
            self.stop(Status.REDIS_ERROR, str(exc))
        if self.engines is not None:
            self.redactor = Redactor([*self.engines.secrets, *self.secrets])
            self.summary.backend = self.engines.description
            self.summary.backend_warning = self.engines.warning
            if len(self.engines) > 1:
                self.summary.engines = [{"name": e.name, "title": e.title, "description": e.backend.description}
                                        for e in self.engines]
        # before any worker starts: the orphans of the store's processes become this process's
        # children, and the children it has now (the servers it started) are the only ones it keeps
        if self.owns_process:
            become_subreaper()
            self.own_children = set(children())
            if self.run_timeout:
                self.deadline = threading.Timer(self.run_timeout, self._cut_off)
                self.deadline.daemon = True
                self.deadline.start()
        self.workers = self._worker_count(config)
        option = config.option
        option.numprocesses, option.tx = self.workers, ["popen"] * self.workers
        option.dist = "load" if self.workers else "no"
        # xdist's first chunks are of consecutive scenarios: the longest, which start first (they
        # wait on the clock), would all go to one worker; chunks of one spread them over the workers
        option.maxschedchunk = 1
        if self.workers:
            option.maxworkerrestart = 10_000     # a store that kills every worker still gets every scenario judged
        self.supervisor = Supervisor(self.settings.scenario_timeout, self.settings.call_timeout,
                                     in_process=not self.workers)
        self.supervisor.start()
        config.pluginmanager.register(html_report.HtmlHooks(self.summary), "memory-regression-html")
        config.pluginmanager.register(self.recorder, "memory-regression-recording")
        if not self.workers and self.stopped is None:
            config.pluginmanager.register(
                ScenarioWorker(self.settings, self.engines.endpoints(0), DirectChannel(self.supervisor),
                               self.redactor, self.supervisor.directory, listing=self.listing),
                "memory-regression-worker")

    def _worker_count(self, config: pytest.Config) -> int:
        """Worker processes for the scenarios: 0 runs them here (-n 0, --pdb, --collect-only, a run
        that stopped before it began, or no pytest-xdist)."""
        option = config.option
        if (self.stopped or option.collectonly or getattr(option, "usepdb", False)
                or not config.pluginmanager.has_plugin("xdist")):
            return 0
        wanted = option.numprocesses if isinstance(option.numprocesses, int) else DEFAULT_WORKERS
        if self.listing:
            wanted = min(wanted, 1)    # listing binds the store once
        return max(0, min(wanted, self.engines.max_workers))

    def pytest_configure_node(self, node: Any) -> None:
        """What a worker needs: the settings as a mapping, its own database, and the channel."""
        slot = min(set(range(self.workers)) - set(self.slots.values()))
        self.slots[node.gateway.id] = slot
        node.workerinput[WORKER_INPUT] = {
            "settings": self.settings.values, "workdir": str(self.settings.workdir),
            # the servers' passwords, which the store is given anyway; the CI tokens stay in the runner
            "endpoints": self.engines.endpoints(slot), "secrets": list(self.engines.secrets),
            "listing": self.listing,
            **self.supervisor.worker_input(),
        }

    def _cut_off(self) -> None:
        """The run's deadline passed (in the timer's thread): stop it as an interrupt would, in the
        main thread, so the workers are killed and the reports written; the verdict says why."""
        if not self.judged:
            self.deadline_passed = True
            os.kill(os.getpid(), signal.SIGTERM)

    def pytest_report_header(self) -> list[str]:
        lines = [f"store: {self.settings.store_spec}"]
        if self.engines is not None:
            lines.append(f"redis: {self.engines.description}")
            if self.engines.warning:
                lines.append(f"WARNING: {self.engines.warning}")
        lines.append(f"workers: {self.workers or 'none (the store runs in this process)'}")
        return lines

    def pytest_ignore_collect(self) -> bool | None:
        return True if self.stopped else None

    def stop(self, status: Status, message: str) -> None:
        """Stop before judging the store: the exit status says why, and the reports are written."""
        if self.stopped is None:
            self.stopped = (status, self.redactor.text(message))

    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Any:
        """The session's loop is where the runner waits on the workers: the one place, past pytest's
        start-up, where Ctrl-C may raise at once (see :mod:`.interrupts`)."""
        with INTERRUPTS.raising():
            return (yield)

    # -- workers coming and going ------------------------------------------------------------------
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        self.slots.pop(node.gateway.id, None)
        if error is None or self.supervisor is None:
            return
        death = self.supervisor.death(node.gateway.id)
        if death.phase == "starting":   # nothing to blame on a scenario: the store cannot be run
            self.stop(Status.USAGE_ERROR, f"--store {self.settings.store_spec!r}: "
                                          f"{death.describe()}"
                                          + (f"\n{death.where}" if death.where else ""))
            pytest.exit(self.stopped[1], returncode=int(Status.USAGE_ERROR.exit_code))

    @pytest.hookimpl(optionalhook=True)
    def pytest_handlecrashitem(self, crashitem: str, report: pytest.TestReport, sched: Any) -> None:
        """A worker died in a scenario: say how, in store terms, as that scenario's failure."""
        death = self.supervisor.death(report.node.gateway.id)
        message = self.redactor.text(death.describe())
        details = self.redactor.text(f"where the store was:\n{death.where}") if death.where else ""
        report.when, report.duration, report.start = "call", death.ran_s, time.time() - death.ran_s
        with_verdict(report, Verdict(message, details))
        self.crashed.add(crashitem)

    # -- results -----------------------------------------------------------------------------------
    @pytest.hookimpl(tryfirst=True)
    def pytest_report_from_serializable(self, data: dict[str, Any]) -> None:
        """A worker's report, redacted again here, before anything reads it: the workers redact
        the servers' passwords, but never see the CI tokens (:mod:`.credentials`)."""
        if self.secrets:
            for key, value in list(data.items()):
                data[key] = map_strings(value, self.redactor.text)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        self.order = self.order or report_order(ids)
        self._announce_store()

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.order = self.order or report_order([item.nodeid for item in session.items])
        self._announce_store()

    def _announce_store(self) -> None:
        """The header's last lines, once a worker has bound the store (it does before collecting):
        the parameters the suite leaves at their defaults and what was observed of the store, ahead
        of the verdicts they may explain. --list prints them in its listing instead."""
        if self.announced or self.listing or self.supervisor is None:
            return
        self.supervisor.drain()
        bound = self.supervisor.bound
        terminal = self.config.pluginmanager.get_plugin("terminalreporter")
        if bound is None or terminal is None:
            return
        self.announced = True
        for line in renderings.observed_lines(bound.unfilled, bound.observations, bound.proposals):
            terminal.write_line(self.redactor.text(line))

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.collection_errors.append(f"{report.nodeid}: {report.longreprtext}")

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> Any:
        """Record the outcome and dress the report before junit.xml and report.html see it; once
        they have, close the row of a scenario whose worker died (xdist sends no teardown for it,
        and junit.xml and report.html wait for one), and tell a failure caused by Redis going away
        from one caused by the store."""
        if report.failed and self.stopped is None and self.engines is not None:
            self._examine_server(report)
        self.recorder.record(report)
        result = yield
        if report.nodeid in self.crashed:
            self.crashed.discard(report.nodeid)
            teardown = pytest.TestReport(report.nodeid, report.location, report.keywords, "passed", None,
                                         "teardown", user_properties=report.user_properties)
            teardown.node = report.node   # junit.xml keys a test case by its worker too
            self.config.hook.pytest_runtest_logreport(report=teardown)
        if report.failed and self.stopped is None and self.engines is not None:
            self.supervisor.drain()
            if self.supervisor.aborts:   # the store cannot be run here (a Redis module it needs)
                self.stop(Status(self.supervisor.aborts[0].status), self.supervisor.aborts[0].message)
        if self.stopped:
            pytest.exit(self.stopped[1], returncode=int(self.stopped[0].exit_code))
        return result

    def _examine_server(self, report: pytest.TestReport) -> None:
        """A scenario failed: does the server still answer? What held it (a script of the store's
        that would not end, CLIENT PAUSE) is undone where the suite can and goes into this failure's
        verdict, before junit.xml and report.html see it; a server the store made unusable stops the
        run with the store's failure, and one that went away stops it as a Redis error."""
        check = self.engines.check()
        if check.note and check.usable:
            self.held = (check.note, report.nodeid, time.time())
            add_to_verdict(report, check.note)
        elif check.usable and self.held and 0 < report.start < self.held[2]:
            note, nodeid, _found = self.held   # a failure of a scenario that ran while the store held the server
            add_to_verdict(report, f"while it ran, the server was held ({nodeid} failed then): {note}")
        elif not check.usable and check.by_store:
            self.stop(Status.FAILED, f"the store made the Redis server unusable during {report.nodeid}: {check.note}; "
                                     "the scenarios after it did not run")
        elif not check.usable:
            self.stop(Status.REDIS_ERROR, f"Redis went away during {report.nodeid}: {check.note}")

    def _scenario_info(self, nodeid: str) -> ScenarioInfo:
        self.supervisor.drain()
        return self.supervisor.scenarios.get(nodeid) or scenario_from_nodeid(
            nodeid, engine_of(nodeid, [e.name for e in self.engines] if self.engines else []))

    # -- the end -----------------------------------------------------------------------------------
    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> Any:
        """Judge before junitxml and pytest-html write their files (a wrapper's first half runs
        before every plain implementation); a file they cannot write (a full disk) is kept for the
        verdict, not raised as pytest's internal error, and a report.html cut short is removed."""
        INTERRUPTS.hold()
        if self.supervisor is not None:
            if INTERRUPTS.received or self.stopped:
                self.supervisor.kill_all()
            else:
                self.supervisor.finish()
                self._end_workers()
        self.end_leftovers()
        self.judge(session, int(exitstatus))
        session.exitstatus = int(self.summary.exit_code)
        try:
            return (yield)
        except OSError as exc:
            in_html = raised_in(exc, "pytest_html")
            self.unwritten.append(f"{(self.paths.html if in_html else self.paths.junit).name}: {exc.strerror or exc}")
            if not in_html and hasattr(self.config.option, "htmlpath"):   # pytest-html writes after junitxml
                self.unwritten.append(f"{self.paths.html.name}: not written, as junit.xml failed before it")
            self.paths.html.unlink(missing_ok=True)   # cut short
            return None

    def _end_workers(self) -> None:
        """Tell xdist's workers to exit now: xdist would in its own session-finish, after this one's
        first half, and until then they wait (a second, until the supervisor kills them) rather than
        exit. Once they are gone, what they left has reparented here for :meth:`end_leftovers`. Only
        told, not waited for: xdist's own wait lasts while any process holds a worker's pipes open,
        as a grandchild the store forked does until :meth:`end_leftovers` kills it."""
        nodes = getattr(self.config.pluginmanager.get_plugin("dsession"), "nodemanager", None)
        for gateway in list(nodes.group) if nodes is not None else []:
            gateway.exit()

    def end_leftovers(self) -> None:
        """Kill what the store left running once the workers are gone (:mod:`.leftovers`), each a
        finding of the run: at the session's end (for every report), and again once the workers
        that had not ended are killed."""
        if not self.owns_process:
            return
        close_programs()   # the programs of stores of another language this process ran (-n 0): ours, not left over
        workers = self.supervisor.worker_pids() if self.supervisor is not None else set()
        groups = self.supervisor.groups if self.supervisor is not None else set()
        self.summary.leftovers += [self.redactor.text(text) for text in
                                   end_leftovers(self.own_children | workers, ending=workers, groups=groups)]

    def judge(self, session: pytest.Session | None, exitstatus: int) -> None:
        summary = self.summary
        summary.results = sorted(self.recorder.results.values(),
                                 key=lambda r: self.order.get(r.nodeid, len(self.order)))
        bound = self.supervisor.bound if self.supervisor else None
        if bound:
            summary.store_file, summary.store_line = bound.file, bound.line
            summary.capabilities = bound.capabilities
            summary.shape = bound.shape
            summary.unfilled, summary.observations = bound.unfilled, bound.observations
            summary.proposals, summary.fixes = bound.proposals, bound.fixes
            for profile in summary.profiles:
                profile["counter"] = bound.counters.get(profile["name"], profile["counter"])
        elif self.supervisor and self.supervisor.aborts:   # the binding's problems, and what fixes them
            summary.fixes = self.supervisor.aborts[0].fixes
        summary.conformance_level = level_of_results(summary.capabilities, summary.results)
        self.facts = RunFacts(
            summary, exitstatus, collected=session.testscollected if session is not None else 0,
            run_timeout=self.run_timeout if self.deadline_passed else None, stopped=self.stopped,
            interrupted_by=INTERRUPTS.received, collection_errors=tuple(self.collection_errors),
            aborts=tuple(self.supervisor.aborts if self.supervisor else ()))
        decide(summary, self.facts, self.phrase)
        summary.duration_s = round(time.monotonic() - self.started, 3)
        if self.baseline is not None and summary.results:
            given, base, fail_on = self.baseline
            summary.comparison = compare(summary.to_json(), base, given, fail_on).to_json()
        self.judged = True

    def write_reports(self) -> None:
        """Write the reports; when some cannot be written (a full disk), the verdict says which and
        why, with what the run found, and the others are written again to say so."""
        cut = any(entry.startswith(self.paths.junit.name) for entry in self.unwritten)
        junit = None if cut else self.pytest_junit   # pytest's junit.xml, unless its writing failed
        unwritten = self.unwritten + reports.write_all(self.summary, self.paths, self.redactor, self.source_root, junit)
        if unwritten and not self.facts.unwritten:
            self.facts = replace(self.facts, unwritten=tuple(unwritten))
            decide(self.summary, self.facts, self.phrase)
            reports.write_all(self.summary, self.paths, self.redactor, self.source_root, junit)
        self.written = (self.summary.status, self.summary.message)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.listing:
            return    # the runner prints the listing
        terminalreporter.write_sep("=", "memory regression summary")
        terminalreporter.write_line(renderings.render_terminal(self.summary))

    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(self) -> None:
        self.conclude()

    def conclude(self) -> None:
        """Write the summaries (again, if an interrupt arrived since they were judged) and release
        the server and the workers. Safe to call more than once."""
        INTERRUPTS.hold()
        if self.deadline is not None:
            self.deadline.cancel()
        if not self.judged:
            self.judge(None, int(pytest.ExitCode.INTERRUPTED if INTERRUPTS.received else pytest.ExitCode.OK))
        elif INTERRUPTS.received and self.summary.status in (Status.PASSED, Status.FAILED, Status.NOT_RUN):
            self.facts = replace(self.facts, exitstatus=int(pytest.ExitCode.INTERRUPTED), collected=0,
                                 interrupted_by=INTERRUPTS.received)
            decide(self.summary, self.facts, self.phrase)
        if self.supervisor is not None:
            self.supervisor.kill_all()
        self.end_leftovers()
        verdict = (self.summary.status, self.summary.message)
        if not self.listing and verdict != self.written:   # the second call writes only what changed
            self.write_reports()
        if self.pytest_junit is not None:   # placed in the report directory: a second call keeps it
            shutil.rmtree(self.pytest_junit.parent, ignore_errors=True)
        if self.supervisor is not None:
            self.supervisor.stop()
            self.supervisor = None
        if self.engines is not None:
            self.engines.stop()


