"""Core scenarios: what every store must do, whatever its window, TTL or namespace.

Every store here is built with roomy settings (a window of a million messages, an unbounded
token budget, an hour of TTL), so any message that goes missing was lost by the store itself.
"""

import pytest

from memory_regression.reference.conversations import TRICKY_CONTENTS, numbered_messages, tricky_messages
from memory_regression.reference.diagnosis import HistoryMismatch, assert_history, fresh_instance_loads

FAST_APPENDS = 400
FAST_BUDGET_S = 10     # a correct store on a real server appends the 400 in a fraction of a second
NO_CAP_MESSAGES = 3000
NO_CAP_BUDGET_S = 20   # a correct store on a real server appends the 3,000 in well under a second


def test_fresh_session_is_empty(stores):
    """A session nobody wrote to loads as an empty list, without raising.

    If this fails: the store returns a default or greeting message, or state left behind by an
    earlier session or instance (a class-level cache, a module-level default list)."""
    store = stores.new()
    history = store.load("never-written")
    if history:
        raise HistoryMismatch("a session that was never written is not empty", [], history)


def test_round_trip_keeps_role_content_and_order(stores, findings):
    """Every message comes back with its role and content unchanged, oldest first.

    The contents cover ASCII, CJK, emoji with joiners, right-to-left text, newlines and CRLF,
    surrounding whitespace, JSON-looking and HTML text, the empty string, backslashes, control
    characters and 100 KB, in turn from the user, the assistant and the system, then the same user
    message twice in a row. A framework store is judged on what its messages carry (a Google ADK
    session has no system message) and what it keeps by design (agno: one system prompt per
    session), which notes say. If this fails, look at the
    serializer (ensure_ascii, encoding, .strip(), truncation), at how the role is stored, at LPUSH
    without a reversal, and at anything that drops a message equal to the one before it (a set or
    a sorted set keyed by the message, a check against the last one stored)."""
    store = stores.new()
    appended = tricky_messages()
    store.append_all("round-trip", appended)
    expected, notes = store.kept_by_design(appended)
    for note in notes:
        findings.note(note)
    labels = ", ".join([*(label for label, _ in TRICKY_CONTENTS), "a message equal to the one before it"])
    assert_history(expected, store.load("round-trip"), appended,
                   context=f"round trip of {len(appended)} messages ({labels}): ")


@pytest.mark.guarantees("steady-appends")
def test_many_fast_appends_keep_order(stores, append_within, findings):
    """Hundreds of appends in quick succession keep their order and lose none.

    Appending stops after 10 s (or --append-budget, or a quarter of the scenario timeout, if less), as in
    test_no_silent_cap: a slow store is judged on the appends it made, and a note says how far it got.

    If this fails: ids or scores taken from a clock (equal timestamps reorder a sorted set or
    overwrite a hash field), or a buffer that reorders writes."""
    store = stores.new()
    timed = append_within(store, "fast-appends", numbered_messages(FAST_APPENDS, "fast"), FAST_BUDGET_S)
    appended = timed.messages
    assert_history(appended, store.load("fast-appends"), appended, context=f"after {len(appended)} fast appends: ")
    if timed.cut_short:
        findings.note(f"appended {len(appended)} of {FAST_APPENDS} messages within the {timed.budget_s:g} s budget")


def test_two_instances_share_history(stores):
    """Two store instances over one server see the same history: nothing lives only in the process.

    If this fails: the store keeps messages (or a cache of them) in the instance or the class, and
    another worker process would not see them."""
    writer, reader = stores.new(), stores.new()
    appended = numbered_messages(6, "shared")
    writer.append_all("shared", appended[:3])
    assert_history(appended[:3], reader.load("shared"), appended, context="second instance after 3 appends: ")
    reader.append_all("shared", appended[3:])

    def unseen(history):
        if history == appended[:3]:
            return ("the first instance still loads only the 3 messages it appended itself: it answers from state "
                    "kept in the instance (a cache, a copy of what it wrote), which the second's appends do not reach")
        return fresh_instance_loads(appended, stores.new().load("shared"),
                                    "the first instance answers from state kept in the instance")
    assert_history(appended, writer.load("shared"), appended,
                   context="first instance after the second appended 3 more: ", hint=unseen)


def test_loading_twice_changes_nothing(stores):
    """Loading is read-only: two loads in a row return the same history as was appended.

    If this fails: load pops or trims (LPOP, a read-then-delete pipeline, a trim with a wrong index
    done on read)."""
    store = stores.new()
    appended = numbered_messages(8, "reload")
    store.append_all("reload", appended)
    first = store.load("reload")
    assert_history(appended, first, appended, context="first load: ")
    assert_history(appended, store.load("reload"), appended, context="second load: ",
                   hint=lambda _: "the first load was right, so loading changed the session: load writes (pops, "
                                  "deletes or trims) what it reads")


@pytest.mark.starts_first
@pytest.mark.guarantees("steady-appends")
def test_no_silent_cap(stores, append_within, findings):
    """With a window larger than the conversation, all of up to 3,000 messages come back.

    The size is only there to find caps, so appending stops after 20 s (or --append-budget, or a
    quarter of the scenario timeout, if less): a slow store is judged on what it appended, a note says how far it
    got (a cap above that does not show), and an append time that grows with the history is a
    warning (steady-appends), with the growth measured.

    If this fails: a hard-coded cap (LRANGE 0 999, a max length in the serializer, a default
    window) trims history the caller never asked to trim."""
    store = stores.new()
    timed = append_within(store, "long-history", numbered_messages(NO_CAP_MESSAGES, "long"), NO_CAP_BUDGET_S)
    appended = timed.messages
    assert_history(appended, store.load("long-history"), appended, context=f"after {len(appended):,} appends: ")
    if timed.cut_short:
        findings.note(f"appended {len(appended):,} of {NO_CAP_MESSAGES:,} messages within the {timed.budget_s:g} s "
                      f"budget; the history held all of them (a cap above {len(appended):,} would not show)")
