"""The stores a scenario builds (fixture ``stores``): afresh from the user's factory, with the
parameters of the scenario's subject, and the run's settings that say what those are."""

from __future__ import annotations

import inspect
from typing import Any, Callable

import pytest

from ..contract.adapter import StoreAdapter
from ..engines.backend import KINDS, Connection, Endpoint
from ..contract.capabilities import Capability
from .context import ScenarioContext
from ..contract.profiles import ModelProfile, TokenCounter
from ..reference.model import summarize
from ..settings import DEFAULT_TENANT, ROOMY_TTL_S, WINDOWLESS
from .writers import StoreRecipe

# why a synchronous store on a cluster gets no client of another address (a server that is down)
CLUSTER_CLIENT_CONNECTS = ("on a Redis Cluster, redis-py's synchronous RedisCluster client asks a node for the "
                           "slot map when it is built and raises there, so a store cannot be handed a client of "
                           "a cluster that is down: run this scenario with --redis server")


class Stores:
    """Builds store instances for one scenario, on its database, and says what the run gives them:
    window sizes and policy, model profiles, capabilities."""

    def __init__(self, context: ScenarioContext):
        self._context = context
        settings = context.settings
        self.namespace = context.namespace
        self.window_sizes: tuple[int, ...] = settings.window_sizes
        self.window_policy = settings.window_policy
        self.profile: ModelProfile = settings.profiles[0]
        self.profiles: tuple[ModelProfile, ...] = settings.profiles
        self.latency_budget_ms: dict[str, float] = settings.latency_budget_ms   # --latency-budget-ms
        self.run_awaitable = context.run_awaitable

    @property
    def url(self) -> str:
        """The scenario database's URL, as stores are given it."""
        return self._context.connection.url

    @property
    def cluster(self) -> bool:
        """Whether the scenario runs on a Redis Cluster (stores get RedisCluster clients)."""
        return self._context.connection.endpoint.traits.cluster

    @property
    def summary_in_window(self) -> bool:
        """Whether the store's compaction summary counts toward its window (its class attribute
        ``summary_in_window``, True when it has none)."""
        return self._context.binding.summary_in_window

    def has(self, capability: Capability) -> bool:
        return capability in self._context.capabilities

    def counter(self, profile: ModelProfile | None) -> TokenCounter:
        """What one message costs under ``profile``, as the store is told to count."""
        return self._context.counter(profile)

    def new(self, *, max_messages: int = WINDOWLESS, profile: ModelProfile | None = None,
            ttl: int = ROOMY_TTL_S, summarize: Callable[[list], str] = summarize,
            user_id: str | None = DEFAULT_TENANT) -> StoreAdapter:
        """A new store instance. Arguments not about the scenario's subject are roomy and cheap: a
        window of a million messages, an unbounded token budget counted with ``approx`` (the
        profile's own counter only where ``profile`` is given), a TTL of an hour, the suite's
        summariser (:func:`.reference.summarize`) and one tenant (``user_id`` None: none given, for a
        factory with a default for it, :meth:`takes_no_tenant`)."""
        context = self._context
        recipe = StoreRecipe(context.settings, context.connection.endpoint, context.namespace, max_messages,
                             profile, ttl, context.data_dir, summarize, user_id, context.binding.withheld)
        client = self.raw_client() if context.binding.takes_client else None   # else it builds its own
        counter = self.counter(profile)

        def build(session_id: str | None) -> Any:
            instance = recipe.build(context.binding, client, counter, session_id)
            context.instances.append(instance)
            return instance
        store = StoreAdapter(context.binding, build, context.run_awaitable, watch=context.watch, user_id=user_id)
        context.recipes[store] = recipe
        return store

    def takes_no_tenant(self) -> bool:
        """Whether the factory has a default for its tenant parameter (``user_id``), so that a store may
        be built without one."""
        try:
            parameters = inspect.signature(self._context.binding.factory).parameters
        except (TypeError, ValueError):
            return False
        own = self._context.binding.parameters.get("user_id", ())
        return bool(own) and all(parameters[name].default is not inspect.Parameter.empty
                                 for name in own if name in parameters)

    def new_on(self, url: str, **options: Any) -> StoreAdapter:
        """A store built as :meth:`new` builds it (``options`` are its arguments), whose client and
        ``redis_url`` reach ``url`` instead of the scenario's database. On a cluster, ``url`` is a
        cluster's: the scenario's own server's (a cluster of one node there), or one a synchronous
        store that takes the suite's client skips the scenario for (see CLUSTER_CLIENT_CONNECTS); a
        store that builds its own client from ``redis_url`` is built there as it would be."""
        context = self._context
        context.on_server()
        scenario_database, kind = context.connection, context.connection.endpoint.kind
        own = any(url == server.url for server in context.servers)
        binding = context.binding
        if KINDS[kind].cluster and not own and not binding.is_async and binding.takes_client:
            pytest.skip(CLUSTER_CLIENT_CONNECTS)
        context.connection = Connection(Endpoint(kind, url, url))
        try:
            return self.new(**options)
        finally:
            context.connection = scenario_database

    def raw_client(self) -> Any:
        """A new redis-py client on the scenario's database, of the kind the store's is
        (``redis.asyncio`` for an async store, whose calls then go through :meth:`run_awaitable` as
        the store's do; a RedisCluster on a cluster), closed with the scenario: what each store is
        built on, and what the latency scenario measures Redis' own round trips with."""
        context = self._context
        client = context.connection.client(asynchronous=context.binding.is_async)
        context.clients.append(client)
        return client
