"""The reference model against itself: the window checker accepts exactly the histories the model
allows under each window policy, the expected histories are exact, and every mismatch gets a
diagnosis in the policy's words."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_regression.contract.rules import Message
from memory_regression.reference.window_problems import compaction_problem, window_problem
from memory_regression.reference.diagnosis import diagnose, fresh_instance_loads, lost_after
from memory_regression.reference.model import (POLICIES, SUFFIX, WindowPolicy, compacted_window, count_window,
    expected_count_window, expected_token_window, summarised, summarize, token_budget)

contents = st.lists(st.text(alphabet="abcdefgh ", min_size=0, max_size=12), min_size=0, max_size=12,
                    unique=True)


def messages(texts):
    return [Message("user" if i % 2 == 0 else "assistant", t) for i, t in enumerate(texts)]


def cost(content):
    return len(content) + 1


@settings(max_examples=300, deadline=None)
@given(contents, st.integers(min_value=1, max_value=60))
def test_token_checker_accepts_exactly_what_the_model_allows(texts, budget):
    appended = messages(texts)
    expected = expected_token_window(appended, budget, cost)
    window = token_budget(budget, cost)
    assert window_problem(appended, expected, window) is None
    newest_alone_over = bool(appended) and cost(appended[-1].content) > budget
    for start in range(len(appended) + 1):  # every suffix
        suffix = appended[start:]
        allowed = suffix == expected or (newest_alone_over and suffix == appended[-1:])
        assert (window_problem(appended, suffix, window) is None) == allowed
    if len(appended) >= 2:  # a history that is not a suffix is always refused
        assert window_problem(appended, appended[:1], window) is not None


@settings(max_examples=300, deadline=None)
@given(contents, st.integers(min_value=1, max_value=15))
def test_count_window_and_diagnosis(texts, window):
    appended = messages(texts)
    expected = expected_count_window(appended, window)
    assert len(expected) == min(len(appended), window) and expected == appended[len(appended) - len(expected):]
    assert diagnose(expected, expected, appended) is None
    for wrong in (appended, expected[::-1], expected[1:], [Message("system", m.content) for m in expected]):
        if wrong != expected:
            assert diagnose(expected, wrong, appended)


def test_diagnosis_wording():
    appended = messages(["a", "b", "c", "d"])
    assert diagnose(appended, appended[::-1], appended) == "history is in reverse order (4 messages, newest first)"
    assert diagnose(appended, appended[1:], appended) == ("lost message 1 of 4 (user: 'a'): history has 3 messages, "
                                                         "expected 4")
    assert diagnose(appended[2:], appended[1:], appended) == ("kept 3 messages, expected 2: message 2 of 4 should "
                                                              "have been trimmed")
    assert diagnose([], [Message("system", "hi")], appended) == ("history holds 1 message never appended to "
                                                                 "this session, first system: 'hi'")
    altered = [*appended[:3], Message("assistant", "dX")]
    assert diagnose(appended, altered, appended) == ("message 4 of the history was altered: expected 1 "
                                                     "characters, got 2, the first 1 equal")
    swapped = [*appended[:3], Message("assistant", "e")]
    assert diagnose(appended, swapped, appended) == ("message 4 of the history was altered: first difference "
                                                     "at character 0: expected 'd', got 'e'")


def test_a_cause_is_named_only_where_the_histories_show_it():
    """Sorted by text, the oldest kept, the firsts after an event lost, a new instance loading right:
    each named when the histories show it, and not for a history that differs otherwise."""
    appended = messages(["b", "a", "d", "c"])
    by_text = sorted(appended, key=lambda m: (m.role, m.content))
    runs = "history is reordered within runs of consecutive appends, each run sorted by its messages' text"
    assert diagnose(appended, by_text, appended).startswith(runs)
    longer = [*appended, *messages(["f", "e", "h", "g"])]   # two seconds of appends, each sorted as a sorted set ties
    in_runs = [*by_text, *sorted(longer[4:], key=lambda m: (m.role, m.content))]
    assert diagnose(longer, in_runs, longer).startswith(runs)
    assert not diagnose(appended, [appended[0], appended[2], appended[1], appended[3]], appended).startswith(
        "history is reordered within runs")   # reordered, but not by text
    assert not diagnose(appended, [appended[1], appended[0], *appended[2:]], appended).startswith(
        "history is reordered within runs")   # a message and its reply swapped: sorted by role, but proves nothing
    assert window_problem(appended, appended[:2], count_window(2)) == (
        "kept the oldest 2 messages of 4 instead of the newest: the trim cuts the wrong end "
        "(on a list, LTRIM key 0 N-1 keeps the first N)")
    assert window_problem(appended, appended[1:3], count_window(2)).startswith("position 1 holds")
    assert lost_after(appended, [*appended[:2], appended[3]], [appended[2]], "a kill").startswith(
        "the lost message is the first appended after a kill, and its append returned")
    assert lost_after(appended, [*appended[:2], appended[3]], [appended[2]], "a kill",
                      lambda message: "MULTI: RPUSH k m; EXEC").startswith(   # the server ran its write
        "the lost message is the first appended after a kill; its append returned, and the server ran its write "
        "(MULTI: RPUSH k m; EXEC): the message was stored and lost afterwards")
    assert lost_after(appended, appended[2:], [appended[2]], "a kill") is None   # lost others too
    assert lost_after(appended, [*appended[:2], appended[0], appended[3]], [appended[2]], "a kill") is None
    said = [Message("user", "  hi  "), Message("assistant", "你好"), Message("user", "x" * 100)]
    for index, changed, named in ((0, "hi", "message 1 of the history was altered: its surrounding whitespace was "
                                             "stripped ('  hi  ' came back as 'hi')"),
                                  (1, "你好".encode().decode("latin-1"), "message 2 of the history was altered: its "
                                                                        "UTF-8 bytes were read as latin-1 (mojibake)"),
                                  (2, "x" * 64, "message 3 of the history was altered: it was cut at 64 characters "
                                                "(of 100)")):
        altered = [*said[:index], Message(said[index].role, changed), *said[index + 1:]]
        assert diagnose(said, altered, said).startswith(named), (named, altered)
    assert fresh_instance_loads(appended, appended, "instance 1 answers from a cache") == (
        "a new store instance loads the 4 messages expected, so Redis holds them: instance 1 answers from a cache")
    assert fresh_instance_loads(appended, appended[1:], "instance 1 answers from a cache") is None


# -- window policies ----------------------------------------------------------------------------------

def policy(name):
    return next(p for p in POLICIES if str(p) == name)


START, KEEP, BOTH = policy("start-on-user"), policy("keep-system"), policy("start-on-user,keep-system")
HINT = "; this is what --window-policy {} expects: if the store means to do that, pass it"

# costs (len + 1): 4, then 3 each
SESSION = [Message("system", "sys"), Message("user", "u1"), Message("assistant", "a1"), Message("tool", "t1"),
           Message("assistant", "a2"), Message("user", "u2"), Message("assistant", "a3")]


def contents(history):
    return [m.content for m in history]


def test_policies_are_every_combination_of_rules_fewest_first():
    assert [str(p) for p in POLICIES] == ["suffix", "start-on-user", "keep-system", "start-on-user,keep-system"]
    assert POLICIES[0] == SUFFIX == WindowPolicy()


@pytest.mark.parametrize("name, kept", [
    ("suffix", [["a3"], ["u2", "a3"], ["a2", "u2", "a3"], ["t1", "a2", "u2", "a3"]]),
    # never starts with an assistant or tool message; N=1 and the newest is the assistant's: empty
    ("start-on-user", [[], ["u2", "a3"], ["u2", "a3"], ["u2", "a3"]]),
    # the system message stays and counts: N=1 keeps it alone
    ("keep-system", [["sys"], ["sys", "a3"], ["sys", "u2", "a3"], ["sys", "a2", "u2", "a3"]]),
    ("start-on-user,keep-system", [["sys"], ["sys"], ["sys", "u2", "a3"], ["sys", "u2", "a3"]]),
])
def test_count_window_per_policy(name, kept):
    assert [contents(expected_count_window(SESSION, n, policy(name))) for n in (1, 2, 3, 4)] == kept


@pytest.mark.parametrize("name, kept", [
    ("suffix", [[], ["a3"], ["u2", "a3"], ["u2", "a3"], ["a2", "u2", "a3"]]),
    ("start-on-user", [[], [], ["u2", "a3"], ["u2", "a3"], ["u2", "a3"]]),
    # the system message (4 tokens) is kept even over the budget alone, and its cost counts
    ("keep-system", [["sys"], ["sys"], ["sys"], ["sys", "a3"], ["sys", "u2", "a3"]]),
    ("start-on-user,keep-system", [["sys"], ["sys"], ["sys"], ["sys"], ["sys", "u2", "a3"]]),
])
def test_token_window_per_policy(name, kept):
    assert [contents(expected_token_window(SESSION, b, cost, policy(name))) for b in (2, 3, 6, 7, 10)] == kept


def test_a_later_system_message_is_an_ordinary_one():
    session = [Message("user", "u1"), Message("system", "s2"), Message("assistant", "a1")]
    assert contents(expected_count_window(session, 2, BOTH)) == ["s2", "a1"]
    assert contents(expected_count_window(session, 1, BOTH)) == []


def test_the_rules_hold_for_a_history_that_needs_no_trim():
    session = [Message("assistant", "hello"), Message("user", "u1")]
    assert contents(expected_count_window(session, 5, START)) == ["u1"]
    assert contents(expected_count_window(SESSION[:1], 5, KEEP)) == ["sys"]


def test_oversize_newest_may_stay_alone_after_the_head_whatever_its_role():
    session = [*SESSION[:2], Message("user", "a long question")]      # costs 4, 3, 16
    window = token_budget(10, cost)
    assert contents(BOTH.kept(session, window)) == ["sys"]
    assert BOTH.allows(session, [session[0], session[2]], window)
    assert not BOTH.allows(session, [session[2]], window)
    answer = [*SESSION[:2], Message("assistant", "a long answer.")]   # as llama-index's ChatMemoryBuffer keeps it
    assert START.allows(answer, answer[2:], window) and SUFFIX.allows(answer, answer[2:], window)
    assert not START.allows(answer, answer[1:], window)


def test_when_the_rules_keep_nothing_the_newest_message_may_stay_alone():
    session = [*SESSION[:2], Message("assistant", "hi")]
    assert START.kept(session, count_window(1)) == [] and START.allows(session, session[2:], count_window(1))
    assert not START.allows(session, session[1:2], count_window(1))
    assert not SUFFIX.allows(session, [], count_window(1))


def problem(history, window, name="suffix", session=SESSION):
    return window_problem(session, history, window, policy(name))


def test_start_on_user_wording():
    tool_first = SESSION[3:]   # t1 a2 u2 a3
    assert problem(tool_first, count_window(4), "start-on-user") == (
        "start-on-user: the history starts with a tool message (message 4 of 7)" + HINT.format("suffix"))
    assert problem([SESSION[0], *SESSION[4:]], count_window(4), "start-on-user,keep-system") == (
        "start-on-user: after the system message, the history starts with an assistant message "
        "(message 5 of 7)" + HINT.format("keep-system"))


def test_keep_system_wording():
    assert problem(SESSION[4:], count_window(4), "keep-system") == (
        "keep-system: the leading system message was trimmed")
    assert problem(SESSION[3:], count_window(4), "keep-system") == (
        "keep-system: the leading system message was trimmed" + HINT.format("suffix"))
    not_counted = [SESSION[0], *SESSION[3:]]
    assert problem(not_counted, count_window(4), "keep-system") == (
        "keep-system: the leading system message counts toward the window, and with it the history holds "
        "5 messages, over the window of 4 messages")
    assert problem(not_counted, token_budget(13, cost), "keep-system") == (
        "keep-system: the leading system message counts toward the budget, and with it the history costs "
        "16 tokens, over the budget of 13 tokens")


def test_token_wording_under_a_policy():
    window = token_budget(12, cost)
    assert problem(SESSION[6:], window) == (
        "history is over-trimmed: it costs 3 of 12 tokens, and the next older message (3 tokens) would still fit")
    assert problem([SESSION[0]], window, "start-on-user,keep-system") == (
        "history is over-trimmed: it costs 4 of 12 tokens, and the older messages back to message 6 of 7, the "
        "nearest that may start the history (6 tokens) would still fit")
    assert problem(SESSION[3:], token_budget(10, cost), "start-on-user") == (
        "start-on-user: the history starts with a tool message (message 4 of 7)")
    assert problem(SESSION[4:], token_budget(8, cost)) == (
        "history costs 9 tokens, over the budget of 8 tokens (3 messages)")
    oversize = [*SESSION[:2], Message("user", "a long question")]
    assert problem(oversize[1:], token_budget(10, cost), "keep-system", oversize) == (
        "keep-system: the leading system message was trimmed")
    assert problem(oversize, token_budget(10, cost), "keep-system", oversize) == (
        "the newest message alone costs 16 tokens, over the budget of 10 tokens, yet 1 message older remain")


def test_hint_names_the_policy_the_history_follows():
    assert problem(SESSION[5:], count_window(3)) == (
        "lost message 5 of 7 (assistant: 'a2'): history has 2 messages, expected 3" + HINT.format("start-on-user"))
    assert problem([SESSION[0], *SESSION[5:]], count_window(3)) == (
        "position 1 holds message 1 of 7, expected message 5 of 7" + HINT.format("keep-system"))
    assert problem([SESSION[0]], count_window(2)) == (
        "history holds message 1 of 7, which should not be there" + HINT.format("start-on-user,keep-system"))
    assert problem(SESSION[3:], count_window(3)) == (
        "kept 4 messages, expected 3: message 4 of 7 should have been trimmed")


contents_with_roles = st.lists(st.tuples(st.sampled_from(("system", "user", "assistant", "tool")),
                                         st.text(alphabet="abc ", max_size=6)), max_size=10, unique_by=lambda t: t[1])


def brute_force(appended, window, policy):
    """The policy spelled out another way: of every head-plus-suffix history, the longest that keeps
    the rules and fits (the head alone when none does)."""
    keep = 1 if policy.keep_system and appended and appended[0].role == "system" else 0
    candidates = [appended[:keep] + appended[start:] for start in range(keep, len(appended) + 1)]
    fitting = [c for c in candidates if window.total(c) <= window.limit and (
        len(c) == keep or not policy.start_on_user or c[keep].role not in ("assistant", "tool"))]
    return max(fitting, key=len) if fitting else appended[:keep]


@settings(max_examples=300, deadline=None)
@given(contents_with_roles, st.integers(min_value=1, max_value=25), st.booleans(), st.sampled_from(POLICIES))
def test_every_policy_keeps_what_it_says_and_refuses_the_rest(pairs, limit, by_tokens, window_policy):
    appended = [Message(role, text) for role, text in pairs]
    window = token_budget(limit, cost) if by_tokens else count_window(max(1, limit // 5))
    expected = window_policy.kept(appended, window)
    assert expected == brute_force(appended, window, window_policy)
    assert window_problem(appended, expected, window, window_policy) is None
    keep = 1 if window_policy.keep_system and appended and appended[0].role == "system" else 0
    for start in range(len(appended) + 1):   # every suffix, and every head-plus-suffix
        for history in {tuple(appended[start:]), tuple(appended[:keep] + appended[max(start, keep):])}:
            allowed = window_policy.allows(appended, history, window)
            assert (window_problem(appended, history, window, window_policy) is None) == allowed


def test_edge_points_are_the_first_trims_at_each_role():
    """Where the window's edge (before start-on-user drops any) first falls on each role: a count
    window, with the system message kept beside it or not, and a token budget with a message over
    it alone, where the edge passes that message and falls on none, then on the next (the fourth
    append, an assistant's)."""
    turns = [Message(role, f"m{i}") for i, role in enumerate(["user", "assistant", "tool", "assistant"] * 3)]
    keep_system = next(p for p in POLICIES if p.keep_system and not p.start_on_user)
    assert SUFFIX.edge_points(turns, count_window(5)) == [6, 7, 9]
    assert keep_system.edge_points([Message("system", "s"), *turns], count_window(5)) == [6, 7, 9]
    assert keep_system.edge_points([Message("system", "s"), *turns], count_window(1)) == []
    sized = messages(["aa", "bbb", "cccccccccccc", "d", "ee"])      # costs 3, 4, 13, 2, 3
    assert SUFFIX.edge_points(sized, token_budget(8, cost)) == [4]


# -- compaction ------------------------------------------------------------------------------------

def summary_message(covered, role="system"):
    return Message(role, summarize([m.as_dict() for m in covered]))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet="abcdefgh ", max_size=12), min_size=2, max_size=12, unique=True), st.data())
