"""Session ids as applications make them, and what two of them a store mixes up says of how it builds keys.

:data:`SESSION_IDS` holds ids of every shape the identity scenarios append under, each with a label:
UUIDs, emails, numbers, names typed in any letter case and spacing, Unicode in both normal forms, a
kilobyte, Redis' pattern characters, hash tags, separators, and pairs that are prefixes of each
other or one after a likely normalisation. :data:`TENANT_PAIRS` holds (user, session) pairs that a
store joining the two into one key without an unambiguous separator makes one conversation.

:func:`mixed_up` finds, among histories loaded per owner (an id, a tenant's id), the first that
holds another's messages or lost its own to another, and says so in store terms, naming how the two
ids became one key only where the ids themselves show it (:func:`key_causes`, :func:`pattern_cause`).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Callable, Hashable, Iterator, Sequence

from ..contract.rules import Message

UUID = "3f2b8c1e-9a4d-4e6f-b1c2-7d8e9f0a1b2c"
LONG = "session-" + "0123456789abcdef" * 64   # a kilobyte, then a character that tells two apart

# (label, id): every id here must keep its own history; those of PLAIN_LABELS every store must take
SESSION_IDS: tuple[tuple[str, str], ...] = (
    ("uuid", UUID), ("uuid in capitals", UUID.upper()),
    ("email", "alice@example.com"), ("email in other case", "Alice@Example.COM"),
    ("numeric", "42"), ("numeric, zero-padded", "042"),
    ("name", "alice"), ("name, capitalised", "Alice"), ("name in capitals", "ALICE"),
    ("name with spaces around", " alice "), ("name with a space inside", "alice smith"),
    ("name with two spaces inside", "alice  smith"), ("name without the space", "alicesmith"),
    ("padded short id", " s2 "), ("short id", "s2"),
    ("composed unicode (NFC)", "caf\u00e9-\u7528\u6237"), ("decomposed unicode (NFD)", "cafe\u0301-\u7528\u6237"),
    ("full-width letters", "\uff41\uff4c\uff49\uff43\uff45"),
    ("a kilobyte", LONG + "-a"), ("a kilobyte, another last character", LONG + "-b"),
    ("prefix of another", "al"), ("extends another", "alice2"),
    ("glob star", "al*"), ("glob question mark", "al?"), ("glob class", "[a]lice"), ("backslash", "alice\\"),
    ("hash tag", "{alice}"), ("hash tag inside", "a{li}ce"),
    ("colon separator", "alice:2"), ("pipe separator", "alice|2"), ("slash separator", "alice/2"),
    ("JWT subject", "auth0|5f7c8ec7c33c6c004bbafe82"), ("URL", "https://example.com/chat?id=7&user=alice#top"),
)
PLAIN_LABELS = frozenset({"uuid", "numeric", "name", "short id", "extends another"})

NO_USER = None   # a tenant pair's side built without a user (the factory's own default)
# (user, session) pairs: joined with the separator, each pair's two sides are one key
TENANT_PAIRS: tuple[tuple[tuple[str | None, str], tuple[str | None, str]], ...] = (
    (("bob", "s1"), (NO_USER, "bob:s1")),
    (("bob", "x:s1"), ("bob:x", "s1")),
    (("bob", "x|s1"), ("bob|x", "s1")),
    (("bob", "x/s1"), ("bob/x", "s1")),
    (("bob", "x_s1"), ("bob_x", "s1")),
)
SEPARATORS = (":", "|", "/", "_", "-", "")


@dataclass(frozen=True)
class Transform:
    """How a store may change an id before it tells ids apart (in a key, a search index's query), in words."""

    words: str
    apply: Callable[[str], str]


def _number(text: str) -> str:
    return str(int(text)) if text.strip().isdigit() else text


TRANSFORMS = (
    Transform("its surrounding whitespace is stripped", str.strip),
    Transform("it is folded to one letter case", str.casefold),
    Transform("it is normalised to one Unicode form (NFC or NFD)", lambda s: unicodedata.normalize("NFC", s)),
    Transform("it is normalised to Unicode's compatibility form (NFKC: full-width letters become ASCII)",
              lambda s: unicodedata.normalize("NFKC", s)),
    Transform("its whitespace is removed or collapsed", lambda s: " ".join(s.split()).replace(" ", "")),
    Transform("it is read as a number", _number),
    Transform("its braces are removed (a hash tag made of the id)", lambda s: s.replace("{", "").replace("}", "")),
    Transform("its separators (':', '|', '/') are made one", lambda s: re.sub(r"[:|/]", ":", s)),
    Transform("every character but letters and digits is removed", lambda s: "".join(c for c in s if c.isalnum())),
    Transform("it is cut at its first '?' or '#' (put in a URL's path unquoted, the rest is the URL's query or "
              "fragment)", lambda s: re.split(r"[?#]", s, maxsplit=1)[0]),
)
CUT_AT_LEAST = 64   # two ids that agree on this many characters, and differ after: cut short


def key_causes(one: str, other: str, apart: Sequence[str] = (), mixed: Sequence[tuple[str, str]] = ()) -> list[str]:
    """How ``one`` and ``other`` could become one key, as the ids show it: each change that makes them
    equal, but those that would also make two of ``apart`` (ids the store kept apart) one, and of
    those, where some also make every pair of ``mixed`` (ids the store mixed up) one, those alone; or
    that they agree on a long start and differ after (the id cut short). Empty when none does."""
    def kept_apart(transform: Transform) -> bool:
        seen: dict[str, str] = {}
        return all(seen.setdefault(transform.apply(sid), sid) == sid for sid in apart)
    fitting = [t for t in TRANSFORMS if t.apply(one) == t.apply(other) and kept_apart(t)]
    explaining = [t for t in fitting if all(t.apply(a) == t.apply(b) for a, b in mixed)]
    causes = [t.words for t in explaining or fitting]
    common = next((i for i, (a, b) in enumerate(zip(one, other)) if a != b), min(len(one), len(other)))
    if common >= CUT_AT_LEAST:
        causes.append(f"it is cut short (the two agree on their first {common:,} characters and differ after)")
    return causes


def said(causes: list[str], subject: str = "the id") -> str:
    """``causes`` of one evidence as a clause: the one cause, or the possible ones listed."""
    if len(causes) == 1:
        return f"{subject}: {causes[0]}"
    return f"{subject}, and the evidence fits several causes: " + "; or ".join(causes)


GLOB = re.compile(r"[*?\[\\]")


def pattern_regex(pattern: str) -> re.Pattern | None:
    """What a Redis glob pattern (KEYS, SCAN MATCH) matches, as a regular expression: ``*``, ``?``,
    ``[...]`` (``^`` negates, ``a-z`` ranges) and ``\\`` escaping the next character; None for one
    Redis reads otherwise than this does."""
    out, index = [], 0
    while index < len(pattern):
        char = pattern[index]
        if char == "\\" and index + 1 < len(pattern):
            index += 1
            out.append(re.escape(pattern[index]))
        elif char in "*?":
            out.append(".*" if char == "*" else ".")
        elif char == "[" and "]" in pattern[index + 2:]:
            end = pattern.index("]", index + 2)
            body = pattern[index + 1:end]
            negate = body.startswith("^")
            out.append("[" + ("^" if negate else "") + re.escape(body[1:] if negate else body).replace(r"\-", "-")
                       + "]")
            index = end
        else:
            out.append(re.escape(char))
        index += 1
    try:
        return re.compile("".join(out), re.DOTALL)
    except re.error:
        return None


def pattern_cause(pattern_id: str, other: str) -> str | None:
    """Why a read or delete made of ``pattern_id`` reached ``other``'s key, where the two ids show it:
    the id, holding Redis' pattern characters, matches the other unescaped; or the other starts with
    it (a pattern of the id and a trailing ``*``)."""
    if GLOB.search(pattern_id):
        regex = pattern_regex(pattern_id)
        if regex is not None and regex.fullmatch(other):
            return (f"the id reached a key pattern (KEYS, SCAN MATCH) unescaped, and as a pattern {pattern_id!r} "
                    f"matches {other!r}")
    if other.startswith(pattern_id):
        return (f"{other!r} starts with {pattern_id!r}: the keys are found by a pattern of the id and a trailing * "
                "(KEYS, SCAN MATCH)")
    return None


Owner = Hashable   # whose history: a session id, or a tenant's (user, session)
SHARED, READ_TOO, MOVED = "shared", "read too", "moved"   # how a history holds what was another's


def mixed_up(appended: dict[Owner, list[Message]], loaded: dict[Owner, list[Message]], name: Callable[[Owner], str],
             cause: Callable[[Owner, Owner, str], str | None], unknown: str) -> tuple[Owner, str] | None:
    """An owner whose loaded history holds another's messages, or lacks its own that another's holds,
    and that in words; None when no history holds another's messages (a history wrong otherwise is
    the caller's to tell). ``name(owner)`` names one; ``cause(writer, reader, how)`` says why what was
    written as ``writer``'s is read as ``reader``'s, where the ids show it, else None (``how``: SHARED,
    each loads the other's; READ_TOO, the reader loads the writer's, not the reverse; MOVED, the
    writer's are loaded under the reader only). Of the owners mixed up (in ``appended``'s order), the
    first whose cause the ids show; else the first, with ``unknown`` for its cause."""
    found = list(_mixes(appended, loaded, name))
    for owner, writer, reader, how, text in found:
        why = cause(writer, reader, how)
        if why:
            return owner, text + why
    return (found[0][0], found[0][4] + unknown) if found else None


def _mixes(appended: dict[Owner, list[Message]], loaded: dict[Owner, list[Message]],
           name: Callable[[Owner], str]) -> Iterator[tuple[Owner, Owner, Owner, str, str]]:
    """Per owner mixed up: (the owner told of, the writer, the reader, how, what was seen)."""
    origin = {message: owner for owner, messages in appended.items() for message in messages}
    for owner, messages in appended.items():
        history = loaded.get(owner)
        if history is None or history == messages:
            continue
        foreign = [origin[m] for m in history if origin.get(m, owner) != owner]
        if foreign:
            other = foreign[0]
            if any(origin.get(m) == owner for m in loaded.get(other, ())):
                yield owner, other, owner, SHARED, (f"{name(owner)} and {name(other)} share a history: each loads the "
                                                    "other's messages; ")
            elif any(m not in loaded.get(other, ()) for m in history if origin.get(m) == other):
                yield other, other, owner, MOVED, _moved(other, owner, appended[other], loaded.get(other, []), name)
            else:
                yield owner, other, owner, READ_TOO, (f"{name(owner)} loads the messages of {name(other)} too, though "
                                                      f"{name(other)} does not load its: ")
            continue
        holder = next((other for other, held in loaded.items()
                       if other != owner and any(m in held for m in messages if m not in history)), None)
        if holder is not None:
            yield owner, owner, holder, MOVED, _moved(owner, holder, messages, history, name)


def _moved(writer: Owner, reader: Owner, messages: list[Message], history: list[Message],
           name: Callable[[Owner], str]) -> str:
    kept = sum(m in history for m in messages)
    return (f"what is appended under {name(writer)} is loaded under {name(reader)}, and {name(writer)} loads {kept} "
            f"of its {len(messages)}: ")


UNKNOWN_ID = ("the two ids become one key, and how the ids do not show (possible causes: the id is hashed, cut short, "
              "or has a character replaced or dropped)")
UNKNOWN_TENANT = ("the two become one key, and how the ids do not show (possible causes: the user id is left out of "
                  "the key, or the two are joined without a separator that tells them apart)")


def id_cause(written: str, read: str, how: str, apart: Sequence[str] = (),
             mixed: Sequence[tuple[str, str]] = ()) -> str | None:
    """Why what was appended under the id ``written`` loads under ``read`` (``how``, as :func:`mixed_up`
    says), where the ids show it, else None; ``apart`` and ``mixed``: the ids the store kept apart and
    the pairs it mixed up, which rule changes out and in (:func:`key_causes`)."""
    if how == READ_TOO:
        pattern = pattern_cause(read, written)
        if pattern:
            return f"the load of {read!r} reads keys by a pattern: {pattern}"
    causes = key_causes(written, read, apart, mixed)
    where = (" where it is written, and not where it is read" if how == MOVED
             else " before the store tells ids apart (in a key, or a search index's query)")
    return said(causes, "the id is changed" + where) if causes else None


def tenant_name(owner: tuple[str | None, str]) -> str:
    user, session = owner
    return f"session {session!r} of no user" if user is NO_USER else f"user {user!r}'s session {session!r}"


def tenant_cause(written: tuple[str | None, str], read: tuple[str | None, str], how: str = SHARED) -> str | None:
    """Why (user, session) ``written`` loads as ``read``: the user left out of the key (one session id, two
    users), or the separators their joins agree on; None if neither."""
    if written[1] == read[1] and written[0] != read[0]:
        return ("the same session id under two users is one conversation: the user id is left out of the key (kept "
                "beside the session, or filtered on, not part of its key)")
    joined = [sep for sep in SEPARATORS if _join(written, sep) == _join(read, sep)]
    if joined:
        separators = " or ".join(repr(sep) for sep in joined)
        return (f"the user id and the session id are joined with {separators} into one key, so that the two are one "
                "conversation: each can read and delete the other's")
    return None


def mixed_pairs(appended: dict[Owner, list[Message]], loaded: dict[Owner, list[Message]]) -> list[tuple]:
    """Every (writer, reader) where ``reader``'s loaded history holds a message appended under ``writer``."""
    origin = {message: owner for owner, messages in appended.items() for message in messages}
    return sorted({(origin[m], reader) for reader, history in loaded.items() for m in history
                   if origin.get(m, reader) != reader}, key=str)


def _join(owner: tuple[str | None, str], separator: str) -> str:
    user, session = owner
    return session if user is NO_USER else f"{user}{separator}{session}"


def id_name(sid: str) -> str:
    """A session id as a message names it: quoted, a long one by its ends and its length."""
    quoted = repr(sid)
    return f"session {quoted if len(quoted) <= 48 else quoted[:20] + '...' + quoted[-14:]}" + (
        f" ({len(sid):,} characters)" if len(quoted) > 48 else "")


def labelled(ids: Sequence[str]) -> str:
    """Ids as a list for a message, each with its label where it has one."""
    labels = {sid: label for label, sid in SESSION_IDS}
    return ", ".join(f"{id_name(sid).removeprefix('session ')}" + (f" ({labels[sid]})" if sid in labels else "")
                     for sid in ids)
