"""TTL: a store built with ttl=T gives every key it writes a TTL of at most T seconds, and refreshes
it on every append. Whether keys really expire is test_expiry.py's concern."""

import pytest

from memory_regression.reference.conversations import numbered_messages
from memory_regression.reference.diagnosis import unit_hint

TTL_S = 60
FRESH_SLACK_MS = 2000     # a TTL just set may have run down this much by the time we read it
SHORTENED_MS = 5000       # the suite shortens TTLs to this to see whether an append restores them


def _ttl_problems(keyspace, ttl_s, keys=None, shortened_ms=None):
    """Keys (all, or those given) whose TTL is missing, longer than configured, or far shorter than
    just set; ``shortened_ms``: what the suite shortened them to before the append, which a TTL the
    append did not refresh still shows. A key that no longer exists is no problem here."""
    problems = []
    for key in keyspace.keys() if keys is None else keys:
        pttl = keyspace.pttl_ms(key)
        if pttl == -2:
            continue
        if pttl == -1:
            problems.append(f"key {key} has no TTL")
        elif pttl > ttl_s * 1000:
            problems.append(f"key {key} has a TTL of {pttl / 1000:g} s, longer than the configured {ttl_s} s"
                            + unit_hint(pttl / (ttl_s * 1000), "milliseconds", "seconds"))
        elif shortened_ms is not None and pttl <= shortened_ms:
            problems.append(f"key {key} has a TTL of {pttl / 1000:g} s, what the suite had shortened it to: the "
                            f"append did not set it back to {ttl_s} s")
        elif pttl < ttl_s * 1000 - FRESH_SLACK_MS:
            problems.append(f"key {key} has a TTL of {pttl / 1000:g} s right after an append, "
                            f"expected about {ttl_s} s" + unit_hint(ttl_s * 1000 / max(pttl, 1), "seconds",
                                                                     "milliseconds"))
    return problems


@pytest.mark.requires("ttl")
def test_every_key_has_ttl_within_configured(stores, keyspace):
    """Right after appends, every key the store created has a TTL close to, and not over, the
    configured seconds.

    If this fails: EXPIRE is missing for some key (an index set, a counter, a summary), the value
    is in the wrong unit (PEXPIRE with seconds, EXPIRE with milliseconds), or SET without EX
    dropped the TTL."""
    store = stores.new(ttl=TTL_S)
    for sid in ("ttl-a", "ttl-b"):
        store.append_all(sid, numbered_messages(3, sid))
    store.load("ttl-a")
    problems = _ttl_problems(keyspace, TTL_S)
    assert keyspace.keys(), "the store wrote no keys at all"
    assert not problems, "; ".join(problems) + f" (keys: {', '.join(keyspace.keys())})"


@pytest.mark.requires("ttl")
def test_append_refreshes_ttl(stores, keyspace, findings):
    """An append sets the TTL of the session's keys back to the configured value: the TTL slides
    with activity.

    The suite shortens the TTL of every key that has one to 5 s, appends once more, and expects
    those TTLs back near the configured value (keys with no TTL at all are the concern of
    test_every_key_has_ttl_within_configured). Keys that hold a past state the store keeps as
    history beside its live state, which a load does not read (a LangGraph checkpointer's earlier
    checkpoints, as its ``past_states`` names them), need no refresh: they expire on their own,
    and a note counts them. If this fails: EXPIRE ... NX (set only once), EXPIRE only when the list
    is created, or the refresh is on another key than the one holding the messages."""
    store = stores.new(ttl=TTL_S)
    store.append_all("slide", numbered_messages(2, "slide"))
    expiring = [key for key in keyspace.keys() if keyspace.pttl_ms(key) > 0]
    assert expiring, f"no key has a TTL to refresh (keys: {', '.join(keyspace.keys()) or 'none'})"
    for key in expiring:
        keyspace.set_pttl_ms(key, SHORTENED_MS)
    store.append("slide", "user", "one more")
    past = store.past_states("slide")
    history = [key for key in expiring if any(state in key for state in past)]
    if history:
        findings.note(f"{len(history)} of the {len(expiring)} keys were of the session's past states, which the "
                      "store keeps as history beside what a load reads: their TTLs were not expected back")
    problems = _ttl_problems(keyspace, TTL_S, keys=[key for key in expiring if key not in history],
                             shortened_ms=SHORTENED_MS)
    assert not problems, "after an append: " + "; ".join(problems)