def test_a_whole_compaction_of_any_prefix_is_accepted_and_every_mix_refused(texts, data):
    """A summary of the oldest k messages followed by the rest keeps the contract; so does a second
    compaction that summarises that summary too. Dropping, repeating or moving one message breaks it."""
    before = messages(texts)
    k = data.draw(st.integers(min_value=1, max_value=len(before)))
    history = [summary_message(before[:k]), *before[k:]]
    assert compaction_problem(before, history) is None
    assert summarised(history[0].content) == before[:k]
    j = data.draw(st.integers(min_value=1, max_value=len(history)))
    again = [summary_message(history[:j], role="assistant"), *history[j:]]
    assert compaction_problem(before, again) is None and summarised(again[0].content) == before[:k + j - 1]
    assert compaction_problem(before, [history[0], *before[k - 1:]]).endswith("(duplicates)")
    if len(history) > 1:
        assert "is lost" in compaction_problem(before, history[:-1])


def test_compaction_wording():
    before = messages(["a", "b", "c", "d"])
    summary = summary_message(before[:2])
    assert compaction_problem(before, before) == (
        "compact left the history as it was (4 messages): nothing was summarised")
    assert compaction_problem(before[:1], before[:1]) is None   # one message may stay as it is
    assert compaction_problem(before, []) == "compact left the session empty: the 4 messages it held are lost"
    assert compaction_problem(before, [Message("system", "Summary: " + summary.content), *before[2:]]) == (
        "the first message is not exactly the text summarize returned: the store changed the summary "
        f"({Message('system', 'Summary: ' + summary.content).describe()})")
    assert compaction_problem(before, [*before[:1], summary, *before[2:]]) == (
        "the summary is not the first message but message 2 of the history, after 1 message it covers: the "
        "originals it replaced were not all removed (duplicates)")
    assert compaction_problem(before, before[2:]) == (
        "the history holds no summary, and lost message 1 of 4 (user: 'a') and 1 more: history has 2 messages, "
        "expected 4")
    known = [(before[:2], "those the earlier summary covered")]
    assert compaction_problem(before, [summary_message(before[2:3]), before[3]], known) == (
        "message 1 of 4 is lost: neither summarised nor in the history after the summary (the summary covers 1 "
        "message, and 1 message come after it); the 2 messages lost are exactly those the earlier summary covered")
    assert "earlier summary" not in compaction_problem(before, [summary_message(before[1:3]), before[3]], known)
    assert compaction_problem(before, [summary, summary_message(before[2:3]), before[3]]).startswith(
        "the history holds a second summary")
    assert compaction_problem(before, [summary, before[3], before[2]]) == (
        "the messages after the summary are not the rest of the session in order")


