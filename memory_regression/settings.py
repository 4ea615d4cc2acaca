"""The suite's options, defined once for the pytest plugin and the runner's help, and their parsing."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .contract import ContractError
from .profiles import DEFAULT_PROFILES, ModelProfile, TokenCounter, load_profiles, resolve_counter


@dataclass(frozen=True)
class Option:
    flag: str
    default: Any
    help: str
    metavar: str | None = None
    is_switch: bool = False

    @property
    def dest(self) -> str:
        return "memory_" + self.flag.lstrip("-").replace("-", "_")


OPTIONS: tuple[Option, ...] = (
    Option("--store", None, "your store: path/to/file.py:NAME or package.module:NAME (a class or factory)",
           "SPEC"),
    Option("--window-sizes", "5,20", "count windows N to test, comma-separated", "N,N"),
    Option("--model-profiles", DEFAULT_PROFILES,
           "built-in profile names, comma-separated, or a YAML file of profiles", "NAMES|FILE"),
    Option("--token-counter", None,
           "count tokens as your store does: chars, words, approx, a tiktoken encoding, or "
           "module:function / file.py:function (the whole per-message cost)", "COUNTER"),
    Option("--redis", "auto", "auto (private server, else fakeredis with a warning), server, "
           "fakeredis, or a redis:// URL", "BACKEND"),
    Option("--allow-flush", False, "let the suite flush a non-empty database of --redis URL",
           is_switch=True),
    Option("--report-dir", "memory-reports", "where junit.xml, report.html, summary.md and "
           "summary.json are written", "DIR"),
    Option("--append-method", None, "name of the store's append method, if not found by name", "NAME"),
    Option("--load-method", None, "name of the store's load method, if not found by name", "NAME"),
    Option("--clear-method", None, "name of the store's clear method, if not found by name", "NAME"),
    Option("--scenario-timeout", 60.0, "seconds before a hanging scenario is cut off", "SECONDS"),
)

WINDOWLESS = 1_000_000      # max_messages in scenarios that are not about the count window
ROOMY_TTL_S = 3600          # ttl in scenarios that are not about expiry


@dataclass
class RunSettings:
    store_spec: str
    window_sizes: list[int]
    profiles: list[ModelProfile]
    counters: dict[str, TokenCounter]      # profile name -> its per-message cost
    redis_choice: str
    allow_flush: bool
    method_overrides: dict[str, str | None]
    scenario_timeout: float
    workdir: Path


def option_value(config: Any, flag: str) -> Any:
    return config.getoption(next(o for o in OPTIONS if o.flag == flag).dest)


def report_dir(config: Any) -> Path:
    return Path(config.invocation_params.dir) / option_value(config, "--report-dir")


def parse_window_sizes(spec: str) -> list[int]:
    """``--window-sizes 5,10,50``: whole numbers of at least 1, no repeats."""
    sizes: list[int] = []
    for part in str(spec).split(","):
        part = part.strip()
        if not part.isdigit() or int(part) < 1:
            raise ContractError(
                f"--window-sizes {spec!r}: {part!r} is not a whole number of at least 1 "
                "(example: --window-sizes 5,10,50)")
        if int(part) in sizes:
            raise ContractError(f"--window-sizes {spec!r}: {part} is given twice")
        sizes.append(int(part))
    return sizes


def resolve_settings(config: Any) -> RunSettings:
    """Read and check every option; raise ContractError with what to fix."""
    workdir = Path(config.invocation_params.dir)
    store = option_value(config, "--store")
    if not store:
        raise ContractError("no store given: pass --store path/to/file.py:NAME or package.module:NAME")
    timeout = option_value(config, "--scenario-timeout")
    try:
        timeout = float(timeout)
    except (TypeError, ValueError):
        timeout = -1.0
    if timeout <= 0:
        raise ContractError(f"--scenario-timeout {option_value(config, '--scenario-timeout')!r}: "
                            "give a number of seconds above 0")
    profiles = load_profiles(option_value(config, "--model-profiles"), workdir)
    counter_override = option_value(config, "--token-counter")
    return RunSettings(
        store_spec=store,
        window_sizes=parse_window_sizes(option_value(config, "--window-sizes")),
        profiles=profiles,
        counters={p.name: resolve_counter(p, counter_override, workdir) for p in profiles},
        redis_choice=option_value(config, "--redis"),
        allow_flush=option_value(config, "--allow-flush"),
        method_overrides={role: option_value(config, f"--{role}-method")
                          for role in ("append", "load", "clear")},
        scenario_timeout=timeout,
        workdir=workdir,
    )
