"""Binding a store to the contract: which of its factory's parameters the suite fills, which of its
members append, load, clear, compact and say whether its backends agree, in which form its append
takes messages (:class:`AppendForm`, :class:`MessageCodec`), and a framework's store recognised by
its base class (:mod:`.frameworks`). The result is a :class:`StoreBinding`."""

from __future__ import annotations

import inspect
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .rules import (APPEND_METHODS, LIST_APPEND_METHODS, LOAD_METHODS, MESSAGE_PARAMETERS, OPTIONAL_MEMBERS,
    SUMMARY_IN_WINDOW, contract_parameter, parameter_table)
from ..errors import UsageError
from .foreign import Program
from .frames import user_traceback
from .proposals import BindingProblem, Problems, contract_parameter_of, fixes_of, method_for
from ..frameworks import framework_of
from .codecs import AppendForm, CONTENT_NAMES, DICTS, MessageCodec, ROLE_AND_CONTENT, class_codec


def _find_method(target: Any, override: str | None, candidates: tuple[str, ...], role: str,
                 required: bool, accepts: Callable[[str], bool] = lambda name: True,
                 taken: frozenset[str] = frozenset()) -> str | None:
    if override:
        if not callable(getattr(target, override, None)) and not (role == "load" and _is_property(target, override)):
            raise UsageError(f"the store has no method {override!r} (given as --{role}-method)")
        return override
    for name in candidates:
        if callable(getattr(target, name, None)):
            return name
    if required:
        own = method_for(role, target, taken, accepts)
        proposal = (f"; its method {own}{_signature_text(target, own)} looks like one: take it with --{role}-method "
                    f"{own}" if own else "")
        raise BindingProblem(
            f"the store has no {role} method: expected one of {', '.join(candidates)} "
            f"(or name yours with --{role}-method){proposal}", (f"{role}_method", own) if own else None)
    return None


def _signature_text(target: Any, name: str) -> str:
    params = _call_parameters(target, name)
    return str(inspect.Signature(params)) if params is not None else "(...)"


def _builds_messages(spec: str, binding: "StoreBinding") -> None:
    """The suite can build the store's own message class from a message (what ``--list`` promises
    rests on it): a UsageError saying what the class refused, and what to give it, otherwise."""
    try:
        binding.codec.encode({"role": "user", "content": "a message the suite would append"})
    except Exception as exc:   # noqa: BLE001 (the class's own, whatever it is)
        raise UsageError(
            f"--store {spec!r}: its {binding.append_method} takes {binding.codec.name} messages, which the suite "
            f"builds through the class's constructor with role and content ({', '.join(CONTENT_NAMES)}), and "
            f"{binding.codec.name}(role='user', ...) raised {type(exc).__name__}: {str(exc)[:200]}: give the class "
            "a constructor taking role and content, or name a method taking (session_id, role, content) with "
            "--append-method") from None


