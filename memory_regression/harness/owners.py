"""Writing a scenario's turns under many owners (session ids, tenants' sessions) and telling which of
their histories a store mixed up: what the identity scenarios (suite/test_identity.py) are made of."""

from __future__ import annotations

import functools
from typing import Any, Callable

from ..contract.capabilities import Guarantee
from ..contract.rules import Message
from ..reference.diagnosis import HistoryMismatch, assert_history
from .findings import Findings
from ..contract.frames import exception_line
from ..reference.identities import (PLAIN_LABELS, SESSION_IDS, UNKNOWN_ID, UNKNOWN_TENANT, id_cause, id_name, labelled,
    mixed_pairs, mixed_up, tenant_cause, tenant_name)

TURNS = 2


def turns(label: str) -> list[Message]:
    """What is appended under one id: a user turn and a reply, each naming the id's label."""
    return [Message("user" if turn % 2 == 0 else "assistant", f"{label}: turn {turn + 1}") for turn in range(TURNS)]


def id_mix(appended: dict, loaded: dict) -> tuple[Any, str] | None:
    """:func:`mixed_up` of session ids, the ids the store kept apart and the pairs it mixed up its evidence."""
    apart = [sid for sid in appended if loaded.get(sid) == appended[sid]]
    return mixed_up(appended, loaded, id_name,
                    functools.partial(id_cause, apart=apart, mixed=mixed_pairs(appended, loaded)), UNKNOWN_ID)


def tenant_mix(appended: dict, loaded: dict) -> tuple[Any, str] | None:
    """:func:`mixed_up` of (user, session) pairs."""
    return mixed_up(appended, loaded, tenant_name, tenant_cause, UNKNOWN_TENANT)


def write_turns(owners: dict, add: Callable, load: Callable, mix: Callable, name: Callable,
                may_refuse: Callable[[str, int], bool] = lambda label, turn: False) -> tuple[dict, dict]:
    """Append :func:`turns` under each owner (owner -> label), interleaved turn by turn, with
    ``add(owner, message)``, which returns the message as the store should give it back. An owner
    whose append of ``turn`` raises is refused (its exception, as text) where ``may_refuse(label,
    turn)``, else the scenario fails, with what the loads show of it (:func:`raised_after`).
    Returns (appended per owner taken, refused)."""
    appended = {owner: [] for owner in owners}
    refused: dict = {}
    for turn in range(TURNS):
        for owner, label in owners.items():
            if owner in refused:
                continue
            message = turns(label)[turn]
            try:
                given_back = add(owner, message)   # as a correct store of its shape gives it back
            except Exception as exc:
                if may_refuse(label, turn):
                    refused[owner] = raised_text(exc)
                    continue
                written = {other: messages for other, messages in appended.items() if messages}
                raised_after(exc, f"append {turn + 1} under {name(owner)}", written, load, mix)
            appended[owner].append(given_back)
    return {owner: messages for owner, messages in appended.items() if owner not in refused}, refused


def raised_text(exc: Exception) -> str:
    """``ExceptionName: its message``, at most 200 characters; a message the store's exception cannot give
    (its ``__str__`` raising) is said so, as the traceback module says it, and runs none of its code again."""
    message = exception_line(exc).partition(": ")[2]
    return f"{type(exc).__name__}: {message}"[:200] if message else type(exc).__name__


def raised_after(exc: Exception, call: str, appended: dict, load: Callable, mix: Callable) -> None:
    """Raise for ``call``, which raised ``exc`` after the appends of ``appended`` returned: where loading
    them shows a history mixed up with another (:func:`mixed_up`, by ``mix``), a failure saying both,
    else ``exc`` itself."""
    try:
        loaded = {owner: load(owner) for owner in appended}
    except Exception:
        raise exc from None
    found = mix(appended, loaded)
    if found is None:
        raise exc
    owner, text = found
    raise HistoryMismatch(f"{call} raised {raised_text(exc).rstrip('.')}, after the appends before it returned; {text}",
                          appended[owner], loaded[owner]) from exc


def ids_written(store: Any, findings: Findings) -> tuple[dict, dict]:
    """Every id of SESSION_IDS written with its turns, those refused warned of; returns (appended, loaded)."""
    owners = {sid: label for label, sid in SESSION_IDS}
    appended, refused = write_turns(owners, store.add, store.load, id_mix, id_name,
                                    may_refuse=lambda label, turn: turn == 0 and label not in PLAIN_LABELS)
    if refused:
        first = next(iter(refused))
        findings.warn(Guarantee.ANY_SESSION_ID,
                      f"the store refused {len(refused)} of the {len(SESSION_IDS)} session ids at their first append: "
                      f"{labelled(list(refused))}; the first raised {refused[first]}")
    return appended, {sid: store.load(sid) for sid in appended}


def assert_own_histories(appended: dict, loaded: dict, mix: Callable, name: Callable) -> None:
    """Each owner loads exactly what was appended under it: the first that does not fails, named with
    the owner whose messages it holds or lost, where one does (``mix``: :func:`mixed_up`)."""
    found = mix(appended, loaded)
    if found:
        owner, text = found
        raise HistoryMismatch(text, appended[owner], loaded[owner])
    for owner, messages in appended.items():
        assert_history(messages, loaded[owner], messages, context=f"{name(owner)}: ")
