"""What a store's own names say they are, and the binding's problems with the options that fix them.

A parameter's name and default say the contract parameter it stands for (``token_budget=8000`` the
token budget, ``ttl_s=3600`` the TTL), a method's name the role it plays (``remember`` an append,
``recall`` a load, ``forget`` a clear). The binding takes none of these on its own: a name can mislead
(``max_retries=3`` is no window), so what is found here is proposed, with the option that takes it,
for the user to confirm (``--list`` prints it, and the ``[tool.memory-regression]`` table to keep it
in). Observation (:mod:`.observe`) uses the same words to blame a window or a TTL the store kept on
the parameter whose name says so.

The binding goes on past a problem (:class:`Problems`), so that one run says every one of them
(:class:`BindingError`), each with its fix where the names tell it.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, Collection

from ..errors import UsageError


class BindingProblem(UsageError):
    """One reason a store cannot be bound as it is, with the option that fixes it where its names say
    what that is (``fix``: the option's key and value, ``("append_method", "remember")``)."""

    def __init__(self, message: str, fix: tuple[str, str] | None = None):
        super().__init__(message)
        self.fix = fix


class BindingError(UsageError):
    """Every reason a store cannot be bound as it is, said at once, and the options that fix those whose
    fix its names tell (``fixes``: option key -> value; several ``--store-params`` joined)."""

    def __init__(self, spec: str, problems: list[UsageError], proposals: list[BindingProblem] = ()):
        self.problems = problems
        self.fixes = fixes_of([*problems, *proposals])
        texts = [str(problem) for problem in problems]
        besides = "".join(f"\nBesides, {proposal}" for proposal in proposals)
        every = ("\nAll at once: " + " ".join(f"--{key.replace('_', '-')} {value}" for key, value in self.fixes.items())
                 if len(problems) + len(proposals) > 1 and self.fixes else "")
        super().__init__((texts[0] if len(texts) == 1 else (
            f"--store {spec!r} cannot be bound as it is; {len(texts)} things to fix:\n"
            + "\n".join(f"  {number}. {text}" for number, text in enumerate(texts, start=1)))) + besides + every)


def fixes_of(problems: list[UsageError]) -> dict[str, str]:
    """The options that fix ``problems``, by key; several --store-params joined."""
    fixes: dict[str, str] = {}
    for problem in problems:
        key, value = getattr(problem, "fix", None) or (None, None)
        if key:
            fixes[key] = f"{fixes[key]},{value}" if key in fixes else value
    return fixes


class Problems:
    """The binding problems found so far: each check that fails goes on to the next, so that the user
    hears of all of them in one run."""

    def __init__(self, spec: str):
        self.spec = spec
        self.found: list[UsageError] = []

    def check(self, find: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """``find(*args, **kwargs)``, or None when it raised a UsageError, which is kept."""
        try:
            return find(*args, **kwargs)
        except BindingError as exc:
            self.found += exc.problems
        except UsageError as exc:
            self.found.append(exc)
        return None

    def raise_any(self, proposals: list[BindingProblem] = ()) -> None:
        if self.found:
            raise BindingError(self.spec, self.found, proposals)


# words of a parameter's name that may say it is a window or a TTL: enough where what the store did is the
# evidence (observation blames a kept window on the parameter whose default it matches: max_retries=3 is no
# window, even beside a cap of 3) ...
WINDOW_WORDS = frozenset({"limit", "window", "len", "length", "last", "keep", "history", "count", "top", "k", "n",
                          "capacity", "buffer", "messages", "msgs", "items", "entries", "turns"})
TTL_WORDS = frozenset({"ttl", "expire", "expires", "expiry", "expiration", "lifetime", "retention", "seconds"})
# ... and those that say so on their own, for a proposal made from the name alone (timeout_seconds is no TTL,
# retry_count and batch_size no window)
WINDOW_SAYS = frozenset({"limit", "window", "history", "keep", "last", "k", "capacity", "buffer", "messages", "msgs",
                         "entries", "turns"})
TTL_SAYS = TTL_WORDS - {"seconds"}
TOKEN_WORDS = frozenset({"token", "tokens"})
# ... and words that say it is one of the contract's other parameters, in the order they are tried
NAMED_WORDS: tuple[tuple[str, frozenset[str]], ...] = (
    ("summarize", frozenset({"summarize", "summarise", "summarizer", "summariser", "summary"})),
    ("count_tokens", frozenset({"tokenizer", "tokeniser"})),
    ("session_id", frozenset({"sid", "session", "conversation", "thread", "chat"})),
    ("redis_url", frozenset({"url", "uri", "dsn"})),
    ("redis", frozenset({"client", "conn", "connection", "r", "redis"})),
    ("namespace", frozenset({"prefix", "namespace", "ns"})),
    ("data_dir", frozenset({"dir", "directory", "folder"})),
)
# words of a method's name that say which role it plays
ROLE_WORDS: dict[str, frozenset[str]] = {
    "append": frozenset({"append", "add", "save", "store", "push", "remember", "record", "write", "put", "log",
                         "insert"}),
    "load": frozenset({"get", "load", "read", "fetch", "recall", "history", "messages", "context", "retrieve"}),
    "clear": frozenset({"clear", "delete", "reset", "forget", "remove", "drop", "purge", "wipe", "erase"}),
}


def words(name: str) -> list[str]:
    """A name's words, whatever its spelling: ``max_len``, ``historyLimit``, ``TTLSeconds``."""
    spaced = "".join(f"_{c.lower()}" if c.isupper() else c for c in name)
    return [part for part in spaced.split("_") if part]


def named(name: str, vocabulary: frozenset[str]) -> bool:
    """Whether a name holds one of ``vocabulary``'s words."""
    return any(part in vocabulary for part in words(name))


def _numeric(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def contract_parameter_of(name: str, default: Any = inspect.Parameter.empty) -> str | None:
    """The contract parameter a factory's parameter ``name`` (with ``default``) says it is, or None.
    A number is a token budget, a TTL or a window by its words; a callable counts tokens when its name
    speaks of tokens; the rest by the words of :data:`NAMED_WORDS`."""
    if not name.isidentifier():   # a name a program's greeting gave: proposed only as a name it can be
        return None
    found = set(words(name))
    if _numeric(default) or default is inspect.Parameter.empty:
        if found & TOKEN_WORDS and not found & {"counter", "fn", "func", "function"}:
            return "max_tokens"
        if found & TTL_SAYS:
            return "ttl"
        if found & WINDOW_SAYS:
            return "max_messages"
    if found & TOKEN_WORDS and (callable(default) or default is None):
        return "count_tokens"
    return next((canonical for canonical, vocabulary in NAMED_WORDS if found & vocabulary), None)


def role_of(name: str) -> str | None:
    """The role (append, load, clear) a method's name says it plays, or None (or two)."""
    roles = [role for role, vocabulary in ROLE_WORDS.items() if named(name, vocabulary)]
    return roles[0] if len(roles) == 1 else None


def public_methods(target: Any, taken: Collection[str]) -> list[str]:
    """The store's public methods (of its class, or of an instance) that are not already bound."""
    cls = target if inspect.isclass(target) else type(target)
    return [name for name, member in inspect.getmembers(cls)
            if name.isidentifier() and not name.startswith("_") and name not in taken
            and (inspect.isfunction(member) or inspect.ismethoddescriptor(member) or inspect.ismethod(member))]


def method_for(role: str, target: Any, taken: Collection[str], accepts: Callable[[str], bool]) -> str | None:
    """The one public method whose name says it plays ``role`` and whose parameters take the role's
    call (``accepts``), or None when there is none or more than one."""
    found = [name for name in public_methods(target, taken) if role_of(name) == role and accepts(name)]
    return found[0] if len(found) == 1 else None
