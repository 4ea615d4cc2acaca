"""The store contract: how the suite finds, builds and talks to a user's MemoryStore.

This is the one place that defines what a store may look like. Users and this
project's own checks depend on it, so keep it stable:

* ``--store SPEC`` is ``path/to/file.py:NAME`` (relative to the working
  directory) or ``package.module:NAME`` importable from it.
* NAME is a class or a factory, called afresh for every scenario with keyword
  arguments chosen by parameter name from :data:`STORE_PARAMETERS`. A factory
  that takes ``session_id`` builds one object per session, whose methods then
  take no session id.
* Methods are found by name (:data:`APPEND_METHODS`, :data:`LOAD_METHODS`,
  :data:`CLEAR_METHODS`, :data:`COMPACT_METHODS`, :data:`CONSISTENCY_METHODS`), plain or ``async
  def``. Append takes ``(role, content)``, one whole message, or a list of them
  (:class:`AppendForm`); a whole message is built as the append parameter's
  annotated class, else as a dict. A compacting store takes the suite's
  ``summarize`` and says with :data:`SUMMARY_IN_WINDOW` how its summary counts
  toward its window.
* Stores of a known framework (LangChain, LlamaIndex, OpenAI Agents) are
  recognised by their base class and driven by :mod:`.frameworks`.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import inspect
import json
import os
import sys
import traceback
import typing
import unittest
from contextlib import nullcontext
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, Callable, ContextManager, Generator, Iterator

import pytest

# canonical name -> aliases a store may use instead, with what the suite passes
STORE_PARAMETERS: dict[str, tuple[tuple[str, ...], str]] = {
    "redis": (("client", "redis_client", "conn"),
              "a redis-py client (decode_responses=True) connected to the server under test "
              "(redis.asyncio for a store whose methods are async)"),
    "redis_url": (("url",), "that server's URL"),
    "namespace": (("prefix", "key_prefix"),
                  "a key prefix unique to the scenario; keep all keys under it"),
    "session_id": ((), "the session's id, for a factory that builds one object per session (its "
                       "methods then take no session id)"),
    "max_messages": (("max_history", "window", "window_size"), "the count window N"),
    "max_tokens": (("token_limit", "max_token_limit"), "the model profile's token budget"),
    "count_tokens": (("token_counter",),
                     "callable(str) -> int: the cost of one message with that content, "
                     "per-message overhead included"),
    "ttl": (("ttl_seconds", "expire"), "seconds"),
    "profile": ((), "the model profile (memory_regression.profiles.ModelProfile)"),
    "summarize": (("summarizer",),
                  "callable(list of role/content dicts) -> str: the summary compact writes, deterministic, "
                  "calling no model; its text names the messages it was given"),
    "data_dir": (("directory", "tmp_dir"),
                 "a directory of the scenario's own for the store's files (a second backend's, as a SQLite "
                 "file), empty at first and removed when the scenario ends"),
}

APPEND_METHODS = ("append", "add_message", "append_message", "add", "save_message", "save", "add_items",
                  "add_messages")
LOAD_METHODS = ("get", "get_context", "get_history", "get_messages", "load", "get_items")
CLEAR_METHODS = ("clear", "delete", "clear_session", "delete_messages", "reset")
COMPACT_METHODS = ("compact",)
# a compacting store's class attribute: whether its summary counts toward its window (as one message,
# or its tokens, trimmed like any other once it is the oldest), else it stays first, outside the window
SUMMARY_IN_WINDOW = "summary_in_window"
CONSISTENCY_METHODS = ("consistent_state",)   # (session_id) -> bool: every backend the store writes agrees
LIST_APPEND_METHODS = ("add_items", "add_messages")   # found by name, these take a list of messages
MESSAGE_PARAMETERS = ("message", "msg", "item", "entry")   # a parameter of these names takes a whole message
# keys of a whole message, beside role and content, that the suite appends and compares
MESSAGE_FIELDS = ("tool_calls", "tool_call_id", "name", "metadata")

# LangChain-style message types and the roles they stand for
_TYPE_TO_ROLE = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool",
                 "function": "function", "chat": "user"}


# what pytest and unittest take for a test's own outcome (a skip, the end of the run, an expected failure)
TEST_OUTCOMES = (pytest.skip.Exception, pytest.exit.Exception, pytest.xfail.Exception, unittest.SkipTest)


class OutcomeFromStore(AssertionError):
    """A test outcome raised from the store's code: pytest would skip the scenario or end the run
    for it, and a store that stores nothing would pass; it is the store's failure instead."""

    def __init__(self, member: str, raised: BaseException):
        super().__init__(f"the store's {member} raised {type(raised).__name__}: {raised}, a test outcome raised from "
                         f"the store's code, which is the store's failure: a memory store must not skip or end "
                         f"the tests that use it")


