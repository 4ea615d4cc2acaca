"""Clearing one session beside many others (suite/test_identity.py's clearing scenario): which other
histories a clear reached, and why, where the ids show it. A clear only deletes: a history that lost
messages was reached by it; one that changed otherwise was not, and is left out of the judging."""

from __future__ import annotations

from typing import Any

from .diagnosis import HistoryMismatch
from .identities import PLAIN_LABELS, SESSION_IDS, id_name, key_causes, labelled, pattern_cause, said


def removed_from(messages: list, history: list) -> bool:
    """Whether ``history`` is ``messages`` with some removed, the rest in order: what a clear can do to it."""
    rest = iter(messages)
    return len(history) < len(messages) and all(message in rest for message in history)


def clear_cause(cleared: str, damaged: list[str], others: int) -> str:
    """Why clearing ``cleared`` reached the histories of ``damaged``, of ``others`` other ids that append
    and load keep apart, where the ids show it."""
    if len(damaged) == others:
        return (f"it reached every other session (all {others}): clear empties more than the session it is given "
                "(every session of the store, of its namespace or of its search index)")
    patterns = [pattern_cause(cleared, other) for other in damaged]
    if all(patterns):
        return patterns[0]
    causes = [cause for cause in key_causes(cleared, damaged[0]) if all(cause in key_causes(cleared, other)
                                                                         for other in damaged)]
    if causes:
        return said(causes, "the id is changed where clear builds its keys, and not where append and load do")
    return ("how, the ids do not show (possible causes: clear deletes by a pattern, or a key the sessions share, as "
            "an index of sessions)")


def clear_each(store: Any, apart: list[str], appended: dict[str, list]) -> tuple[list[str], list[str]]:
    """Clear each id of ``apart`` in turn beside all the others, then write it again: it must load empty,
    and every other must keep its whole history (HistoryMismatch otherwise, naming what the clear
    reached and why). Returns the ids still judged at the end, and those left out because their
    history changed as no clear changes one (written again, or beside another's clear)."""
    judged, strayed = list(apart), []
    for sid in apart:
        if sid not in judged:
            continue
        store.clear(sid)
        remaining = store.load(sid)
        if remaining:
            raise HistoryMismatch(f"clear({id_name(sid)}) returned, and the session still loads {len(remaining)} "
                                  "messages: clear finds this id's keys otherwise than append and load do (possible "
                                  "causes: it changes or escapes the id on its own path, or looks the session up "
                                  "through a search index whose query does not match this id)", [], remaining)
        changed = {other: history for other in judged if other != sid
                   for history in [store.load(other)] if history != appended[other]}
        damaged = {other: history for other, history in changed.items() if removed_from(appended[other], history)}
        if damaged:
            raise _reached(sid, damaged, appended, len(judged) - 1)
        store.append_all(sid, appended[sid])   # written again: each clear runs beside every other id
        strayed += [*changed, *([sid] if store.load(sid) != appended[sid] else [])]
        judged = [other for other in judged if other not in strayed]
    return judged, strayed


def _reached(sid: str, damaged: dict[str, list], appended: dict[str, list], others: int) -> HistoryMismatch:
    first, history = next(iter(damaged.items()))
    what = ("deleted" if not history else
            f"deleted {len(appended[first]) - len(history)} of the {len(appended[first])} messages of")
    listed = labelled(list(damaged)[1:4]) + (", ..." if len(damaged) > 4 else "")
    more = f" and {len(damaged) - 1} more ({listed})" if len(damaged) > 1 else ""
    return HistoryMismatch(f"clear({id_name(sid)}) {what} {id_name(first)}{more}: "
                           f"{clear_cause(sid, list(damaged), others)}", appended[first], history)


def keys_left(left: dict[str, list[str]]) -> tuple[str | None, str | None]:
    """What the keys each id's appends made, left after its clear (``left``), say: (a note, a failure).
    A plain id's left too is test_clear_leaves_no_keys's to judge; only unusual ids' is a failure here."""
    leaving = [sid for sid, keys in left.items() if keys]
    plain = [sid for label, sid in SESSION_IDS if label in PLAIN_LABELS and sid in leaving]
    if plain:
        return (f"clear leaves keys of plain ids too ({', '.join(left[plain[0]])[:300]}): test_clear_leaves_no_keys "
                "judges that"), None
    if leaving:
        return None, (f"clear left keys of its own for {len(leaving)} of the ids, where a plain id's clear leaves "
                      f"none: {labelled(leaving[:6])}{', ...' if len(leaving) > 6 else ''}; the first's: "
                      f"{', '.join(left[leaving[0]])[:300]}: clear builds "
                      "those keys otherwise than append does for ids of that shape")
    return None, None
