"""Identity and neighbours: session ids as applications make them, tenants, and a database shared
with others.

Real ids are UUIDs, emails, numbers, names typed in any case and spacing, Unicode, URLs, JWT subjects
and a kilobyte of text; a framework keys a conversation by user and session together; and the
store's Redis holds a cache, a queue and other services' keys beside it. A store that builds its keys
carelessly mixes two users' conversations, or loses one, and nothing errors; one that walks the
keyspace works on an empty database and falls over beside millions of keys. Every id of
``SESSION_IDS`` (in ``memory_regression/identities.py``) must keep exactly its own history. A store
may refuse an id it does not support by raising at its first append: that is a warning
(any-session-id), naming the ids, not a failure; the ids every store must take are the plain ones
(a UUID, a number, a name, ``s2``, ``alice2``). A failure names the two ids mixed up, and how their
keys became one where the ids show it ("it is folded to one letter case"); where they fit several
causes it lists them.
"""

from __future__ import annotations

import functools
import statistics
import time

import pytest

from memory_regression.capabilities import Capability, Guarantee
from memory_regression.contract import Message
from memory_regression.diagnosis import HistoryMismatch, assert_history
from memory_regression.growth import timed
from memory_regression.identities import (NO_USER, PLAIN_LABELS, SESSION_IDS, TENANT_PAIRS, UNKNOWN_ID,
                                          UNKNOWN_TENANT, id_cause, id_name, key_causes, labelled, mixed_pairs,
                                          mixed_up, pattern_cause, said, tenant_cause, tenant_name)
from memory_regression.neighbours import SharedDatabase, walked

TURNS = 2


def ids(count: int) -> str:
    return f"{count} id{'' if count == 1 else 's'}"


def turns(label: str) -> list[Message]:
    """What is appended under one id: a user turn and a reply, each naming the id's label."""
    return [Message("user" if turn % 2 == 0 else "assistant", f"{label}: turn {turn + 1}") for turn in range(TURNS)]


def id_mix(appended: dict, loaded: dict):
    """:func:`mixed_up` of session ids, the ids the store kept apart and the pairs it mixed up its evidence."""
    apart = [sid for sid in appended if loaded.get(sid) == appended[sid]]
    return mixed_up(appended, loaded, id_name,
                    functools.partial(id_cause, apart=apart, mixed=mixed_pairs(appended, loaded)), UNKNOWN_ID)


def tenant_mix(appended: dict, loaded: dict):
    """:func:`mixed_up` of (user, session) pairs."""
    return mixed_up(appended, loaded, tenant_name, tenant_cause, UNKNOWN_TENANT)


def write_turns(owners: dict, add, load, mix, name, may_refuse=lambda label, turn: False) -> tuple[dict, dict]:
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
                    refused[owner] = f"{type(exc).__name__}: {exc}"[:200]
                    continue
                written = {other: messages for other, messages in appended.items() if messages}
                raised_after(exc, f"append {turn + 1} under {name(owner)}", written, load, mix)
            appended[owner].append(given_back)
    return {owner: messages for owner, messages in appended.items() if owner not in refused}, refused


def raised_after(exc: Exception, call: str, appended: dict, load, mix) -> None:
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
    raised = f"{type(exc).__name__}: {str(exc)[:200].rstrip('.')}"
    raise HistoryMismatch(f"{call} raised {raised}, after the appends before it returned; {text}", appended[owner],
                          loaded[owner]) from exc


def ids_written(store, findings) -> tuple[dict, dict]:
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


def assert_own_histories(appended: dict, loaded: dict, mix, name) -> None:
    """Each owner loads exactly what was appended under it: the first that does not fails, named with
    the owner whose messages it holds or lost, where one does (``mix``: :func:`mixed_up`)."""
    found = mix(appended, loaded)
    if found:
        owner, text = found
        raise HistoryMismatch(text, appended[owner], loaded[owner])
    for owner, messages in appended.items():
        assert_history(messages, loaded[owner], messages, context=f"{name(owner)}: ")