class UsageError(Exception):
    """Bad input, or a store outside the contract: exit status 2, with a message that says what to fix."""


@dataclass(frozen=True)
class Message:
    """A message as the suite compares it. ``fields`` holds the keys of :data:`MESSAGE_FIELDS` it
    has (tool calls, a tool result's call id and name, metadata) as canonical JSON, so that a
    message stays hashable and two equal messages compare equal."""

    role: str
    content: str
    fields: str = ""

    @classmethod
    def of(cls, role: str, content: str, **fields: Any) -> "Message":
        present = {key: value for key, value in fields.items() if value not in (None, "", [], {})}
        return cls(role, content, json.dumps(present, sort_keys=True, ensure_ascii=False) if present else "")

    def extra(self) -> dict[str, Any]:
        return json.loads(self.fields) if self.fields else {}

    def plain(self) -> "Message":
        """Its role and content only, as a store that takes no more gives it back."""
        return Message(self.role, self.content)

    def as_dict(self) -> dict[str, Any]:
        """The message as an OpenAI chat-completions dict."""
        return {"role": self.role, "content": self.content, **self.extra()}

    def describe(self, width: int = 60) -> str:
        text = self.content if len(self.content) <= width else (
            self.content[:width] + f"... ({len(self.content)} chars)")
        extra = f" {self.fields[:width]}{'...' if len(self.fields) > width else ''}" if self.fields else ""
        return f"{self.role}: {text!r}{extra}"


def with_aliases(canonical: str) -> str:
    """A contract parameter and the other names it goes by: ``max_tokens (or token_limit, max_token_limit)``."""
    aliases = STORE_PARAMETERS[canonical][0]
    return f"{canonical} (or {', '.join(aliases)})" if aliases else canonical


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
            "Methods, found by name (plain or async def; name yours with --append-method etc.); a store\n"
            "built with session_id takes no session_id in its methods:\n"
            f"  append (session_id, role, content), (session_id, message) or (session_id, [message]):\n"
            f"    {', '.join(APPEND_METHODS)}\n"
            f"  load (session_id), returning the history oldest first as role/content dicts or objects:\n"
            f"    {', '.join(LOAD_METHODS)}\n"
            f"  clear (session_id), optional: {', '.join(CLEAR_METHODS)}\n"
            f"  compact (session_id), optional, with summarize: {', '.join(COMPACT_METHODS)}; the oldest messages\n"
            "    become one message holding summarize(those messages), first; a class attribute\n"
            f"    {SUMMARY_IN_WINDOW} = False keeps it outside the window (default True: it counts toward it)\n"
            f"  consistency (session_id) -> bool, optional: {', '.join(CONSISTENCY_METHODS)}: True once every\n"
            "    backend the store writes (Redis, a mirror) agrees on the session\n"
            "LangChain chat histories, LlamaIndex chat stores and OpenAI Agents sessions run as they are.")


def user_traceback(exc: BaseException, hidden: tuple[str, ...] = ()) -> str:
    """The traceback of an exception raised by user code, without our or importlib's frames, nor
    those under the directories ``hidden``."""
    own = (str(Path(__file__).resolve().parent), "<frozen", *hidden)
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if not f.filename.startswith(own)]
    lines = traceback.format_list(frames) + traceback.format_exception_only(type(exc), exc)
    return "Traceback (most recent call last):\n" + "".join(lines)


