"""Storage footprint: what a session costs the Redis server, and that a window bounds it.

Redis keeps everything in memory, so a store's storage is its users' bill, and a store that trims
only when it reads grows without bound while every load looks right. The scenarios measure the
session's keys with ``MEMORY USAGE key SAMPLES 0`` (every element counted, exactly): for every
store, the bytes stored per message against the content's own size, and that twice the messages
take about twice the bytes; for a store with a count window or a token budget, that its storage
stops growing once its window is full. Storage is a cost, not lost memory: a store that breaks
these bounds passes with a warning (it fails only under ``--strict``), and its conformance level
lacks the ``bounded-storage`` guarantee. Where the store keeps past states of a session as history
beside what a load reads (a LangGraph checkpointer's earlier checkpoints), a warning says how much of
the growth is theirs, and whether the live state alone stayed within the bound. The figures go to
every report (summary.json's ``footprint``, summary.md's table, junit.xml's properties,
report.html). fakeredis has no ``MEMORY USAGE``: the scenarios need a real server.

Keys without a TTL and keys outside the namespace are the hygiene group's: they stay listed in
every report, as before.
"""

import pytest

from memory_regression.contract.capabilities import Guarantee
from memory_regression.contract.rules import Message

REAL_SERVER = "MEMORY USAGE, which fakeredis does not have"
CONTENT_BYTES = 256      # each message's content, ASCII
GROWTH = 10              # the session gets GROWTH times its window's worth of messages
BOUND = 4                # ... after which its keys may take at most BOUND times what a full window took
PER_MESSAGE_FIRST = 10   # messages measured, then as many more, on a store with a roomy window
PER_MESSAGE_BOUND = 3    # ... after which its keys may take at most this many times what the first took
TOKEN_SHARE = 8          # under a token budget, a message costs about 1/TOKEN_SHARE of the budget


