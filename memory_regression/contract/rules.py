"""The store contract: how the suite finds, builds and talks to a user's MemoryStore.

This is the one place that defines what a store may look like. Users and this
project's own checks depend on it, so keep it stable:

* ``--store SPEC`` is ``path/to/file.py:NAME`` (relative to the working
  directory) or ``package.module:NAME`` importable from it.
* NAME is a class or a factory, called afresh for every scenario with keyword
  arguments chosen by parameter name from :data:`STORE_PARAMETERS`. A factory
  that takes ``session_id`` builds one object per session, whose methods then
  take no session id.
* Methods are found by name (:data:`APPEND_METHODS`, :data:`LOAD_METHODS`, and the optional
  members of :data:`OPTIONAL_MEMBERS`, each of which brings a capability), plain or ``async
  def``. Append takes ``(role, content)``, one whole message, or a list of them
  (:class:`AppendForm`); a whole message is built as the append parameter's
  annotated class, else as a dict. A compacting store takes the suite's
  ``summarize`` and says with :data:`SUMMARY_IN_WINDOW` how its summary counts
  toward its window.
* Stores of a known framework (one module each in :mod:`..frameworks`, registered there) are
  recognised by their base class and driven as the framework drives them.

Here are the rules; the machinery builds on them: :mod:`.loader` finds and imports what ``--store``
names, :mod:`.binding` binds it to these rules, :mod:`.adapter` calls it.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import textwrap
from dataclasses import dataclass
from enum import Enum
from typing import Any, Callable

from ..frameworks import registered


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
    "user_id": (("user", "tenant_id", "tenant", "owner_id"),
                "the tenant (a user, an app, an agent) whose sessions the instance keeps: the same session id "
                "under two of them is two conversations; left out, where the factory has a default for it, as a "
                "store used without tenants"),
    "max_messages": (("max_history", "window", "window_size"), "the count window N"),
    "max_tokens": (("token_limit", "max_token_limit"), "the model profile's token budget"),
    "count_tokens": (("token_counter",),
                     "callable(str) -> int: the cost of one message with that content, "
                     "per-message overhead included"),
    "ttl": (("ttl_seconds", "expire"), "seconds"),
    "profile": ((), "the model profile (memory_regression.contract.profiles.ModelProfile)"),
    "summarize": (("summarizer",),
                  "callable(list of role/content dicts) -> str: the summary compact writes, deterministic, "
                  "calling no model; its text names the messages it was given"),
    "service_url": (("base_url", "server_url"),
                    "the URL of the service the store calls, for a store that is a client of a memory service "
                    "(--service-url: given only when the run names one)"),
    "data_dir": (("directory", "tmp_dir"),
                 "a directory of the scenario's own for the store's files (a second backend's, as a SQLite "
                 "file), empty at first and removed when the scenario ends"),
}

APPEND_METHODS = ("append", "add_message", "append_message", "add", "save_message", "save", "add_items",
                  "add_messages")
LOAD_METHODS = ("get", "get_context", "get_history", "get_messages", "load", "get_items")
# a compacting store's class attribute: whether its summary counts toward its window (as one message,
# or its tokens, trimmed like any other once it is the oldest), else it stays first, outside the window
SUMMARY_IN_WINDOW = "summary_in_window"


@dataclass(frozen=True)
class Member:
    """An optional member of a store, which brings a capability (:mod:`.capabilities`): found by one of
    ``names``, called as ``call`` says (after the session id a per-session store's members lack)."""

    role: str                   # the suite's name for it: --{role}-method, StoreBinding.members[role]
    names: tuple[str, ...]
    call: str                   # its call shape, as --help and the skip reasons word it
    help: str                   # what it must do, for --help
    lacks: str = ""             # what a skip reason adds after "it has no ... method"


OPTIONAL_MEMBERS: dict[str, Member] = {member.role: member for member in (
    Member("clear", ("clear", "delete", "clear_session", "delete_messages", "reset"), "(session_id)",
           "empties that session, and no other"),
    Member("compact", ("compact",), "(session_id)",
           "with summarize: the oldest messages become one message holding summarize(those messages),\n"
           f"    first; a class attribute {SUMMARY_IN_WINDOW} = False keeps it outside the window (default True:\n"
           "    it counts toward it)"),
    Member("consistency", ("consistent_state",), "(session_id) -> bool",
           "True once every backend the store writes (Redis, a mirror) agrees on the session",
           lacks=" (session_id) -> bool saying whether every backend it writes agrees"),
)}


def or_list(names: tuple[str, ...]) -> str:
    """``a, b or c``."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"
LIST_APPEND_METHODS = ("add_items", "add_messages")   # found by name, these take a list of messages
MESSAGE_PARAMETERS = ("message", "msg", "item", "entry")   # a parameter of these names takes a whole message
# keys of a whole message, beside role and content, that the suite appends and compares
MESSAGE_FIELDS = ("tool_calls", "tool_call_id", "name", "metadata")

def _canonical_arguments(call: Any) -> Any:
    """A tool call whose ``function.arguments`` (a JSON text) is written the one way json.dumps writes it:
    the same arguments with other whitespace (JavaScript's JSON.stringify writes none) are the same call."""
    function = call.get("function") if isinstance(call, dict) else None
    if not isinstance(function, dict) or not isinstance(function.get("arguments"), str):
        return call
    try:
        arguments = json.dumps(json.loads(function["arguments"]), ensure_ascii=False)
    except ValueError:
        return call
    return {**call, "function": {**function, "arguments": arguments}}


# LangChain-style message types and the roles they stand for
_TYPE_TO_ROLE = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool",
                 "function": "function", "chat": "user"}


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
        if isinstance(present.get("tool_calls"), list):
            present["tool_calls"] = [_canonical_arguments(call) for call in present["tool_calls"]]
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


def parameter_table(not_carried: dict[str, str] | None = None) -> str:
    """The contract's parameter table as text, for error messages; ``not_carried``: the parameters a
    store in another language cannot be given, and what it takes instead."""
    rows = []
    for name, (aliases, meaning) in STORE_PARAMETERS.items():
        also = f" (also {', '.join(aliases)})" if aliases else ""
        instead = (not_carried or {}).get(name)
        rows.append(f"  {name}{also}: " + (f"not to a store in another language: {instead}" if instead else meaning))
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
            + "".join(f"  {member.role} {member.call}, optional: {', '.join(member.names)}:\n    {member.help}\n"
                      for member in OPTIONAL_MEMBERS.values())
            + textwrap.fill("Stores of these frameworks run as they are, driven as the framework drives them: "
                            + ", ".join(framework.name for framework in registered()) + ".", width=95))


