"""How the identity scenarios tell two ids mixed up: Redis glob patterns, the changes that make two ids
one key, and which history holds whose messages."""

from memory_regression.contract.rules import Message
from memory_regression.reference.identities import (LONG, MOVED, READ_TOO, SHARED, id_cause, key_causes, mixed_up,
    pattern_cause, pattern_regex, tenant_cause)


def matches(pattern, text):
    return bool(pattern_regex(pattern).fullmatch(text))


def test_a_pattern_matches_as_redis_matches_it():
    assert matches("al*", "alice") and matches("al?", "al*") and matches("[a]lice", "alice")
    assert matches("a[^b]c", "axc") and not matches("a[^b]c", "abc") and matches("[a-c]x", "bx")
    assert matches("al\\*", "al*") and not matches("al\\*", "alice")
    assert not matches("alice", "alice2") and matches("a{li}ce", "a{li}ce")


def test_a_pattern_cause_names_an_unescaped_pattern_or_a_trailing_star():
    assert "unescaped, and as a pattern 'al*' matches 'alice'" in pattern_cause("al*", "alice")
    assert "'alice2' starts with 'alice'" in pattern_cause("alice", "alice2")
    assert pattern_cause("bob", "alice") is None


def test_the_changes_that_make_two_ids_one_are_named_and_those_the_store_disproves_left_out():
    assert key_causes("Alice", "alice") == ["it is folded to one letter case"]
    assert key_causes("42", "042") == ["it is read as a number"]
    assert key_causes("caf\u00e9", "cafe\u0301") == ["it is normalised to one Unicode form (NFC or NFD)",
                                                     "it is normalised to Unicode's compatibility form (NFKC: "
                                                     "full-width letters become ASCII)"]
    both = key_causes(" s2 ", "s2")
    assert both[0] == "its surrounding whitespace is stripped" and len(both) == 3
    # a store that kept 'alice smith' and 'alicesmith' apart removes no inner whitespace
    assert key_causes(" s2 ", "s2", apart=["alice smith", "alicesmith"]) == ["its surrounding whitespace is stripped"]
    assert key_causes(LONG + "-a", LONG + "-b")[-1].startswith("it is cut short (the two agree on their first 1,033")
    assert key_causes("bob", "alice") == []


def test_a_history_holding_anothers_messages_is_told_shared_read_too_or_moved():
    def said(label):
        return [Message("user", f"{label} 1"), Message("assistant", f"{label} 2")]
    a, b = said("a"), said("b")

    def found(loaded):
        return mixed_up({"a": a, "b": b}, loaded, repr, lambda writer, reader, how: f"{writer}->{reader} {how}", "?")
    assert found({"a": a, "b": b}) is None
    assert found({"a": a + b, "b": a + b}) == ("a", "'a' and 'b' share a history: each loads the other's messages; "
                                                    f"b->a {SHARED}")
    assert found({"a": a + b, "b": b})[1].endswith(f"b->a {READ_TOO}")
    assert found({"a": [], "b": b + a}) == ("a", f"what is appended under 'a' is loaded under 'b', and 'a' loads 0 "
                                                 f"of its 2: a->b {MOVED}")


def test_the_causes_read_as_the_evidence_allows():
    assert id_cause(" s2 ", "s2", MOVED, apart=["alice smith", "alicesmith"]) == (
        "the id is changed where it is written, and not where it is read: its surrounding whitespace is stripped")
    assert id_cause("alice2", "alice", READ_TOO).startswith("the load of 'alice' reads keys by a pattern")
    assert "evidence fits several causes" in id_cause("a b", "ab", SHARED)
    assert id_cause("x1", "y2", SHARED) is None
    assert tenant_cause(("bob", "s1"), (None, "bob:s1")).startswith(
        "the user id and the session id are joined with ':' into one key")
    assert tenant_cause(("bob", "s1"), ("carol", "s1")).startswith("the same session id under two users is one "
                                                                    "conversation: the user id is left out of the key")
    assert tenant_cause(("bob", "s1"), ("carol", "s2")) is None


def test_of_the_owners_mixed_up_the_first_whose_cause_the_ids_show_is_told():
    def said(label):
        return [Message("user", f"{label} 1")]
    appended = {"x": said("x"), "y": said("y"), "Alice": said("Alice"), "alice": said("alice")}
    loaded = {"x": said("x") + said("y"), "y": said("x") + said("y"), "Alice": said("Alice") + said("alice"),
              "alice": said("Alice") + said("alice")}
    owner, text = mixed_up(appended, loaded, repr, id_cause, "unknown")
    assert owner == "Alice" and text.endswith("it is folded to one letter case"), text
    owner, text = mixed_up({key: appended[key] for key in "xy"}, loaded, repr, id_cause, "unknown")
    assert (owner, text) == ("x", "'x' and 'y' share a history: each loads the other's messages; unknown")
