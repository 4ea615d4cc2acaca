"""The store contract: how the suite finds, builds and talks to a user's MemoryStore.

This is the one place that defines what a store may look like. Users and this
project's own checks depend on it, so keep it stable:

* ``--store SPEC`` is ``path/to/file.py:NAME`` (relative to the working
  directory) or ``package.module:NAME`` importable from it.
* NAME is a class or a factory, called afresh for every scenario with keyword
  arguments chosen by parameter name from :data:`STORE_PARAMETERS`.
* Methods are found by name (:data:`APPEND_METHODS`, :data:`LOAD_METHODS`,
  :data:`CLEAR_METHODS`), plain or ``async def``.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import inspect
import sys
import traceback
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from contextlib import nullcontext
from typing import Any, Callable, ContextManager

# canonical name -> aliases a store may use instead, with what the suite passes
STORE_PARAMETERS: dict[str, tuple[tuple[str, ...], str]] = {
    "redis": (("client", "redis_client", "conn"),
              "a redis-py client (decode_responses=True) connected to the server under test "
              "(redis.asyncio for a store whose methods are async)"),
    "redis_url": (("url",), "that server's URL"),
    "namespace": (("prefix", "key_prefix"),
                  "a key prefix unique to the scenario; keep all keys under it"),
    "max_messages": (("max_history", "window", "window_size"), "the count window N"),
    "max_tokens": (("token_limit", "max_token_limit"), "the model profile's token budget"),
    "count_tokens": (("token_counter",),
                     "callable(str) -> int: the cost of one message with that content, "
                     "per-message overhead included"),
    "ttl": (("ttl_seconds", "expire"), "seconds"),
    "profile": ((), "the model profile (memory_regression.profiles.ModelProfile)"),
}

APPEND_METHODS = ("append", "add_message", "append_message", "add", "save_message")
LOAD_METHODS = ("get", "get_context", "get_history", "get_messages", "load")
CLEAR_METHODS = ("clear", "delete", "clear_session", "reset")

# LangChain-style message types and the roles they stand for
_TYPE_TO_ROLE = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool",
                 "function": "function", "chat": "user"}


class UsageError(Exception):
    """Bad input, or a store outside the contract: exit status 2, with a message that says what to fix."""


@dataclass(frozen=True)
class Message:
    role: str
    content: str

    def describe(self, width: int = 60) -> str:
        text = self.content if len(self.content) <= width else (
            self.content[:width] + f"... ({len(self.content)} chars)")
        return f"{self.role}: {text!r}"


def parameter_table() -> str:
    """The contract's parameter table as text, for error messages."""
    rows = []
    for name, (aliases, meaning) in STORE_PARAMETERS.items():
        also = f" (also {', '.join(aliases)})" if aliases else ""
        rows.append(f"  {name}{also}: {meaning}")
    return "\n".join(rows)


def contract_summary() -> str:
    """The contract in a few lines, for ``--help``."""
    return ("--store names a class or factory; it is called afresh for every scenario with keyword\n"
            "arguments chosen by parameter name (**kwargs gets them all):\n" + parameter_table() + "\n"
            "Methods, found by name (plain or async def; name yours with --append-method etc.):\n"
            f"  append (session_id, role, content): {', '.join(APPEND_METHODS)}\n"
            f"  load (session_id), returning the history oldest first as role/content dicts or objects:\n"
            f"    {', '.join(LOAD_METHODS)}\n"
            f"  clear (session_id), optional: {', '.join(CLEAR_METHODS)}")


def user_traceback(exc: BaseException) -> str:
    """The traceback of an exception raised by user code, without our or importlib's frames."""
    own = str(Path(__file__).resolve().parent)
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if not f.filename.startswith(own) and not f.filename.startswith("<frozen")]
    lines = traceback.format_list(frames) + traceback.format_exception_only(type(exc), exc)
    return "Traceback (most recent call last):\n" + "".join(lines)