def filler(index: int, size: int) -> Message:
    """Message ``index``, numbered, of about ``size`` ASCII characters, user and assistant alternating."""
    head = f"footprint {index + 1:05d} "
    words = " ".join(["word"] * max(0, (size - len(head)) // 5))
    return Message("user" if index % 2 == 0 else "assistant", head + words)


def kb(size: float) -> str:
    return f"{size / 1024:,.1f} KB"


def token_messages(stores, profile) -> tuple[list[Message], int]:
    """For a token-windowed store: messages of about an eighth of ``profile``'s budget, as its
    counter counts them, enough for GROWTH budgets; and how many of the first fit the budget."""
    count = stores.counter(profile)
    probe = filler(0, 64 * 5).content
    size = max(40, round(len(probe) * profile.max_tokens / TOKEN_SHARE / max(count(probe), 1)))
    messages, costs = [], []
    while sum(costs) < GROWTH * profile.max_tokens:
        messages.append(filler(len(messages), size))
        costs.append(count(messages[-1].content))
    return messages, max(1, next((k for k in range(len(costs), 0, -1) if sum(costs[:k]) <= profile.max_tokens), 1))


SESSION = "footprint"


def measured(keyspace, store, messages: list[Message], name: str) -> tuple[dict, dict[str, int]]:
    """Append ``messages`` to one session and measure its keys: the figures (bytes per message
    against the content's size) and the bytes each key holds."""
    for message in messages:
        store.add(SESSION, message)
    used = keyspace.bytes_used()
    size = sum(used.values())
    if not size:
        pytest.skip(f"after {len(messages)} appends the scenario's database holds no key: the store keeps its "
                    "messages somewhere MEMORY USAGE cannot see, nothing to measure")
    content = sum(len(m.content.encode()) for m in messages) / len(messages)
    return {"window": name, "messages": len(messages), "keys": len(used), "bytes": size,
            "bytes_per_message": round(size / len(messages), 1), "content_bytes_per_message": round(content, 1),
            "overhead_ratio": round(size / len(messages) / content, 2)}, used


def in_past_states(used: dict[str, int], store) -> int:
    """Of ``used`` (bytes by key), those in the keys of the session's past states, which the store
    keeps as history beside what a load reads (a LangGraph checkpointer's earlier checkpoints, as its
    ``past_states`` names them)."""
    past = store.past_states(SESSION)
    return sum(size for key, size in used.items() if any(state in key for state in past))


def check_growth(keyspace, findings, store, messages: list[Message], first: int, name: str, bound: float,
                 diagnosis: str) -> None:
    """Append the first ``first`` messages and measure, append the rest and measure again: the
    session may then take at most ``bound`` times what it took at first; else warn (bounded-storage)
    with the growth seen and ``diagnosis`` (what the store does wrong, and how to fix it), unless
    its live state stayed within the bound and what grew is the past states it keeps: then that."""
    figures, used = measured(keyspace, store, messages[:first], name)
    size, past_first = sum(used.values()), in_past_states(used, store)
    for message in messages[first:]:
        store.add(SESSION, message)
    used = keyspace.bytes_used()
    after = sum(used.values())
    growth = after / size
    bounded = growth <= bound
    findings.measure("footprint", {**figures, "appends_after": len(messages), "bytes_after": after,
                                   "growth": round(growth, 2), "bound": bound, "bounded": bounded})
    if bounded:
        return
    past = in_past_states(used, store)
    if past:
        live_growth = (after - past) / max(size - past_first, 1)
        diagnosis = (f"(at most {bound}× is allowed), {kb(past)} of it in keys of the session's past states, which "
                     f"the store keeps as history beside what a load reads, and {kb(after - past)} in its live state "
                     f"({live_growth:.1f}× what it held at first): " + (
                         "the live state stays within the bound, and what grows is the past states (a LangGraph "
                         "checkpointer's earlier checkpoints): bound them (a TTL, a shallow checkpointer that keeps "
                         "the latest only, or deleting old ones)" if live_growth <= bound else diagnosis))
    findings.warn(Guarantee.BOUNDED_STORAGE, f"after {len(messages)} appends the session's keys hold {kb(after)}, "
                                           f"after {first} appends {kb(size)}: {growth:.1f}× {diagnosis}")


# a window applied only when reading
TRIMS_WHEN_LOADING = ("(at most {bound}× is allowed); trims only when loading? The store keeps every message in Redis "
                      "and applies the window when it reads, so the session grows with every turn: trim when "
                      "appending{how}, so that Redis holds the window")


@pytest.mark.guarantees("bounded-storage")
@pytest.mark.real_server(REAL_SERVER)
def test_storage_grows_with_the_messages_kept(stores, keyspace, findings):
    """Ten messages of 256 bytes go into one session of a store with a roomy window, the session's
    keys are measured (``MEMORY USAGE key SAMPLES 0``, summed over every key the store wrote), then
    ten more: the keys may then take at most 3 times what they took (twice the messages take about
    twice the bytes). The bytes stored per message against the content's own size are a figure of
    every report. Skipped when the store wrote no key to measure.

    If this warns: the store keeps more than the messages, and what it keeps grows faster than the
    history: a copy of the whole history per append (versions kept for undo, a snapshot per turn,
    an audit log of whole histories), each bigger than the last. Keep each message once; if
    versions are needed, keep a bounded few, or the changes rather than whole copies."""
    messages = [filler(i, CONTENT_BYTES) for i in range(2 * PER_MESSAGE_FIRST)]
    check_growth(keyspace, findings, stores.new(), messages, PER_MESSAGE_FIRST, "unwindowed", PER_MESSAGE_BOUND,
                 f"for twice the messages (at most {PER_MESSAGE_BOUND}× is allowed): the store keeps copies of "
                 "its history that grow with it (a snapshot of the whole history per append?): keep each message "
                 "once")


@pytest.mark.requires("count-window")
@pytest.mark.guarantees("bounded-storage")
@pytest.mark.real_server(REAL_SERVER)
def test_storage_stays_within_the_window(stores, keyspace, findings, window):
    """With a count window N: N messages of 256 bytes are appended and the session's keys measured
    (``MEMORY USAGE key SAMPLES 0``, summed over every key the store wrote), then 9N more, and the
    keys measured again: they may take at most 4 times what the first N took (a correct store holds
    N messages both times; up to about 2N is room for a store that trims in batches, and for Redis
    changing a list's encoding from one listpack to a quicklist of several).

    If this warns: the store keeps every message in Redis and applies the window only when it
    reads (LRANGE the last N, or trim a copy in Python), so the session grows with every turn
    while each load looks right, until the server runs out of memory. Trim when appending:
    ``RPUSH`` then ``LTRIM key -N -1`` in one transaction (MULTI/EXEC or a Lua script)."""
    messages = [filler(i, CONTENT_BYTES) for i in range(GROWTH * window)]
    check_growth(keyspace, findings, stores.new(max_messages=window), messages, window, f"N={window}", BOUND,
                 f"for a window of {window} " + TRIMS_WHEN_LOADING.format(
                     bound=BOUND, how=" (RPUSH then LTRIM in one transaction)"))


@pytest.mark.requires("token-window")
@pytest.mark.guarantees("bounded-storage")
@pytest.mark.real_server(REAL_SERVER)
def test_storage_stays_within_the_token_budget(stores, keyspace, findings):
    """With a token budget: messages of about an eighth of the smallest profile's budget (as the
    store is told to count) are appended until the budget is full and the session's keys measured,
    then until ten budgets' worth went in, and measured again: at most 4 times the first.

    If this warns: the store keeps every message in Redis and drops the oldest only from what it
    returns, so the session grows with every turn. Drop the oldest messages from Redis while the
    session's total is over the budget, in the append's transaction or script."""
    profile = min(stores.profiles, key=lambda p: p.max_tokens)
    messages, first = token_messages(stores, profile)
    check_growth(keyspace, findings, stores.new(profile=profile), messages, first, profile.name, BOUND,
                 f"for a budget of {profile.max_tokens} tokens ({profile.name}) " + TRIMS_WHEN_LOADING.format(
                     bound=BOUND, how=" (drop the oldest while the total is over the budget)"))
