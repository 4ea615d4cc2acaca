"""The fixtures a scenario asks for, one concern each; its signature says what it uses.

Each is a part over the scenario's :class:`~.context.ScenarioContext` (the worker's fixture
``scenario_context``), which closes what they made when the scenario ends:

- ``stores``: builds store instances, and says what the run gives them (:mod:`.scenario_stores`);
- ``keyspace``: the keys on the scenario's database and their TTLs; ``connections``: the stores'
  connections, killed (:mod:`.server_view`);
- ``races``: writers and readers racing on one session, in threads, tasks or processes (:mod:`.races`);
- ``own_server``: a redis-server of the scenario's own (:mod:`.scenario_server`);
- ``until_consistent``: polls a store until its backends agree (:mod:`.polling`);
- ``append_within``: appends within a time budget, timing them (:mod:`.growth`);
- ``findings``: notes, warnings and figures for the reports (:mod:`.findings`);
- ``store_commands``: the commands the stores sent, where the suite logs them, else None
  (:mod:`.store_commands`), for diagnoses that name a mechanism (:mod:`.command_evidence`).
"""

from __future__ import annotations

import functools
from typing import Any

import pytest

from . import growth, polling
from .context import ScenarioContext
from .findings import Findings
from .races import Races
from .scenario_stores import Stores
from .server_view import Connections, Keyspace
from .store_commands import CommandLog


@pytest.fixture
def stores(scenario_context: ScenarioContext) -> Stores:
    return Stores(scenario_context)


@pytest.fixture
def keyspace(scenario_context: ScenarioContext) -> Keyspace:
    return Keyspace(scenario_context)


@pytest.fixture
def connections(scenario_context: ScenarioContext) -> Connections:
    return Connections(scenario_context)


@pytest.fixture
def races(scenario_context: ScenarioContext) -> Races:
    return Races(scenario_context)


@pytest.fixture
def own_server(scenario_context: ScenarioContext) -> Any:
    """``own_server(config)``: :meth:`.context.ScenarioContext.own_server`."""
    return scenario_context.own_server


@pytest.fixture
def until_consistent(scenario_context: ScenarioContext) -> Any:
    """``until_consistent(store, sessions)``: :func:`.polling.until_consistent`."""
    return functools.partial(polling.until_consistent, scenario_context)


@pytest.fixture
def append_within(scenario_context: ScenarioContext) -> Any:
    """``append_within(store, session_id, messages, budget_s)``: :func:`.growth.append_within`."""
    return functools.partial(growth.append_within, scenario_context)


@pytest.fixture
def findings(scenario_context: ScenarioContext) -> Findings:
    return scenario_context.findings


@pytest.fixture
def store_commands(scenario_context: ScenarioContext) -> CommandLog | None:
    return scenario_context.commands
