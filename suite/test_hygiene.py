"""Hygiene: where a store puts its keys, and what it leaves behind.

Keys without a TTL are listed in every report (summary.md, summary.json, the terminal summary);
for a store with the ttl capability they also fail test_every_key_has_ttl_within_configured.
"""

import pytest

from memory_regression.contract.capabilities import Guarantee
from memory_regression.reference.conversations import numbered_messages
from memory_regression.reference.identities import SESSION_IDS
from memory_regression.reference.key_schemes import carried

# ids of several shapes (test_identity.py writes them all)
SHAPES = ("uuid", "email", "name with spaces around", "glob star", "hash tag", "colon separator")


@pytest.mark.requires("namespace")
@pytest.mark.guarantees("prefixed-keys")
def test_keys_stay_in_namespace(stores, keyspace, findings):
    """With a namespace, every key the store writes (messages, indexes, counters, locks) starts
    with it, for every kind of session id. A key scheme of the store's own that carries the
    namespace further on in every key (after a fixed word, or encoded in base32, base64 or hex into
    a segment) keeps its keys apart, and is a warning (prefixed-keys): SCAN by prefix and ACL key
    patterns miss those keys.

    If this fails: a key is built without the prefix (a global index set, a lock, a counter), or
    the prefix is applied to some keys only."""
    store = stores.new()
    sessions = [sid for label, sid in SESSION_IDS if label in SHAPES]
    for sid in sessions:
        store.append_all(sid, numbered_messages(2, sid))
    seen = set(keyspace.keys())
    assert seen, "the store wrote no keys at all"
    for sid in sessions:
        store.load(sid)
    seen.update(keyspace.keys())
    outside = sorted(k for k in seen if not k.startswith(keyspace.namespace))
    forms = {key: carried(key, keyspace.namespace) for key in outside}
    loose = [key for key, form in forms.items() if form is None]
    assert not loose, (f"keys outside the namespace {keyspace.namespace!r}: {', '.join(loose)}"
                       + (f" (beside {len(outside) - len(loose)} that carry it further on)" if len(loose) < len(outside)
                          else ""))
    if outside:
        how = sorted(set(forms.values()))
        findings.warn(Guarantee.PREFIXED_KEYS,
                      f"{len(outside)} of the store's {len(seen)} keys carry the namespace {keyspace.namespace!r} "
                      f"{' or '.join(how)}, not as their prefix (first: {outside[0]!r}): they are the store's, but "
                      f"SCAN by prefix ({keyspace.namespace}*) and ACL key patterns (~{keyspace.namespace}*) miss them")


@pytest.mark.requires("clear")
def test_clear_leaves_no_keys(stores, keyspace):
    """After clear, no key that the session created remains; the other session's keys do.

    The suite notes the keys that exist with only session 'keep' written, writes session 'gone',
    clears it, and expects exactly the first set of keys back. If this fails: clear deletes the
    message list but not its companions (metadata, counters, summaries, token totals)."""
    store = stores.new()
    store.append_all("keep", numbered_messages(2, "keep"))
    before = set(keyspace.keys())
    store.append_all("gone", numbered_messages(3, "gone"))
    store.load("gone")
    store.clear("gone")
    left = sorted(set(keyspace.keys()) - before)
    assert not left, f"after clear('gone') these keys remain: {', '.join(left)}"
    lost = sorted(before - set(keyspace.keys()))
    assert not lost, f"clear('gone') deleted keys of session 'keep': {', '.join(lost)}"