def exception_chain(exc: BaseException | None) -> Iterator[BaseException]:
    """``exc`` and the exceptions it was raised from or during, each once."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


# set in the Docker image: a store file that is not found there is most often a directory not mounted
IN_IMAGE = "MEMORY_REGRESSION_IN_IMAGE"


def split_spec(spec: str, what: str = "store") -> tuple[str, str, bool]:
    """``file.py:NAME`` or ``package.module:NAME`` as (module part, name, whether it is a path)."""
    module_part, sep, name = spec.rpartition(":")
    if not sep or not module_part or not name:
        raise UsageError(
            f"--{what} {spec!r} is not of the form path/to/file.py:NAME or package.module:NAME")
    return module_part, name, module_part.endswith(".py") or "/" in module_part or "\\" in module_part


def missing_module(spec: str, module_part: str, workdir: Path, what: str = "store") -> UsageError:
    return UsageError(f"--{what} {spec!r}: no module {module_part!r} importable from {workdir} "
                      "(give a path ending in .py, or run from the directory that holds the package)")


def missing_file(spec: str, module_part: str, workdir: Path, what: str = "store") -> UsageError:
    hint = ""
    if os.environ.get(IN_IMAGE) and not os.environ.get("GITHUB_ACTIONS"):
        hint = (f" (inside the image the store's files come from a mounted directory: run docker run -v "
                f"\"$PWD:{workdir}\" -w {workdir} ... from the directory that holds {module_part})")
    return UsageError(f"--{what} {spec!r}: no file {module_part} under the working directory {workdir}{hint}")


def load_object(spec: str, workdir: Path, what: str = "store") -> tuple[Any, Path | None]:
    """Resolve ``file.py:NAME`` or ``package.module:NAME``; return the object and its source file."""
    module_part, name, is_path = split_spec(spec, what)
    if str(workdir) not in sys.path:
        sys.path.insert(0, str(workdir))
    # the user's modules are compiled, never cached beside their files (__pycache__ in the user's
    # tree; in an action, owned by root in the workspace)
    writes_bytecode, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        if is_path:
            path = (workdir / module_part).resolve()
            if not path.is_file():
                raise missing_file(spec, module_part, workdir, what)
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
            raise missing_module(spec, module_part, workdir, what) from None
        raise UsageError(f"--{what} {spec!r}: importing it failed:\n{user_traceback(exc)}") from None
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # the user's module raised while importing, SystemExit included
        raise UsageError(f"--{what} {spec!r}: importing it failed:\n{user_traceback(exc)}") from None
    finally:
        sys.dont_write_bytecode = writes_bytecode
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


class AppendForm(str, Enum):
    """What append takes besides a session id (none for a store built per session)."""

    ROLE_CONTENT = "(role, content)"
    MESSAGE = "(message)"
    MESSAGES = "([message, ...])"


@dataclass(frozen=True)
class MessageCodec:
    """How whole messages travel to a store and back. ``encode`` makes, from a chat-completions
    dict, what append takes (a list: one message may be several framework objects); ``decode``
    makes what load returned readable by :func:`normalize_history`."""

    name: str                             # the message type, as the shape names it
    encode: Callable[[dict], list]
    decode: Callable[[Any], Any]
    carries_fields: bool                  # tool calls, a tool result's id and name, and metadata travel in it


ROLE_AND_CONTENT = MessageCodec("role and content", lambda message: [message], lambda raw: raw, False)
DICTS = MessageCodec("dict", lambda message: [message], lambda raw: raw, True)


def class_codec(cls: type) -> MessageCodec:
    """Whole messages built as ``cls(role=..., content=..., ...)``: the fields of
    :data:`MESSAGE_FIELDS` travel only if it takes them (or ``**kwargs``)."""
    try:
        parameters = inspect.signature(cls).parameters
    except (TypeError, ValueError):
        parameters = {}
    carries = (any(p.kind is p.VAR_KEYWORD for p in parameters.values())
               or all(name in parameters for name in ("tool_calls", "tool_call_id")))

    def encode(message: dict) -> list:
        return [cls(**{k: v for k, v in message.items() if carries or k in ("role", "content")})]
    return MessageCodec(cls.__name__, encode, lambda raw: raw, carries)


@dataclass
class StoreBinding:
    """What the suite learned about a store: how to build it and which methods to call."""

    spec: str
    factory: Callable[..., Any]
    source_file: Path | None
    parameters: dict[str, str]           # canonical name -> the factory's own parameter name
    takes_var_kwargs: bool
    append_method: str = ""
    load_method: str = ""                # a method, or (a framework's) property read without a call
    clear_method: str | None = None
    compact_method: str | None = None
    summary_in_window: bool = True       # how the summary of compact counts toward the window (SUMMARY_IN_WINDOW)
    consistency_method: str | None = None   # consistent_state: whether every backend the store writes agrees
    is_async: bool = False
    per_session: bool = False            # built once per session with session_id; methods take no session id
    append_form: AppendForm = AppendForm.ROLE_CONTENT
    codec: MessageCodec = field(default=ROLE_AND_CONTENT)
    framework: str | None = None         # the framework whose interface the store implements
    unfilled: dict[str, Any] = field(default_factory=dict)   # parameters left at their defaults: name -> default

    def accepts(self, canonical: str) -> bool:
        return canonical in self.parameters

    @property
    def takes_whole_messages(self) -> bool:
        return self.append_form is not AppendForm.ROLE_CONTENT

    @property
    def shape(self) -> str:
        """The store's shape in a few words, as reports show it."""
        keyed = "" if self.per_session else "session_id, "
        form = self.append_form.value.strip("()")
        kind = self.framework or (
            "one object per session" if self.per_session else "one object for all sessions")
        message = f"; messages as {self.codec.name}" if self.takes_whole_messages and not self.framework else ""
        return f"{kind}: {self.append_method}({keyed}{form}){message}"

    def build_kwargs(self, values: dict[str, Any]) -> dict[str, Any]:
        """Keyword arguments for one call of the factory, from canonical values."""
        if self.takes_var_kwargs:
            kwargs = dict(values)
            for canonical, own in self.parameters.items():
                kwargs.pop(canonical, None)
                kwargs[own] = values[canonical]
            return kwargs
        return {own: values[canonical] for canonical, own in self.parameters.items()}


