"""Tool calls: a store that takes whole messages keeps what an agent's history must hold to be sent
back to the model: an assistant message's ``tool_calls``, a tool result's ``tool_call_id`` and
``name``, and metadata. And its window never leaves a tool result whose calling assistant message
was trimmed away: sent back, such an orphan fails the next chat-completions request with HTTP 400
("messages with role 'tool' must be a response to a preceding message with 'tool_calls'").

A store of a framework is expected to return what the framework's own conversion makes of the
messages (OpenAI Agents' items carry no tool name, for instance), so only what the store itself
loses is blamed on it.
"""

import pytest

from memory_regression.reference.conversations import check_points, tool_conversation
from memory_regression.reference.diagnosis import assert_history, orphaned_tool_result
from memory_regression.reference.model import count_window, expected_count_window, without_orphaned_results

EXCHANGES = 3


@pytest.mark.requires("tool-calls")
def test_tool_calls_and_metadata_round_trip(stores):
    """Three tool-using turns (one, two and three calls at once, with and without text beside the
    calls) come back unchanged: every ``tool_calls`` entry with its id, name and arguments, every
    tool result with its ``tool_call_id`` and ``name``, and the answers' ``metadata``.

    If this fails: the serializer keeps only role and content (``{"role": m.role, "content":
    m.content}``), drops fields it does not know, or turns ``arguments`` from a JSON string into
    an object."""
    store = stores.new()
    appended = tool_conversation(EXCHANGES)
    store.append_all("tools", appended)
    expected = store.stored_form(appended)
    assert_history(expected, store.load("tools"), expected,
                   context=f"round trip of {EXCHANGES} tool-using turns ({len(appended)} messages): ")


@pytest.mark.requires("tool-calls", "count-window")
def test_window_leaves_no_orphaned_tool_result(stores, window):
    """Tool-using turns (2N+3 messages) are appended; after k appends, at 0, 1, N-1, N, N+1 and the
    last, at the first k where the window's edge falls on each role (a tool result among them), and
    at 16 more k spread over the conversation (the same on every run), one load must give what the
    window policy keeps of the last N messages, without the tool results at its start whose calls it
    trimmed: no tool result may come without its call before it. The loads are bounded, so the
    scenario's cost grows linearly with N.

    If this fails with "orphaned": the window cut between an assistant message and its tool
    results, and the store kept the results; drop them with it (trim to the last N, then drop the
    tool messages at the start). If it fails otherwise, the store drops more, or other, messages
    than those."""
    policy = stores.window_policy
    messages = tool_conversation(window)[:2 * window + 3]
    fixed = (0, 1, window - 1, window, window + 1, len(messages),
             *policy.edge_points(messages, count_window(window)))
    store = stores.new(max_messages=window)
    appended = []
    for point in check_points(len(messages), fixed, f"tool window {window}"):
        appended.extend(store.add("tools", message) for message in messages[len(appended):point])
        history = store.load("tools")
        context = f"N={window}, after {len(appended)} appends: "
        orphan = orphaned_tool_result(history)
        if orphan:
            raise AssertionError(context + orphan)
        assert_history(without_orphaned_results(expected_count_window(appended, window, policy), policy),
                       history, appended, context=context)