def test_the_summary_counts_toward_the_window_unless_the_store_says_otherwise():
    summary, session = Message("system", "summary"), messages(["a", "b", "c"])
    assert compacted_window(summary, session[:1], count_window(3), SUFFIX, True) == [summary, session[0]]
    assert compacted_window(summary, session, count_window(3), SUFFIX, True) == session
    assert compacted_window(summary, session, count_window(3), SUFFIX, False) == [summary, *session]
    assert compacted_window(summary, session, count_window(2), SUFFIX, False) == [summary, *session[1:]]
    assert compacted_window(summary, session, token_budget(14, cost), SUFFIX, True) == [summary, *session]
    assert compacted_window(summary, session, token_budget(13, cost), SUFFIX, True) == session


def test_a_lost_repeat_is_a_lost_message_of_a_repeat():
    """Of a message that comes twice in a row, a history holding it once has lost one: counted as a
    multiset, and said to be a repeat."""
    from memory_regression.reference.diagnosis import diagnose, unmatched
    hello, again = Message("user", "hello"), Message("user", "continue")
    appended = [hello, again, again]
    assert unmatched(appended, [hello, again]) == [again]
    assert diagnose(appended, [hello, again], appended) == (
        "lost message 2 of 3 (user: 'continue', a repeat: the same message comes twice, the history holds it once): "
        "history has 2 messages, expected 3")