def contract_parameter(name: str) -> str | None:
    """The canonical contract parameter ``name`` is, or is an alias of; None if neither."""
    for canonical, (aliases, _meaning) in STORE_PARAMETERS.items():
        if name in (canonical, *aliases):
            return canonical
    return None


def inspect_parameters(spec: str, factory: Any, mapping: dict[str, str] | None = None
                       ) -> tuple[dict[str, str], bool, dict[str, Any]]:
    """Map the factory's parameters onto the contract, by name or by ``mapping`` (``--store-params``:
    the factory's own name -> a canonical contract name); reject required ones outside it. Returns
    the map (canonical -> own name), whether it takes ``**kwargs``, and the parameters the suite
    leaves at their defaults (own name -> default): a window or TTL under another name keeps its
    default in every scenario, which :mod:`.observe` looks for."""
    mapping = mapping or {}
    if not callable(factory):
        raise UsageError(f"--store {spec!r} names a {type(factory).__name__}, not a class or factory")
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError) as exc:
        raise UsageError(f"--store {spec!r}: cannot read its signature ({exc})") from None
    parameters: dict[str, str] = {}
    unfilled: dict[str, Any] = {}
    var_kwargs = any(p.kind is p.VAR_KEYWORD for p in signature.parameters.values())
    named = [p.name for p in signature.parameters.values() if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]
    absent = [name for name in mapping if name not in named]
    if absent and not var_kwargs:
        raise UsageError(f"--store-params names {', '.join(map(repr, absent))}, which --store {spec!r} does not "
                         f"take: its parameters are {', '.join(named) or 'none'}")
    for name in absent:   # passed by that name through **kwargs
        parameters[mapping[name]] = name
    for param in signature.parameters.values():
        if param.kind in (param.VAR_KEYWORD, param.VAR_POSITIONAL):
            continue
        canonical = mapping.get(param.name) or contract_parameter(param.name)
        if canonical is None or param.kind is param.POSITIONAL_ONLY:
            if param.default is param.empty:
                raise UsageError(
                    f"--store {spec!r} requires a parameter {param.name!r}, which the contract "
                    f"does not provide. The suite passes, by name:\n{parameter_table()}\n"
                    "Give that parameter a default, rename it to one of these, map it with --store-params "
                    f"{param.name}=NAME, or wrap the store in a factory function.")
            unfilled[param.name] = param.default
            continue
        if canonical in parameters:
            raise UsageError(
                f"--store {spec!r} takes both {parameters[canonical]!r} and {param.name!r}, "
                f"which are the same contract parameter {canonical!r}: keep one")
        parameters[canonical] = param.name
    return parameters, var_kwargs, unfilled


