""":class:`Settings`, built from a plain mapping of the suite's options (defined in :mod:`.options`).

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
from .groups import parse_groups
from .contract.profiles import ModelProfile, check_counter_name, load_profiles
from .redaction import redact_url
from .reference.model import Rule, SUFFIX_NAME, WindowPolicy
from .reports.figures import LATENCY_OPERATIONS
from .options import MAX_WINDOW, SUITE_OPTIONS, defaults

WINDOWLESS = 1_000_000      # max_messages in scenarios that are not about the count window
ROOMY_TTL_S = 3600          # ttl in scenarios that are not about expiry
DEFAULT_TENANT = "tenant-1"  # user_id in scenarios that are not about tenants
METHOD_ROLES = ("append", "load", "clear")
BUDGET_SHARE = 4            # a scenario's time budget (a wait, a bounded run of appends) is at most this part
                            # of the scenario timeout, which leaves the rest of the scenario room


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