@dataclass
class StoreBinding:
    """What the suite learned about a store: how to build it and which methods to call."""

    spec: str
    factory: Callable[..., Any]
    source_file: Path | None
    # canonical name -> the factory's own parameter names: one value may go under two (redisvl's
    # MessageHistory takes the namespace as its name, mapped, and as its prefix, by name)
    parameters: dict[str, tuple[str, ...]]
    takes_var_kwargs: bool
    append_method: str = ""
    load_method: str = ""                # a method, or (a framework's) property read without a call
    # each optional member (contract.OPTIONAL_MEMBERS) by role, the store's own name of it, or None
    members: dict[str, str | None] = field(default_factory=lambda: dict.fromkeys(OPTIONAL_MEMBERS))
    summary_in_window: bool = True       # how the summary of compact counts toward the window (SUMMARY_IN_WINDOW)
    is_async: bool = False
    per_session: bool = False            # built once per session with session_id; methods take no session id
    append_form: AppendForm = AppendForm.ROLE_CONTENT
    codec: MessageCodec = field(default=ROLE_AND_CONTENT)
    framework: str | None = None         # the framework whose interface the store implements
    driver: type | None = None           # what drives each store built, for a framework's store driven from outside
    serial_sessions: str | None = None   # the framework's reason to take one call of a session at a time
    raised_append: str | None = None     # the framework's reason why a failed append's message may stay or go
    history_rule: Any = None             # what the framework gives back of a session by design (HistoryRule)
    unfilled: dict[str, Any] = field(default_factory=dict)   # parameters left at their defaults: name -> default
    # the methods that take the tenant beside the session: member -> where (a position among the call's arguments,
    # or None for a keyword-only parameter) and under which name (.tenant_parameters)
    tenant_arguments: dict[str, tuple[tuple[int | None, str], ...]] = field(default_factory=dict)
    withheld: frozenset[str] = frozenset()   # contract parameters never passed: a client or a URL it refuses together
    language: str = "python"             # what the store is written in (another's: as its program says, .foreign)
    # what its names say it has beside what the suite found (.proposals): each in words, with its option
    proposals: list[BindingProblem] = field(default_factory=list)

    def accepts(self, canonical: str) -> bool:
        return canonical in self.parameters and canonical not in self.withheld

    @property
    def takes_client(self) -> bool:
        """Whether the factory is given the suite's redis client (by name, or through ``**kwargs``);
        else the store builds its own, from ``redis_url``."""
        return self.accepts("redis") or (self.takes_var_kwargs and "redis" not in self.withheld)

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
        values = {canonical: value for canonical, value in values.items() if canonical not in self.withheld}
        named = {own: values[canonical] for canonical, owns in self.parameters.items() for own in owns
                 if canonical in values}   # one left out (a tenant) keeps the factory's default
        if not self.takes_var_kwargs:
            return named
        return {**{k: v for k, v in values.items() if k not in self.parameters}, **named}


def inspect_parameters(spec: str, factory: Any, mapping: dict[str, str] | None = None
                       ) -> tuple[dict[str, tuple[str, ...]], bool, dict[str, Any]]:
    """Map the factory's parameters onto the contract, by name or by ``mapping`` (``--store-params``:
    the factory's own name -> a canonical contract name); reject required ones outside it. Returns
    the map (canonical -> own names: a factory that takes one contract parameter under two names,
    as a namespace mapped to redisvl's ``name`` and its ``prefix`` taken by name, gets the value
    under both), whether it takes ``**kwargs``, and the parameters the suite
    leaves at their defaults (own name -> default): a window or TTL under another name keeps its
    default in every scenario, which :mod:`.observe` looks for."""
    mapping = mapping or {}
    # a program's factory (.foreign) names its parameters as the contract spells them (max_messages); the
    # store's own spelling (maxMessages) is the one its author knows, and the one said here
    spelled: dict[str, str] = getattr(factory, "spelled", None) or {}

    def own(name: str) -> str:
        return spelled.get(name, name)
    camel = " (maxMessages for max_messages: either spelling is taken)" if spelled else ""
    if not callable(factory):
        raise UsageError(f"--store {spec!r} names a {type(factory).__name__}, not a class or factory")
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError) as exc:
        raise UsageError(f"--store {spec!r}: cannot read its signature ({exc})") from None
    parameters: dict[str, tuple[str, ...]] = {}
    unfilled: dict[str, Any] = {}
    problems = Problems(spec)
    var_kwargs = any(p.kind is p.VAR_KEYWORD for p in signature.parameters.values())
    named = [p.name for p in signature.parameters.values() if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]
    absent = [name for name in mapping if name not in named]
    if absent and not var_kwargs:
        problems.found.append(UsageError(
            f"--store-params names {', '.join(map(repr, absent))}, which --store {spec!r} does not "
            f"take: its parameters are {', '.join(map(own, named)) or 'none'}"))
    for name in absent if var_kwargs else ():   # passed by that name through **kwargs
        parameters[mapping[name]] = (*parameters.get(mapping[name], ()), name)
    required = []
    for param in signature.parameters.values():
        if param.kind in (param.VAR_KEYWORD, param.VAR_POSITIONAL):
            continue
        canonical = mapping.get(param.name) or contract_parameter(param.name)
        if canonical is None or param.kind is param.POSITIONAL_ONLY:
            if param.default is param.empty:
                required.append((own(param.name), param.kind is param.POSITIONAL_ONLY))
            else:
                unfilled[own(param.name)] = param.default
            continue
        parameters[canonical] = (*parameters.get(canonical, ()), param.name)   # each gets the value
    for name, positional_only in required:   # a name says which it is; a positional-only one cannot be mapped
        proposed = None if positional_only else contract_parameter_of(name)
        taken = (f" Its name says it is {proposed}: take it with --store-params {name}={proposed}."
                 if proposed else "")
        problems.found.append(BindingProblem(
            f"--store {spec!r} requires a parameter {name!r}, which the contract does not provide.{taken} "
            f"The suite passes, by name{camel}:\n{parameter_table(getattr(factory, 'not_carried', None))}\n"
            f"Give that parameter a default, rename it to one of these, map it with --store-params {name}=NAME, "
            "or wrap the store in a factory function.", ("store_params", f"{name}={proposed}") if proposed else None))
    problems.raise_any()
    return parameters, var_kwargs, unfilled