def bind_store(spec: str, factory: Any, source_file: Path | None,
               method_overrides: dict[str, str | None],
               build_probe: Callable[["StoreBinding"], Any], mapping: dict[str, str] | None = None) -> StoreBinding:
    """Inspect a factory: its parameters (``mapping``: ``--store-params``), then its methods (on the
    class, or on a probe instance)."""
    from .frameworks import framework_of   # the frameworks build on the contract

    parameters, var_kwargs, unfilled = inspect_parameters(spec, factory, mapping)
    binding = StoreBinding(spec=spec, factory=factory, source_file=source_file, parameters=parameters,
                           takes_var_kwargs=var_kwargs, per_session="session_id" in parameters,
                           unfilled=unfilled)
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
    framework = framework_of(target if inspect.isclass(target) else type(target))
    if framework is not None:
        _bind_framework(binding, framework, target, method_overrides)
    else:
        binding.append_method = _find_method(target, method_overrides.get("append"), APPEND_METHODS,
                                             "append", True)
        binding.load_method = _find_method(target, method_overrides.get("load"), LOAD_METHODS, "load", True)
        binding.clear_method = _find_method(target, method_overrides.get("clear"), CLEAR_METHODS,
                                            "clear", False)
        binding.append_form, binding.codec = _append_form(target, binding.append_method, binding.per_session)
    binding.compact_method = _find_method(target, None, COMPACT_METHODS, "compact", False)
    binding.summary_in_window = bool(getattr(target, SUMMARY_IN_WINDOW, True))
    binding.consistency_method = _find_method(target, None, CONSISTENCY_METHODS, "consistency", False)
    names = [n for n in (binding.append_method, binding.load_method, binding.clear_method,
                         binding.compact_method, binding.consistency_method) if n]
    binding.is_async = any(inspect.iscoroutinefunction(getattr(target, n, None)) for n in names)
    session = () if binding.per_session else ("session_id",)
    message = {AppendForm.ROLE_CONTENT: ("role", "content"), AppendForm.MESSAGE: ("message",),
               AppendForm.MESSAGES: ("messages",)}[binding.append_form]
    _check_call_shape(spec, target, binding.append_method, "append", session + message)
    if not binding.framework:   # a framework's load may be a property, or a field of each instance
        _check_call_shape(spec, target, binding.load_method, "load", session)
    if binding.clear_method:
        _check_call_shape(spec, target, binding.clear_method, "clear", session)
    if binding.compact_method:
        _check_call_shape(spec, target, binding.compact_method, "compact", session)
    if binding.consistency_method:
        _check_call_shape(spec, target, binding.consistency_method, "consistency", session)
    if probe is not None:
        close_quietly(probe)
    return binding


