"""Identity and neighbours: session ids as applications make them, tenants, and a database shared
with others.

Real ids are UUIDs, emails, numbers, names typed in any case and spacing, Unicode, URLs, JWT subjects
and a kilobyte of text; a framework keys a conversation by user and session together; and the
store's Redis holds a cache, a queue and other services' keys beside it. A store that builds its keys
carelessly mixes two users' conversations, or loses one, and nothing errors; one that walks the
keyspace works on an empty database and falls over beside millions of keys. Every id of
``SESSION_IDS`` (in ``memory_regression/reference/identities.py``) must keep exactly its own history. A store
may refuse an id it does not support by raising at its first append: that is a warning
(any-session-id), naming the ids, not a failure; the ids every store must take are the plain ones
(a UUID, a number, a name, ``s2``, ``alice2``). A failure names the two ids mixed up, and how their
keys became one where the ids show it ("it is folded to one letter case"); where they fit several
causes it lists them.
"""
from __future__ import annotations

import pytest

from memory_regression.contract.capabilities import Capability
from memory_regression.reference.clearing import clear_each, keys_left
from memory_regression.reference.diagnosis import HistoryMismatch
from memory_regression.reference.identities import (NO_USER, PLAIN_LABELS, SESSION_IDS, TENANT_PAIRS, UNKNOWN_TENANT,
    id_name, labelled, tenant_cause, tenant_name)
from memory_regression.harness.neighbours import SharedDatabase, life_text, timed_life, walked
from memory_regression.harness.owners import assert_own_histories, id_mix, ids_written, tenant_mix, write_turns

SHARED_REAL_SERVER = ("a redis-server of the scenario's own, whose INFO commandstats counts the store's commands "
                      "alone")


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
    own_keys: dict[str, set[str]] = {}

    def add(sid, message):   # noting the keys each id's appends made
        before = set(keyspace.keys())
        given_back = store.add(sid, message)
        own_keys.setdefault(sid, set()).update(set(keyspace.keys()) - before)
        return given_back
    appended, refused = write_turns({sid: label for label, sid in SESSION_IDS}, add, store.load, id_mix, id_name,
                                    may_refuse=lambda label, turn: label not in PLAIN_LABELS)
    # loaded twice: an id whose load changes what it loads next would look damaged by the next clear
    apart = [sid for sid in appended if store.load(sid) == appended[sid] == store.load(sid)]
    judged, strayed = clear_each(store, apart, appended)
    for why, left_out in (("their appends having raised (the scenario above judges them)", list(refused)),
                          ("not loading their own history twice in a row", [s for s in appended if s not in apart]),
                          ("loading otherwise than appended where a clear, which only deletes, does not explain it "
                           "(written again, or beside another's clear; test_many_fast_appends_keep_order and "
                           "test_loading_twice_changes_nothing judge a history's order and loads)", strayed)):
        if left_out:
            findings.note(f"left out, {why}: {labelled(left_out)}")
    for sid in judged:
        store.clear(sid)
    present = set(keyspace.keys())
    note, failure = keys_left({sid: sorted(own_keys.get(sid, set()) & present) for sid in judged})
    if note:
        findings.note(note)
    if failure:
        raise AssertionError(failure)


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


@pytest.mark.real_server(SHARED_REAL_SERVER)
def test_a_shared_database_is_left_as_it_was(stores, own_server, findings):
    """On a redis-server of the scenario's own, the store appends and loads a session on the empty
    database, each timed beside the raw Redis floor; then 50,000 keys of other applications are
    made (none in its namespace; one in fifty with a TTL), and it appends, loads and (with clear)
    clears another session among them. Every key of the others must still be there with its TTL, and the store must
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
    server.used_by_the_store("its appends on the empty database")
    calls = {"its appends and loads on the empty database": shared.keyspace_commands()}
    shared.populate()
    shared.reset_counts()
    among = timed_life(store, floor, "among-neighbours")
    calls["its appends and loads among the keys of others"] = shared.keyspace_commands()
    if stores.has(Capability.CLEAR):
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