def proposals_for(binding: "StoreBinding", target: Any, taken: frozenset[str]) -> list[BindingProblem]:
    """What the store's names say it has beside what the binding found: parameters left at their defaults
    whose names and defaults say which contract parameter they are (``token_budget=8000``: the token
    budget), and a clear method of its own name (``forget``); each in words, with the option that takes it."""
    found, mapped = [], set()
    for name, default in binding.unfilled.items():
        canonical = contract_parameter_of(name, default)
        if canonical is not None and not binding.accepts(canonical) and canonical not in mapped:
            mapped.add(canonical)
            found.append(BindingProblem(
                f"its parameter {name}={default!r:.40}, which the suite leaves at its default, looks like the "
                f"contract's {canonical}: take it with --store-params {name}={canonical}",
                ("store_params", f"{name}={canonical}")))
    session = () if binding.per_session else ("session_id",)
    if target is not None and not binding.framework and binding.members["clear"] is None:
        own = method_for("clear", target, taken, lambda name: _callable_as(target, name, session))
        if own:
            found.append(BindingProblem(f"its method {own}{_signature_text(target, own)} looks like a clear: take it "
                                        f"with --clear-method {own}", ("clear_method", own)))
    return found


def bind_store(spec: str, factory: Any, source_file: Path | None,
               method_overrides: dict[str, str | None],
               build_probe: Callable[["StoreBinding"], Any], mapping: dict[str, str] | None = None,
               ungiven: dict[str, str] | None = None) -> StoreBinding:
    """Inspect a factory: its parameters (``mapping``: ``--store-params``), then its methods (on the
    class, or on a probe instance). Every problem found is said at once (:class:`BindingError`), each
    with the option that fixes it where the store's names tell. ``ungiven``: the contract parameters
    this run does not give (its option was left out), each with the option that gives it: a factory
    that requires one is a usage error saying so."""
    own = framework_of(factory)
    if own is not None and own.constructor is not None:   # the framework's own class, built from the contract's
        factory = own.constructor(factory)
    problems = Problems(spec)
    found = problems.check(inspect_parameters, spec, factory, mapping)
    target = _declared_target(factory)
    if found is None and target is None:   # no store can be built to inspect until its parameters are right
        problems.raise_any()
    parameters, var_kwargs, unfilled = found or ({}, False, {})
    problems.found += _required_ungiven(spec, factory, parameters, ungiven or {})
    if problems.found and target is None:   # no store can be built to inspect without them
        problems.raise_any()
    # a per-session store: one that takes session_id, or whose parameter a proposal maps onto it
    per_session = "session_id" in parameters or any(
        mapping.endswith("=session_id") for mapping in fixes_of(problems.found).get("store_params", "").split(","))
    binding = StoreBinding(spec=spec, factory=factory, source_file=source_file, parameters=parameters,
                           takes_var_kwargs=var_kwargs, per_session=per_session, unfilled=unfilled)
    program = getattr(factory, "program", None)
    if isinstance(program, Program):   # the factory that stands for a program: what it says it is (.foreign)
        binding.language, binding.framework = program.language, program.framework
    target = target if target is not None else _probe(spec, binding, build_probe)
    taken = frozenset(filter(None, method_overrides.values()))
    target = _bind_members(binding, target, method_overrides, problems, taken)
    _check_shapes(binding, target, problems)
    binding.proposals = proposals_for(binding, target, taken)   # the probe is closed by who built it
    problems.raise_any(binding.proposals)
    return binding