def _bind_framework(binding: StoreBinding, framework: Any, target: Any,
                    method_overrides: dict[str, str | None]) -> None:
    """A framework's store: its own methods and message objects."""
    if framework.per_session and not binding.per_session:
        raise UsageError(f"--store {binding.spec!r} is a {framework.name}, which holds one session: its "
                         "factory must take session_id (the suite builds one per session)")
    methods = framework.methods(target if inspect.isclass(target) else type(target))
    binding.append_method = method_overrides.get("append") or methods.append
    binding.load_method = method_overrides.get("load") or methods.load
    binding.clear_method = method_overrides.get("clear") or methods.clear
    binding.append_form = AppendForm.MESSAGES if methods.append_takes_list else AppendForm.MESSAGE
    binding.codec = MessageCodec(f"{framework.name} messages", framework.encode, framework.decode, True)
    binding.framework = framework.name


def _call_parameters(target: Any, name: str) -> list[inspect.Parameter] | None:
    """The parameters a call of ``target.name`` fills (without self), or None if unreadable."""
    try:
        params = list(inspect.signature(getattr(target, name)).parameters.values())
    except (TypeError, ValueError):
        return None
    if inspect.isclass(target) and params and not isinstance(inspect.getattr_static(target, name),
                                                             (staticmethod, classmethod)):
        params = params[1:]  # self
    return params


def _append_form(target: Any, name: str, per_session: bool) -> tuple[AppendForm, MessageCodec]:
    """How append takes a message, from its name and its parameter after the session id: a list
    (add_items, add_messages, or a parameter named or annotated so), one whole message (a parameter
    named message, msg, item or entry, or annotated with a type other than str), else role and
    content. A whole message is built as the annotated class, else as a dict."""
    params = _call_parameters(target, name)
    rest = (params or [])[0 if per_session else 1:]
    if not rest:
        return AppendForm.ROLE_CONTENT, ROLE_AND_CONTENT
    first = rest[0]
    try:
        hints = typing.get_type_hints(getattr(target, name))
    except Exception:   # an annotation that does not resolve is no hint
        hints = {}
    annotation = hints.get(first.name, inspect.Parameter.empty)
    origin = typing.get_origin(annotation)
    listed = (name in LIST_APPEND_METHODS or first.name in ("messages", "items")
              or origin in (list, tuple, typing.Sequence, typing.Iterable) or annotation in (list, tuple))
    if not listed and first.name not in MESSAGE_PARAMETERS and annotation in (str, inspect.Parameter.empty) \
            and (len(rest) >= 2 or first.kind is first.VAR_POSITIONAL):
        return AppendForm.ROLE_CONTENT, ROLE_AND_CONTENT
    message_type = (typing.get_args(annotation) or (Any,))[0] if listed else annotation
    plain = (message_type is inspect.Parameter.empty or not inspect.isclass(message_type)
             or typing.is_typeddict(message_type)
             or issubclass(message_type, (dict, str)) or message_type.__module__ == "typing")
    codec = DICTS if plain else class_codec(message_type)
    return (AppendForm.MESSAGES if listed else AppendForm.MESSAGE), codec


def _check_call_shape(spec: str, target: Any, name: str, role: str, arguments: tuple[str, ...]) -> None:
    """The method must accept ``arguments`` positionally and need no others."""
    if not callable(getattr(target, name, None)):
        raise UsageError(f"--store {spec!r}: the store has no method {name!r}")
    params = _call_parameters(target, name)
    if params is None:
        return
    try:
        inspect.Signature(params).bind(*arguments)
    except TypeError:
        raise UsageError(
            f"--store {spec!r}: {name}{inspect.Signature(params)} cannot be called as {name}({', '.join(arguments)}); "
            f"give its other parameters defaults, or name another method with --{role}-method") from None


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