@pytest.mark.guarantees("any-session-id")
def test_every_session_id_keeps_its_own_history(stores, findings):
    """Two turns are appended under every id of SESSION_IDS, interleaved (UUIDs, emails and numbers,
    names in three letter cases and with spaces around, inside and left out, composed and decomposed
    Unicode, full-width letters, two ids of a kilobyte that differ in their last character, ids that
    are prefixes of others, ``* ? [ ] \\`` of Redis patterns, ``{ }`` of hash tags, the separators
    ``: | /``, a JWT subject, a URL); each then loads exactly its own two, in order.

    If this fails: the id is changed before the store tells ids apart (stripped, case-folded, normalised,
    cut short, read as a number, its braces or separators removed: the message says which fits),
    or changed where it is written and not where it is read (it loads nothing, and another id holds
    its messages), or the load reads keys by a pattern (KEYS, SCAN MATCH) made of the id."""
    store = stores.new()
    appended, loaded = ids_written(store, findings)
    assert_own_histories(appended, loaded, id_mix, id_name)


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


@pytest.mark.requires("clear")
def test_clearing_one_session_leaves_every_other_whole(stores, keyspace, findings):
    """Every id of SESSION_IDS is written, noting the keys each one's appends made; then, of the ids
    that load exactly their own history twice in a row (the others are the findings of the scenario
    above and of test_loading_twice_changes_nothing), each is cleared in turn beside all the
    others: it loads empty and every other loads its whole history (then it is written again). At
    the end every one is cleared, and no key its appends made is left.

    If this fails: clear deletes by a key pattern made of the id (``clear('al*')`` deletes
    ``alice``; ``clear('alice')`` deletes ``alice2``), or builds its key from the id changed
    (case-folded, stripped) where append and load do not; or, for the keys left, clear builds the
    key of a companion (metadata, an index entry) otherwise than append does, for ids of that shape."""
    store = stores.new()
    owners = {sid: label for label, sid in SESSION_IDS}
    own_keys: dict[str, set[str]] = {}

    def add(sid, message):
        before = set(keyspace.keys())
        given_back = store.add(sid, message)
        own_keys.setdefault(sid, set()).update(set(keyspace.keys()) - before)
        return given_back
    appended, refused = write_turns(owners, add, store.load, id_mix, id_name,   # the scenario above judges appends
                                    may_refuse=lambda label, turn: label not in PLAIN_LABELS)
    if refused:
        findings.note(f"left out, their appends having raised (the scenario above judges them): "
                      f"{labelled(list(refused))}")
    # loaded twice: an id whose load changes what it loads next would look damaged by the next clear
    apart = [sid for sid in appended if store.load(sid) == appended[sid] == store.load(sid)]
    if len(apart) < len(appended):
        findings.note("left out, not loading their own history twice in a row: "
                      f"{labelled([sid for sid in appended if sid not in apart])}")
    judged, strayed = list(apart), []   # strayed: histories that changed as no clear changes one
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
            first, history = next(iter(damaged.items()))
            what = ("deleted" if not history else
                    f"deleted {len(appended[first]) - len(history)} of the {len(appended[first])} messages of")
            others = labelled(list(damaged)[1:4]) + (", ..." if len(damaged) > 4 else "")
            more = f" and {len(damaged) - 1} more ({others})" if len(damaged) > 1 else ""
            raise HistoryMismatch(f"clear({id_name(sid)}) {what} {id_name(first)}{more}: "
                                  f"{clear_cause(sid, list(damaged), len(judged) - 1)}", appended[first], history)
        store.append_all(sid, appended[sid])   # written again: each clear runs beside every other id
        strayed += [*changed, *([sid] if store.load(sid) != appended[sid] else [])]
        judged = [other for other in judged if other not in strayed]
    if strayed:
        findings.note("left out, loading otherwise than appended where a clear, which only deletes, does not explain "
                      "it (written again, or beside another's clear; test_many_fast_appends_keep_order and "
                      f"test_loading_twice_changes_nothing judge a history's order and loads): {labelled(strayed)}")
    for sid in judged:
        store.clear(sid)
    present = set(keyspace.keys())
    left = {sid: sorted(own_keys.get(sid, set()) & present) for sid in judged}
    leaving = [sid for sid in judged if left[sid]]
    plain = {sid for label, sid in SESSION_IDS if label in PLAIN_LABELS}
    if leaving and plain & set(leaving):
        findings.note(f"clear leaves keys of plain ids too ({', '.join(left[next(iter(plain & set(leaving)))])}): "
                      "test_clear_leaves_no_keys judges that")
    elif leaving:
        raise AssertionError(f"clear left keys of its own for {ids(len(leaving))}, where a plain id's clear leaves "
                             f"none: {labelled(leaving)}; the first's: {', '.join(left[leaving[0]])[:300]}: clear "
                             "builds those keys otherwise than append does for ids of that shape")


