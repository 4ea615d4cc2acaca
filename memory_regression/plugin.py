"""The suite's pytest plugin: the options, and which plugin object a process gets.

It is no global pytest plugin (no ``pytest11`` entry point), so other pytest sessions in the same
environment never see it: ``suite/conftest.py`` loads it for the suite's own files, and
``pytest -p memory_regression.plugin --pyargs memory_regression.suite --store SPEC`` loads it for
the installed suite.

- The runner registers a :class:`~.run.SuiteRun` itself; plain ``pytest --store SPEC`` gets one
  built here from pytest's options.
- A worker process (pytest-xdist) gets a :class:`~.worker.ScenarioWorker`, built from the mapping
  the run hands it.
- Anything else (``pytest`` on the suite without ``--store``) gets a usage error naming the option.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from .reports import files as reports
from .errors import UsageError
from .contract.specs import check_spec
from .groups import suite_directory
from .runner.interrupts import INTERRUPTS
from .redaction import Redactor
from .reports.results import RunSummary, Status
from .runner.run import WORKER_INPUT, SuiteRun
from .options import SUITE_OPTIONS
from .settings import Settings
from .runner.supervisor import WorkerChannel, dump_path
from .worker.plugin import ScenarioWorker
from .harness.writers import prepare_worker_process



def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("memory-regression", "LLM memory regression suite")
    for option in SUITE_OPTIONS:
        if option.is_switch:
            group.addoption(option.plugin_flag, dest=option.dest, action="store_true", default=False, help=option.help)
        else:
            group.addoption(option.plugin_flag, dest=option.dest, default=None, metavar=option.metavar,
                            help=f"{option.help} (default: {option.default})")


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "requires(*capabilities): capabilities the scenario needs")
    config.addinivalue_line("markers", "guarantees(*guarantees): guarantees the scenario checks, whose breach "
                                       "is a warning (findings.warn), not a failure")
    config.addinivalue_line("markers", "real_server(why): the scenario needs what only a real Redis server does "
                                       "(why says what); on fakeredis it is skipped with that reason")
    config.addinivalue_line("markers", "starts_first: the scenario mostly waits (for a TTL to pass) or runs "
                                       "long; it is scheduled first, so that the others fill that time")
    worker_input = getattr(config, "workerinput", {}).get(WORKER_INPUT)
    if worker_input is not None:
        config.pluginmanager.register(worker_from_input(config.workerinput["workerid"], worker_input),
                                      "memory-regression-worker")
    elif config.getoption(SUITE_OPTIONS[0].dest) is not None and not any(
            isinstance(p, SuiteRun) for p in config.pluginmanager.get_plugins()):
        config.pluginmanager.register(run_from_options(config), "memory-regression-run")


def worker_from_input(worker: str, given: dict) -> ScenarioWorker:
    prepare_worker_process()
    # a process group of its own, which what the store forks inherits: the runner kills what is left in it
    # as one when the worker has ended (leftovers.end_leftovers), a chain of forks included
    os.setpgid(0, 0)
    scratch = Path(given["scratch"])
    settings = Settings.from_mapping(given["settings"], Path(given["workdir"]))
    return ScenarioWorker(settings, given["endpoints"], WorkerChannel(given["channel"], worker),
                          Redactor(given["secrets"]), scratch, dump_path=dump_path(scratch, worker),
                          listing=given["listing"])


def run_from_options(config: pytest.Config) -> SuiteRun:
    """Plain pytest: the run from pytest's options. Bad options still leave the error reports."""
    values = {option.key: config.getoption(option.dest) for option in SUITE_OPTIONS}
    workdir = Path(config.invocation_params.dir)
    try:
        settings = Settings.from_mapping(values, workdir)
        check_spec(settings.store_spec, workdir)
    except UsageError as exc:
        paths = reports.ReportPaths(workdir / (values["report_dir"] or "memory-reports"))
        reports.write_all(RunSummary(Status.USAGE_ERROR, str(exc), store=values["store"]), paths, Redactor())
        raise pytest.UsageError(str(exc)) from None
    INTERRUPTS.install()
    return SuiteRun(settings)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The suite's scenarios collected without a run (no --store) cannot run: say so."""
    if any(isinstance(p, (SuiteRun, ScenarioWorker)) for p in config.pluginmanager.get_plugins()):
        return
    suite = suite_directory()
    if any(suite in Path(str(item.path)).resolve().parents for item in items):
        raise pytest.UsageError("these are memory-regression scenarios: give --store path/to/file.py:NAME "
                                "(or package.module:NAME)")