def contract_parameter(name: str) -> str | None:
    """The canonical contract parameter ``name`` is, or is an alias of; None if neither."""
    for canonical, (aliases, _meaning) in STORE_PARAMETERS.items():
        if name in (canonical, *aliases):
            return canonical
    return None


def role_text(role: Any) -> str:
    """A role as the suite compares it: an enum's value (llama-index's ``MessageRole.USER`` is
    ``'user'``, which ``str()`` would make ``'MessageRole.USER'``), anything else as text."""
    return content_text(role.value if isinstance(role, Enum) else role)


def content_text(content: Any) -> str:
    """Content as text: a string as it is; a list of text blocks (strings, or ``{"type": "text",
    "text": ...}`` as LangChain and the OpenAI APIs write them) joined; anything else as ``str()``.
    Always a plain ``str``: a subclass of the store's goes no further than here, so none of its
    methods runs in the suite's own code (where what it raised would not be the store's)."""
    if isinstance(content, list) and all(
            isinstance(block, str) or (isinstance(block, dict) and block.get("type") == "text"
                                       and isinstance(block.get("text"), str)) for block in content):
        content = "".join(block if isinstance(block, str) else block["text"] for block in content)
    return str.__str__(content if isinstance(content, str) else str(content))


def normalize_history(raw: Any, fields: bool = False) -> list[Message]:
    """Turn what a load method returned into messages, oldest first.

    Accepts dicts with role/content, objects with .role/.content (or .text, .contents, .parts), and LangChain-style
    objects or dicts with .type (human/ai/system) in place of role; roles may be enums, and content
    a list of text blocks. With ``fields`` (a store that takes whole messages), the keys of
    :data:`MESSAGE_FIELDS` are read too, and a message with tool calls may have no content.
    """
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
        if content is None:   # a message class that names it otherwise (CONTENT_NAMES of .binding)
            content = next((get(name) for name in ("text", "contents", "parts") if get(name) is not None), None)
        if content is None and extra.get("tool_calls"):
            content = ""
        if role is None or content is None:
            raise AssertionError(
                f"load returned item {index} without role and content: {item!r:.200}")
        messages.append(Message.of(role_text(role), content_text(content), **extra))
    return messages


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