def load_object(spec: str, workdir: Path, what: str = "store") -> tuple[Any, Path | None]:
    """Resolve ``file.py:NAME`` or ``package.module:NAME``; return the object and its source file."""
    module_part, sep, name = spec.rpartition(":")
    if not sep or not module_part or not name:
        raise UsageError(
            f"--{what} {spec!r} is not of the form path/to/file.py:NAME or package.module:NAME")
    if str(workdir) not in sys.path:
        sys.path.insert(0, str(workdir))
    is_path = module_part.endswith(".py") or "/" in module_part or "\\" in module_part
    try:
        if is_path:
            path = (workdir / module_part).resolve()
            if not path.is_file():
                raise UsageError(
                    f"--{what} {spec!r}: no file {module_part} under the working directory {workdir}")
            module_name = f"_memory_regression_user_{path.stem}_{abs(hash(str(path)))}"
            module = sys.modules.get(module_name)
            if module is None:
                module_spec = importlib.util.spec_from_file_location(module_name, path)
                module = importlib.util.module_from_spec(module_spec)
                sys.modules[module_name] = module
                try:
                    module_spec.loader.exec_module(module)
                except BaseException:
                    del sys.modules[module_name]
                    raise
        else:
            module = importlib.import_module(module_part)
    except UsageError:
        raise
    except ModuleNotFoundError as exc:
        if exc.name and module_part.startswith(exc.name):
            raise UsageError(
                f"--{what} {spec!r}: no module {module_part!r} importable from {workdir} "
                "(give a path ending in .py, or run from the directory that holds the package)"
            ) from None
        raise UsageError(f"--{what} {spec!r}: importing it failed:\n{user_traceback(exc)}") from None
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # the user's module raised while importing, SystemExit included
        raise UsageError(f"--{what} {spec!r}: importing it failed:\n{user_traceback(exc)}") from None
    try:
        obj = getattr(module, name)
    except AttributeError:
        public = sorted(n for n in vars(module) if not n.startswith("_"))
        raise UsageError(
            f"--{what} {spec!r}: {module_part} has no attribute {name!r} "
            f"(it defines: {', '.join(public) or 'nothing public'})") from None
    source = getattr(module, "__file__", None)
    return obj, Path(source).resolve() if source else None


def _find_method(target: Any, override: str | None, candidates: tuple[str, ...], role: str,
                 required: bool) -> str | None:
    if override:
        if not callable(getattr(target, override, None)):
            raise UsageError(f"the store has no method {override!r} (given as --{role}-method)")
        return override
    for name in candidates:
        if callable(getattr(target, name, None)):
            return name
    if required:
        raise UsageError(
            f"the store has no {role} method: expected one of {', '.join(candidates)} "
            f"(or name yours with --{role}-method)")
    return None


@dataclass
class StoreBinding:
    """What the suite learned about a store: how to build it and which methods to call."""

    spec: str
    factory: Callable[..., Any]
    source_file: Path | None
    parameters: dict[str, str]           # canonical name -> the factory's own parameter name
    takes_var_kwargs: bool
    append_method: str
    load_method: str
    clear_method: str | None
    is_async: bool

    def accepts(self, canonical: str) -> bool:
        return canonical in self.parameters

    def build_kwargs(self, values: dict[str, Any]) -> dict[str, Any]:
        """Keyword arguments for one call of the factory, from canonical values."""
        if self.takes_var_kwargs:
            kwargs = dict(values)
            for canonical, own in self.parameters.items():
                kwargs.pop(canonical, None)
                kwargs[own] = values[canonical]
            return kwargs
        return {own: values[canonical] for canonical, own in self.parameters.items()}