def normalize_history(raw: Any, fields: bool = False) -> list[Message]:
    """Turn what a load method returned into messages, oldest first.

    Accepts dicts with role/content, objects with .role/.content, and LangChain-style
    objects or dicts with .type (human/ai/system) in place of role; roles may be enums, and content
    a list of text blocks. With ``fields`` (a store that takes whole messages), the keys of
    :data:`MESSAGE_FIELDS` are read too, and a message with tool calls may have no content.
    """
    __tracebackhide__ = True
    if raw is None:
        raise AssertionError("load returned None instead of a list of messages")
    if isinstance(raw, (str, bytes, dict)):
        raise AssertionError(f"load returned a {type(raw).__name__}, not a list of messages: {raw!r:.200}")
    messages = []
    for index, item in enumerate(raw):
        get = item.get if isinstance(item, dict) else lambda key, item=item: getattr(item, key, None)
        role = get("role")
        if role is None and get("type") is not None:
            role = _TYPE_TO_ROLE.get(get("type"), get("type"))
        extra = {key: get(key) for key in MESSAGE_FIELDS} if fields else {}
        content = get("content")
        if content is None and extra.get("tool_calls"):
            content = ""
        if role is None or content is None:
            raise AssertionError(
                f"load returned item {index} without role and content: {item!r:.200}")
        messages.append(Message.of(role_text(role), content_text(content), **extra))
    return messages