def _declared_target(factory: Any) -> type | None:
    """The class the factory builds, where it says so (a class, or a return annotation); else None."""
    if inspect.isclass(factory):
        return factory
    returned = inspect.signature(factory).return_annotation
    return returned if inspect.isclass(returned) and returned is not inspect.Signature.empty else None


def _required_ungiven(spec: str, factory: Any, parameters: dict[str, tuple[str, ...]],
                      ungiven: dict[str, str]) -> list[UsageError]:
    """A usage error for each parameter the factory requires that the run does not give (``ungiven``)."""
    signature = inspect.signature(factory).parameters
    return [UsageError(f"--store {spec!r} requires {name!r}, the contract's {canonical}, which this run does not "
                       f"give: give it with {option}")
            for canonical, option in ungiven.items() for name in parameters.get(canonical, ())
            if signature[name].default is inspect.Parameter.empty]


def _probe(spec: str, binding: StoreBinding, build_probe: Callable[[StoreBinding], Any]) -> Any:
    """A store built only to look at its methods; what building it raised, a usage error."""
    try:
        return build_probe(binding)
    except (KeyboardInterrupt, UsageError):   # a UsageError says already what to fix
        raise
    except BaseException as exc:  # SystemExit included
        raise UsageError(f"--store {spec!r}: the factory raised while building a store to inspect:\n"
                         f"{user_traceback(exc)}") from None


def _bind_members(binding: StoreBinding, target: Any, method_overrides: dict[str, str | None], problems: Problems,
                  taken: frozenset[str]) -> Any:
    """The store's append, load and optional members, found by name or given (a framework's are its
    own), and how append takes a message; returns what the suite calls them on (the store, or the
    class that drives a framework's)."""
    session = () if binding.per_session else ("session_id",)
    framework = framework_of(target if inspect.isclass(target) else type(target))
    if framework is not None:
        target = _bind_framework(binding, framework, target, method_overrides)
    else:
        binding.append_method = problems.check(
            _find_method, target, method_overrides.get("append"), APPEND_METHODS, "append", True, taken=taken,
            accepts=lambda name: any(_callable_as(target, name, session + message)
                                     for message in (("role", "content"), ("message",))))
        binding.load_method = problems.check(
            _find_method, target, method_overrides.get("load"), LOAD_METHODS, "load", True, taken=taken,
            accepts=lambda name: _callable_as(target, name, session))
        if binding.append_method:
            binding.append_form, binding.codec = _append_form(target, binding.append_method, binding.per_session)
            if binding.codec not in (ROLE_AND_CONTENT, DICTS):
                problems.check(_builds_messages, binding.spec, binding)
    for role, member in OPTIONAL_MEMBERS.items():   # a framework's clear is its own
        binding.members[role] = binding.members[role] or problems.check(
            _find_method, target, method_overrides.get(role), member.names, role, False)
    binding.summary_in_window = bool(getattr(target, SUMMARY_IN_WINDOW, True))
    names = [n for n in (binding.append_method, binding.load_method, *binding.members.values()) if n]
    binding.is_async = any(inspect.iscoroutinefunction(getattr(target, n, None)) for n in names)
    return target


def _check_shapes(binding: StoreBinding, target: Any, problems: Problems) -> None:
    """Each member the suite will call can be called as it will be, and takes a tenant where it does."""
    session = () if binding.per_session else ("session_id",)
    message = {AppendForm.ROLE_CONTENT: ("role", "content"), AppendForm.MESSAGE: ("message",),
               AppendForm.MESSAGES: ("messages",)}[binding.append_form]
    shapes = [(binding.append_method, "append", session + message)]
    if not binding.framework:   # a framework's load may be a property, or a field of each instance
        shapes.append((binding.load_method, "load", session))
    shapes += [(name, role, session) for role, name in binding.members.items()]
    for name, role, arguments in shapes:
        if name:
            problems.check(_check_call_shape, binding.spec, target, name, role, arguments)
            if not binding.framework and tenant_parameters(target, name):
                binding.tenant_arguments[name] = tenant_parameters(target, name)