def test_a_repeat_dropped_from_a_full_window_is_named_at_any_window():
    """At N=20 of 21 appends, a store that drops the repeat keeps the oldest message instead: the diagnosis is
    the dropped repeat, as with a window that is not full, not a shifted position."""
    from memory_regression.reference.diagnosis import diagnose
    appended = [Message("user", f"m{i}") for i in range(1, 11)] + [Message("user", "continue")] * 2 + [
        Message("user", f"m{i}") for i in range(13, 22)]
    expected = appended[-20:]
    kept = [message for i, message in enumerate(appended) if i != 11][-20:]
    assert diagnose(expected, kept, appended) == (
        "lost message 11 of 21 (user: 'continue', a repeat: the same message comes twice, the history holds it "
        "once), and holds message 1 of 21 instead, which the window should have dropped")


def test_messages_lost_of_one_role_are_said_to_be_every_one_of_it_only_when_they_are():
    """Mastra's load leaves out the system messages: every one of them, and nothing else, is lost."""
    appended = [Message("user", "a"), Message("system", "s1"), Message("assistant", "b"), Message("system", "s2")]
    assert diagnose(appended, [appended[0], appended[2]], appended) == (
        "lost message 2 of 4 (system: 's1') and 1 more, every system message of the 4 and only those: history has "
        "2 messages, expected 4")
    more = [*appended, Message("system", "s3")]
    assert "every" not in diagnose(more, [more[0], more[2], more[4]], more)   # a system message was kept
    assert "every" not in diagnose(appended, [appended[0]], appended)          # an assistant message was lost too


def test_text_no_append_wrote_where_messages_are_missing_is_not_called_foreign():
    """Mastra and Strands lost some messages and altered others: the history holds text no append wrote, and
    appended text is missing; said as both, with the causes that fit, not as "never appended to this session"."""
    from memory_regression.reference.diagnosis import diagnose
    appended = [Message("user", f"m{i}") for i in range(1, 5)] + [Message("user", "  padded  ")]
    actual = [*appended[:3], Message("user", "padded")]
    assert diagnose(appended, actual, appended) == (
        "lost message 4 of 5 (user: 'm4') and 1 more, and holds 1 message no append wrote, first user: 'padded': "
        "the store altered what it stored or loaded, or lost those messages and holds other text")