class StoreAdapter:
    """One store under test, called the same way whatever its shape: sync or async, one object for
    all sessions or one per session (built on first use with ``build(session_id)``), taking role and
    content or whole messages."""

    def __init__(self, binding: StoreBinding, build: Callable[[str | None], Any], run: Callable[[Any], Any],
                 watch: Callable[[str, tuple], ContextManager[Any]] = lambda method, args: nullcontext()):
        __tracebackhide__ = True   # a store that fails while it is built: its own frames are the story
        self.binding = binding
        self._build = build
        self._run = run      # runs an awaitable to completion on the scenario's event loop
        self._watch = watch  # wraps each call of the store, given its method name and arguments
        self._sessions: dict[str, Any] = {}
        self._shared = None if binding.per_session else self._built(None)

    def _built(self, session_id: str | None) -> Any:
        __tracebackhide__ = True
        try:
            return self._build(session_id)
        except TEST_OUTCOMES as exc:
            raise OutcomeFromStore("factory", exc) from exc

    def instances(self) -> list[Any]:
        """The store objects built so far."""
        return [self._shared] if self._shared is not None else list(self._sessions.values())

    def instance_for(self, session_id: str) -> Any:
        """The store object that holds ``session_id``."""
        __tracebackhide__ = True
        if self._shared is not None:
            return self._shared
        if session_id not in self._sessions:
            self._sessions[session_id] = self._built(session_id)
        return self._sessions[session_id]

    def _invoke(self, session_id: str, member: str, *args: Any) -> Generator[Any, Any, Any]:
        """One call of the store, as steps: it yields the awaitable an async store returns and is sent
        its result, so that :meth:`_run_steps` runs it to completion and :meth:`_await_steps` awaits it
        beside other tasks on the scenario's loop. A test outcome the store raises is its failure."""
        __tracebackhide__ = True
        instance = self.instance_for(session_id)
        args = args if self.binding.per_session else (session_id, *args)
        with self._watch(member, args):
            try:
                value = getattr(instance, member)
                result = value(*args) if callable(value) else value   # a framework's load may be a property
                if inspect.isawaitable(result):
                    result = yield result
            except TEST_OUTCOMES as exc:
                raise OutcomeFromStore(member, exc) from exc
        return result

    def _run_steps(self, steps: Generator[Any, Any, Any]) -> Any:
        __tracebackhide__ = True
        result, error = None, None
        while True:
            try:
                awaitable = steps.send(result) if error is None else steps.throw(error)
            except StopIteration as done:
                return done.value
            try:
                result, error = self._run(awaitable), None
            except BaseException as exc:
                result, error = None, exc

    async def _await_steps(self, steps: Generator[Any, Any, Any]) -> Any:
        __tracebackhide__ = True
        result, error = None, None
        while True:
            try:
                awaitable = steps.send(result) if error is None else steps.throw(error)
            except StopIteration as done:
                return done.value
            try:
                result, error = await awaitable, None
            except BaseException as exc:
                result, error = None, exc

    def _add(self, session_id: str, message: Message) -> Generator[Any, Any, Message]:
        __tracebackhide__ = True
        if self.binding.append_form is AppendForm.ROLE_CONTENT:
            yield from self._invoke(session_id, self.binding.append_method, message.role, message.content)
            return message.plain()
        encoded = self.binding.codec.encode(message.as_dict())
        if self.binding.append_form is AppendForm.MESSAGES:
            yield from self._invoke(session_id, self.binding.append_method, encoded)
        else:
            for native in encoded:
                yield from self._invoke(session_id, self.binding.append_method, native)
        return self._as_given_back([message], encoded)[0]

    def add(self, session_id: str, message: Message) -> Message:
        """Append one message, in the form the store takes; return it as the store should give it
        back (:meth:`stored_form`)."""
        __tracebackhide__ = True
        return self._run_steps(self._add(session_id, message))

    async def aadd(self, session_id: str, message: Message) -> Message:
        """:meth:`add` as a coroutine of an async store, to run beside others on the scenario's loop."""
        __tracebackhide__ = True
        return await self._await_steps(self._add(session_id, message))

    def append(self, session_id: str, role: str, content: str) -> None:
        __tracebackhide__ = True
        self.add(session_id, Message(role, content))

    def append_all(self, session_id: str, messages: list[Message]) -> None:
        __tracebackhide__ = True
        for message in messages:
            self.add(session_id, message)

    def stored_form(self, messages: list[Message]) -> list[Message]:
        """``messages`` as a correct store of this shape returns them: role and content only for a store
        that takes no more, else as the message type (a framework's own conversion) carries them."""
        codec = self.binding.codec
        return self._as_given_back(messages, [native for message in messages
                                              for native in codec.encode(message.as_dict())])

    def _as_given_back(self, messages: list[Message], encoded: list) -> list[Message]:
        """``messages``, appended as ``encoded``, as a correct store gives them back."""
        if not self.binding.codec.carries_fields:
            return [message.plain() for message in messages]
        return normalize_history(self.binding.codec.decode(encoded), fields=True)

    def _load(self, session_id: str) -> Generator[Any, Any, list[Message]]:
        __tracebackhide__ = True
        raw = yield from self._invoke(session_id, self.binding.load_method)
        if raw is not None and not isinstance(raw, (str, bytes, dict)):
            from .frameworks import framework_of_messages   # the frameworks build on the contract
            native = None if self.binding.framework else framework_of_messages(raw)
            try:
                raw = native.decode(raw) if native else self.binding.codec.decode(raw)
            except Exception as exc:
                raise AssertionError(f"load returned what {self.binding.codec.name} cannot be read from: "
                                     f"{type(exc).__name__}: {exc}") from exc
        return normalize_history(raw, fields=self.binding.codec.carries_fields)

    def load(self, session_id: str) -> list[Message]:
        __tracebackhide__ = True
        return self._run_steps(self._load(session_id))

    async def aload(self, session_id: str) -> list[Message]:
        """:meth:`load` as a coroutine of an async store, to run beside others on the scenario's loop."""
        __tracebackhide__ = True
        return await self._await_steps(self._load(session_id))

    def clear(self, session_id: str) -> None:
        __tracebackhide__ = True
        if not self.binding.clear_method:
            raise UsageError("the store has no clear method")
        self._run_steps(self._invoke(session_id, self.binding.clear_method))

    def compact(self, session_id: str) -> None:
        """Summarise the oldest messages of the session (the store's compact, with the summarize it was
        built with)."""
        __tracebackhide__ = True
        if not self.binding.compact_method:
            raise UsageError("the store has no compact method")
        self._run_steps(self._invoke(session_id, self.binding.compact_method))

    def consistent(self, session_id: str) -> Any:
        """What the store's consistent_state says of ``session_id`` (True once its backends agree)."""
        __tracebackhide__ = True
        return self._run_steps(self._invoke(session_id, self.binding.consistency_method))

    async def aconsistent(self, session_id: str) -> Any:
        """:meth:`consistent` as a coroutine of an async store, to poll on the scenario's loop."""
        __tracebackhide__ = True
        return await self._await_steps(self._invoke(session_id, self.binding.consistency_method))