@pytest.mark.requires("tenants")
def test_tenants_keep_their_own_conversations(stores, findings):
    """Stores built for users ``bob`` and ``carol`` (the factory's ``user_id``) each append to session
    ``s1``; and pairs that a key joining user and session makes one: (``bob``, ``s1``) and session
    ``bob:s1`` with no user (where the factory has a default for ``user_id``), (``bob``, ``x:s1``)
    and (``bob:x``, ``s1``), and the same with ``|``, ``/`` and ``_``. Each loads exactly its own;
    with a clear, clearing bob's ``s1`` leaves carol's ``s1`` and ``bob:s1`` of no user whole. A pair
    other than bob's and carol's ``s1`` may be refused at its first append (a note says which).

    If this fails: the user is left out of the key, or joined to the session id with a separator
    that the ids may hold, so that one user reads and deletes another's conversation."""
    pairs = [(("bob", "s1"), ("carol", "s1")), *TENANT_PAIRS]
    if not stores.takes_no_tenant():
        pairs = [pair for pair in pairs if NO_USER not in (pair[0][0], pair[1][0])]
        findings.note("its factory has no default for user_id: no session of no user was written")
    owners = {owner: tenant_name(owner) for pair in pairs for owner in pair}
    unusual = {tenant_name(owner) for owner in owners if owner not in (("bob", "s1"), ("carol", "s1"))}
    built = {user: stores.new(user_id=user) for user in dict.fromkeys(user for user, _ in owners)}

    def load(owner):
        return built[owner[0]].load(owner[1])
    appended, refused = write_turns(owners, lambda owner, message: built[owner[0]].add(owner[1], message), load,
                                    tenant_mix, tenant_name,
                                    may_refuse=lambda label, turn: turn == 0 and label in unusual)
    if refused:
        findings.note(f"{len(refused)} of the pairs were refused at their first append (their ids hold a separator; "
                      f"test_every_session_id_keeps_its_own_history judges refusals): "
                      f"{', '.join(tenant_name(owner) for owner in refused)}")
    assert_own_histories(appended, {owner: load(owner) for owner in owners}, tenant_mix, tenant_name)
    if not stores.has(Capability.CLEAR):
        return
    built["bob"].clear("s1")
    for owner in [owner for owner in owners if owner[1] in ("s1", "bob:s1") and owner != ("bob", "s1")]:
        history = built[owner[0]].load(owner[1])
        if history != appended[owner]:
            raise HistoryMismatch(f"clearing user 'bob''s session 's1' reached {tenant_name(owner)}: "
                                  f"{tenant_cause(('bob', 's1'), owner) or UNKNOWN_TENANT}", appended[owner], history)


SHARED_REAL_SERVER = ("a redis-server of the scenario's own, whose INFO commandstats counts the store's commands "
                      "alone")