def inspect_parameters(spec: str, factory: Any) -> tuple[dict[str, str], bool]:
    """Map the factory's parameters onto the contract; reject required ones outside it."""
    if not callable(factory):
        raise UsageError(f"--store {spec!r} names a {type(factory).__name__}, not a class or factory")
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError) as exc:
        raise UsageError(f"--store {spec!r}: cannot read its signature ({exc})") from None
    lookup = {}
    for canonical, (aliases, _meaning) in STORE_PARAMETERS.items():
        for name in (canonical, *aliases):
            lookup[name] = canonical
    parameters: dict[str, str] = {}
    var_kwargs = False
    for param in signature.parameters.values():
        if param.kind is param.VAR_KEYWORD:
            var_kwargs = True
            continue
        if param.kind is param.VAR_POSITIONAL:
            continue
        canonical = lookup.get(param.name)
        if canonical is None or param.kind is param.POSITIONAL_ONLY:
            if param.default is param.empty:
                raise UsageError(
                    f"--store {spec!r} requires a parameter {param.name!r}, which the contract "
                    f"does not provide. The suite passes, by name:\n{parameter_table()}\n"
                    "Give that parameter a default, rename it to one of these, or wrap the store "
                    "in a factory function.")
            continue
        if canonical in parameters:
            raise UsageError(
                f"--store {spec!r} takes both {parameters[canonical]!r} and {param.name!r}, "
                f"which are the same contract parameter {canonical!r}: keep one")
        parameters[canonical] = param.name
    return parameters, var_kwargs


def bind_store(spec: str, factory: Any, source_file: Path | None,
               method_overrides: dict[str, str | None],
               build_probe: Callable[["StoreBinding"], Any]) -> StoreBinding:
    """Inspect a factory: its parameters, then its methods (on the class, or on a probe instance)."""
    parameters, var_kwargs = inspect_parameters(spec, factory)
    binding = StoreBinding(spec=spec, factory=factory, source_file=source_file, parameters=parameters,
                           takes_var_kwargs=var_kwargs, append_method="", load_method="",
                           clear_method=None, is_async=False)
    target = factory if inspect.isclass(factory) else None
    if target is None:
        returned = inspect.signature(factory).return_annotation
        target = returned if inspect.isclass(returned) and returned is not inspect.Signature.empty else None
    probe = None
    if target is None:
        try:
            probe = build_probe(binding)
        except (KeyboardInterrupt, UsageError):   # a UsageError says already what to fix
            raise
        except BaseException as exc:  # SystemExit included
            raise UsageError(
                f"--store {spec!r}: the factory raised while building a store to inspect:\n"
                f"{user_traceback(exc)}") from None
        target = probe
    binding.append_method = _find_method(target, method_overrides.get("append"), APPEND_METHODS,
                                         "append", True)
    binding.load_method = _find_method(target, method_overrides.get("load"), LOAD_METHODS, "load", True)
    binding.clear_method = _find_method(target, method_overrides.get("clear"), CLEAR_METHODS,
                                        "clear", False)
    names = [n for n in (binding.append_method, binding.load_method, binding.clear_method) if n]
    binding.is_async = any(inspect.iscoroutinefunction(getattr(target, n)) for n in names)
    for name in (binding.append_method, binding.load_method):
        _check_call_shape(spec, target, name, 3 if name == binding.append_method else 1)
    if binding.clear_method:
        _check_call_shape(spec, target, binding.clear_method, 1)
    if probe is not None:
        close_quietly(probe)
    return binding


def _check_call_shape(spec: str, target: Any, name: str, positional: int) -> None:
    """The method must accept the contract's positional arguments and need no others."""
    method = getattr(target, name)
    try:
        signature = inspect.signature(method)
    except (TypeError, ValueError):
        return
    params = list(signature.parameters.values())
    if inspect.isclass(target) and params and not isinstance(inspect.getattr_static(target, name),
                                                             (staticmethod, classmethod)):
        params = params[1:]  # self
    try:
        inspect.Signature(params).bind(*range(positional))
    except TypeError:
        wanted = "(session_id, role, content)" if positional == 3 else "(session_id)"
        raise UsageError(
            f"--store {spec!r}: {name}{inspect.Signature(params)} cannot be called as {name}{wanted}; "
            f"give its other parameters defaults, or name another method with "
            f"--{'append' if positional == 3 else 'load'}-method") from None