def _callable_as(target: Any, name: str, arguments: tuple[str, ...]) -> bool:
    """Whether ``target.name`` takes ``arguments`` positionally and needs no others."""
    params = _call_parameters(target, name)
    try:
        return params is not None and bool(inspect.Signature(params).bind(*arguments))
    except TypeError:
        return False


def _bind_framework(binding: StoreBinding, framework: Any, target: Any,
                    method_overrides: dict[str, str | None]) -> Any:
    """A framework's store: its own methods and message objects. Returns what the suite calls the
    members of: the store, or the class that drives it."""
    if framework.per_session and not binding.per_session:
        raise UsageError(f"--store {binding.spec!r} is a {framework.name}, which holds one session: its "
                         "factory must take session_id (the suite builds one per session)")
    cls = target if inspect.isclass(target) else type(target)
    if framework.driver is not None:
        binding.driver = target = cls = framework.driver(target)
    methods = framework.methods(cls)
    binding.append_method = method_overrides.get("append") or methods.append
    binding.load_method = method_overrides.get("load") or methods.load
    binding.members["clear"] = method_overrides.get("clear") or methods.clear
    binding.append_form = AppendForm.MESSAGES if methods.append_takes_list else AppendForm.MESSAGE
    binding.codec = MessageCodec(f"{framework.name} messages", framework.encode, framework.decode, True)
    binding.framework = framework.name
    binding.serial_sessions = framework.serial_sessions
    binding.raised_append = framework.raised_append
    binding.history_rule = framework.history_rule
    return target


def _declared_parameters(target: Any, name: str) -> list[inspect.Parameter] | None:
    """The parameters of ``target.name`` (without self), or None if unreadable."""
    try:
        params = list(inspect.signature(getattr(target, name)).parameters.values())
    except (TypeError, ValueError):
        return None
    if inspect.isclass(target) and params and not isinstance(inspect.getattr_static(target, name),
                                                             (staticmethod, classmethod)):
        params = params[1:]  # self
    return params


def _is_tenant(index: int, param: inspect.Parameter) -> bool:
    """A parameter beyond a method's first, without a default, named as the contract's tenant (``user_id`` or
    an alias): the suite passes the tenant there (the first is the session, or what a store per session
    takes first)."""
    return (index > 0 and param.default is inspect.Parameter.empty and contract_parameter(param.name) == "user_id"
            and param.kind not in (param.VAR_POSITIONAL, param.VAR_KEYWORD))


def tenant_parameters(target: Any, name: str) -> tuple[tuple[int | None, str], ...]:
    """Where ``target.name`` takes the tenant (:func:`_is_tenant`): each parameter's position among the call's
    arguments (None for a keyword-only one) and its name."""
    params = _declared_parameters(target, name) or []
    return tuple((None if param.kind is param.KEYWORD_ONLY else index, param.name)
                 for index, param in enumerate(params) if _is_tenant(index, param))


def _call_parameters(target: Any, name: str) -> list[inspect.Parameter] | None:
    """The parameters a call of ``target.name`` fills (without self, and without the tenant, which the suite
    passes where it goes), or None if unreadable."""
    params = _declared_parameters(target, name)
    return None if params is None else [param for index, param in enumerate(params) if not _is_tenant(index, param)]


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


def _is_property(target: Any, name: str) -> bool:
    """Whether ``name`` is a property of the store's class (``target``: the class, or an instance)."""
    cls = target if inspect.isclass(target) else type(target)
    return isinstance(inspect.getattr_static(cls, name, None), property)


def _check_call_shape(spec: str, target: Any, name: str, role: str, arguments: tuple[str, ...]) -> None:
    """The method must accept ``arguments`` positionally and need no others; a load named with
    --load-method may be a property, read as the store's history, where it is given nothing: on a
    store built per session (redisvl's ``MessageHistory.messages``)."""
    if _is_property(target, name) and role == "load":
        if arguments:
            raise UsageError(f"--store {spec!r}: {name} is a property, which cannot be given the session id: name a "
                             "method with --load-method, or build one store per session (a factory taking session_id, "
                             "or --store-params NAME=session_id)")
        return
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