LIFE_SAMPLES = (5, 20)   # appends and loads timed in each phase: at least, at most
LIFE_BUDGET_S = 0.5      # past the least, a phase's sampling stops once this much time has passed


def timed_life(store, floor, session: str) -> dict[str, tuple[float, float]]:
    """Appends and loads of ``session``, each timed beside the raw Redis floor (an RPUSH and an LRANGE
    of the suite's on the same server): the medians of the store's and of the floor's, by operation."""
    samples = {"append": ([], []), "load": ([], [])}
    floor_key, started = f"floor:{session}", time.perf_counter()
    low, high = LIFE_SAMPLES
    for index in range(high):
        if index >= low and time.perf_counter() - started > LIFE_BUDGET_S:
            break
        message = Message("user" if index % 2 == 0 else "assistant", f"{session} {index + 1}")
        samples["append"][0].append(timed(lambda: store.add(session, message)))
        samples["append"][1].append(timed(lambda: floor.rpush(floor_key, message.content)))
        samples["load"][0].append(timed(lambda: store.load(session)))
        samples["load"][1].append(timed(lambda: floor.lrange(floor_key, 0, -1)))
    floor.delete(floor_key)
    return {name: (statistics.median(own), statistics.median(raw)) for name, (own, raw) in samples.items()}


def life_text(times: dict[str, tuple[float, float]]) -> str:
    return ", ".join(f"an {name} {own * 1000:.3f} ms ({own / raw:.1f}× the floor)" if name == "append" else
                     f"a {name} {own * 1000:.3f} ms ({own / raw:.1f}×)" for name, (own, raw) in times.items())


@pytest.mark.real_server(SHARED_REAL_SERVER)
def test_a_shared_database_is_left_as_it_was(stores, own_server, findings):
    """On a redis-server of the scenario's own, the store appends and loads a session on the empty
    database, each timed beside the raw Redis floor; then 50,000 keys of other applications are
    made (none in its namespace; one in fifty with a TTL), and it appends, loads and clears another
    session among them. Every key of the others must still be there with its TTL, and the store must
    not have run a command that walks or counts the whole keyspace (SCAN, KEYS, RANDOMKEY, DBSIZE):
    a database holding millions of keys of others makes each such call take seconds. The medians of
    both phases against the floor are reported. (FLUSHDB and FLUSHALL are forbidden to stores on
    every server the suite starts: a store that empties the database fails with NOPERM.)

    If this fails: the store finds a session by scanning ("wherever it lives": SCAN MATCH, KEYS), clears
    by a pattern, or counts keys with DBSIZE, where it should address its own keys by name (a set
    of its sessions' keys, if it must list them); or it deletes or re-expires keys it did not write."""
    server = own_server(debug=True)   # its keys of others made with DEBUG POPULATE
    floor = server.admin
    shared = SharedDatabase(floor)
    store = stores.new_on(server.url)
    shared.reset_counts()
    alone = timed_life(store, floor, "alone")
    calls = {"its appends and loads on the empty database": shared.keyspace_commands()}
    shared.populate()
    shared.reset_counts()
    among = timed_life(store, floor, "among-neighbours")
    calls["its appends and loads among the keys of others"] = shared.keyspace_commands()
    store.clear("among-neighbours")
    calls["its clear"] = shared.keyspace_commands()
    ran = walked({phase: counts for phase, counts in calls.items() if counts})
    damage = shared.damage().text(shared.count)
    figures = (f"with {shared.count:,} keys of others in the database ({shared.made_with}), {life_text(among)}; "
               f"on the empty database, {life_text(alone)}")
    findings.note(figures)
    if damage:
        raise AssertionError(f"the store's life among the keys of others changed them: {damage}"
                             + (f"; it ran {ran}" if ran else ""))
    if ran:
        raise AssertionError(f"the store ran {ran}, which it shares with others (here {shared.count:,} keys; a "
                             f"database of millions makes each such call take seconds): {figures}")