def close_quietly(store: Any, run: Callable[[Any], Any] = asyncio.run) -> None:
    """Close a store that offers close() or aclose(); its own close failing is not our concern here."""
    for name in ("aclose", "close"):
        close = getattr(store, name, None)
        if callable(close):
            try:
                result = close()
                if inspect.isawaitable(result):
                    run(result)
            except Exception:
                pass
            return


def role_text(role: Any) -> str:
    """A role as the suite compares it: an enum's value (llama-index's ``MessageRole.USER`` is
    ``'user'``, which ``str()`` would make ``'MessageRole.USER'``), anything else as text."""
    return str(role.value if isinstance(role, Enum) else role)


def content_text(content: Any) -> str:
    """Content as text: a string as it is; a list of text blocks (strings, or ``{"type": "text",
    "text": ...}`` as LangChain and the OpenAI APIs write them) joined; anything else as ``str()``."""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(
            isinstance(block, str) or (isinstance(block, dict) and block.get("type") == "text"
                                       and isinstance(block.get("text"), str)) for block in content):
        return "".join(block if isinstance(block, str) else block["text"] for block in content)
    return str(content)


def normalize_history(raw: Any) -> list[Message]:
    """Turn what a load method returned into messages, oldest first.

    Accepts dicts with role/content, objects with .role/.content, and LangChain-style
    objects or dicts with .type (human/ai/system) in place of role; roles may be enums, and content
    a list of text blocks.
    """
    __tracebackhide__ = True
    if raw is None:
        raise AssertionError("load returned None instead of a list of messages")
    if isinstance(raw, (str, bytes, dict)):
        raise AssertionError(f"load returned a {type(raw).__name__}, not a list of messages: {raw!r:.200}")
    messages = []
    for index, item in enumerate(raw):
        if isinstance(item, dict):
            role = item.get("role", _TYPE_TO_ROLE.get(item.get("type"), item.get("type")))
            content = item.get("content")
        else:
            role = getattr(item, "role", None)
            if role is None and hasattr(item, "type"):
                role = _TYPE_TO_ROLE.get(item.type, item.type)
            content = getattr(item, "content", None)
        if role is None or content is None:
            raise AssertionError(
                f"load returned item {index} without role and content: {item!r:.200}")
        messages.append(Message(role_text(role), content_text(content)))
    return messages


class StoreAdapter:
    """One store instance under test, called the same way whether it is sync or async."""

    def __init__(self, binding: StoreBinding, instance: Any, run: Callable[[Any], Any],
                 watch: Callable[[str, tuple], ContextManager[Any]] = lambda method, args: nullcontext()):
        self.binding = binding
        self.instance = instance
        self._run = run      # runs an awaitable to completion on the scenario's event loop
        self._watch = watch  # wraps each call of the store, given its method name and arguments

    def _call(self, method: str, *args: Any) -> Any:
        __tracebackhide__ = True
        with self._watch(method, args):
            result = getattr(self.instance, method)(*args)
            if inspect.isawaitable(result):
                result = self._run(result)
        return result

    def append(self, session_id: str, role: str, content: str) -> None:
        __tracebackhide__ = True
        self._call(self.binding.append_method, session_id, role, content)

    def append_all(self, session_id: str, messages: list[Message]) -> None:
        __tracebackhide__ = True
        for message in messages:
            self.append(session_id, message.role, message.content)

    def load(self, session_id: str) -> list[Message]:
        __tracebackhide__ = True
        return normalize_history(self._call(self.binding.load_method, session_id))

    def clear(self, session_id: str) -> None:
        __tracebackhide__ = True
        if not self.binding.clear_method:
            raise UsageError("the store has no clear method")
        self._call(self.binding.clear_method, session_id)
