"""The ``[tool.memory-regression]`` table of a project's ``pyproject.toml``: the runner's options kept
with the project, as pytest and ruff keep theirs, so that a run, the action and a teammate's laptop need
no flags.

Its keys are the options' flags without their dashes, as the action's inputs name them (``store``,
``window-sizes``, ``store-params``, ``append-method``...); their values TOML's own types where one fits
(``window-sizes = [5, 20]``, ``strict = true``, ``store-params = {token_budget = "max_tokens"}``) or the
text the flag takes. The table of the working directory's ``pyproject.toml`` is read; a flag on the
command line, and an action's input, win over it. A key the tool does not know, or a value of a type
it cannot take, is a usage error naming it. ``--list`` prints the table for what it was given and what
the store's names say (:func:`render`), to paste.
"""

from __future__ import annotations

import difflib
import json
import tomllib
from pathlib import Path
from typing import Any, Iterable

from ..errors import UsageError
from ..settings import parse_store_params

TABLE = "memory-regression"
FILE = "pyproject.toml"
NOT_KEPT = ("working-directory",)   # the table is read from there: it cannot say where to run


def _keys(options: Iterable[Any]) -> dict[str, Any]:
    return {option.flag.lstrip("-"): option for option in options if option.flag.lstrip("-") not in NOT_KEPT}


def read(directory: Path, options: Iterable[Any]) -> dict[str, Any]:
    """The table of ``directory``'s pyproject.toml as option values by key (``window_sizes``: ``"5,20"``,
    a switch's: True or False); empty without the file or the table."""
    path = directory / FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot be read ({exc})") from None
    try:
        table = tomllib.loads(text).get("tool", {}).get(TABLE)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{path}: not TOML ({exc})") from None
    if table is None:
        return {}
    where = f"{path}, [tool.{TABLE}]"
    if not isinstance(table, dict):
        raise UsageError(f"{where}: a table of options is expected, not a {type(table).__name__}")
    known = _keys(options)
    values: dict[str, Any] = {}
    for key, value in table.items():
        option = known.get(key)
        if option is None:
            close = difflib.get_close_matches(key, known, n=1)
            hint = f"; did you mean {close[0]}?" if close else f"; the keys are the options' names: {', '.join(known)}"
            raise UsageError(f"{where}: unknown key {key!r}{hint}")
        values[option.key] = _value(f"{where}: {key}", value, option.is_switch)
    return values


def _value(where: str, value: Any, is_switch: bool) -> Any:
    """A TOML value as the option takes it: a switch's as a bool, the rest as the flag's text."""
    if is_switch:
        if not isinstance(value, bool):
            raise UsageError(f"{where} = {value!r}: give true or false")
        return value
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (str, int, float)):
        return str(value)
    if isinstance(value, list) and value and all(isinstance(item, (str, int)) and not isinstance(item, bool)
                                                 for item in value):
        return ",".join(map(str, value))
    if isinstance(value, dict) and value and all(isinstance(item, str) for item in value.values()):
        return ",".join(f"{name}={item}" for name, item in value.items())
    raise UsageError(f"{where} = {value!r}: give a string, a number, a list of them, or (store-params) a table of "
                     "strings")


def render(values: dict[str, Any], options: Iterable[Any], fixes: dict[str, str]) -> str:
    """The table for ``values`` (the options as the run was given them) with ``fixes`` (option key ->
    value, the binding's) applied: every option that differs from its default, in the options' order."""
    lines = [f"[tool.{TABLE}]"]
    for key, option in _keys(options).items():
        value = values.get(option.key)
        if option.key == "store_params" and option.key in fixes:   # a parameter given keeps its mapping
            given = parse_store_params(value)
            value = _joined({**given, **{name: canonical for name, canonical in
                                         parse_store_params(fixes[option.key]).items() if name not in given}})
        elif option.key in fixes:
            value = fixes[option.key]
        if value in (None, "", False) or (not option.is_switch and str(value) == str(option.default)):
            continue
        lines.append(f"{key} = {_toml(key, value)}")
    return "\n".join(lines)


def _joined(mapping: dict[str, str]) -> str:
    return ",".join(f"{name}={canonical}" for name, canonical in mapping.items())


def _toml(key: str, value: Any) -> str:
    if value is True:
        return "true"
    if key == "store-params":
        return "{" + ", ".join(f"{json.dumps(name)} = {json.dumps(canonical)}"
                               for name, canonical in parse_store_params(value).items()) + "}"
    if key == "window-sizes" and all(part.strip().isdigit() for part in str(value).split(",")):
        return "[" + ", ".join(part.strip() for part in str(value).split(",")) + "]"
    return json.dumps(str(value), ensure_ascii=False)
