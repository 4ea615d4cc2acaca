"""Stores that take whole chat-completions messages: a correct one with a count window that drops
the tool results it would orphan, and broken ones that only the tool-call scenarios catch."""

import json

from tests.stores.correct import ListStore
from tests.stores.shapes import SavesDicts

ROUND_TRIP = "test_tool_calls_and_metadata_round_trip"
NO_ORPHANS = "test_window_leaves_no_orphaned_tool_result"


class ToolAwareWindow(SavesDicts):
    """Keeps the last N messages, then drops the tool results left at the start (their calls were
    trimmed), in one Lua script so that the push, the trim and the drop are one step."""

    SCRIPT = """
    redis.call('RPUSH', KEYS[1], ARGV[1])
    redis.call('LTRIM', KEYS[1], -tonumber(ARGV[2]), -1)
    while true do
      local first = redis.call('LINDEX', KEYS[1], 0)
      if not first or cjson.decode(first)['role'] ~= 'tool' then break end
      redis.call('LPOP', KEYS[1])
    end
    redis.call('EXPIRE', KEYS[1], ARGV[3])
    """

    def __init__(self, redis, namespace, max_messages, ttl):
        super().__init__(redis, namespace, ttl)
        self.lists = ListStore(redis, namespace, max_messages, ttl)

    def save(self, session_id, message):
        self.lists.redis.eval(self.SCRIPT, 1, self.lists.key(session_id), json.dumps(message, ensure_ascii=False),
                              self.lists.max_messages, self.lists.ttl)


class OrphansToolResults(SavesDicts):
    """Keeps the last N messages with LTRIM alone: when the window's edge falls between an assistant
    message and its tool results, the results stay first, without their call (llama_index#12394)."""

    CAUSE = r"is a tool result \(tool_call_id '[^']+'\) whose calling assistant message is not before it"

    def __init__(self, redis, namespace, max_messages, ttl):
        super().__init__(redis, namespace, ttl)
        self.lists = ListStore(redis, namespace, max_messages, ttl)


class DropsMetadata(SavesDicts):
    """Saves what it knows of a message, and nothing of its ``metadata`` (langchain-redis#185 lost
    ``tool_calls`` the same way)."""

    CAUSE = r"lost its metadata"

    def save(self, session_id, message):
        super().save(session_id, {key: value for key, value in message.items() if key != "metadata"})


CAUGHT_BY: dict[type, list[str]] = {
    OrphansToolResults: [NO_ORPHANS],
    DropsMetadata: [ROUND_TRIP],
}
