"""Stores that follow a window policy other than suffix, and broken ones only the window scenarios
catch, each run with ``--window-policy`` set to its ``RULES``.

They apply the window when loading, as llama-index's ``ChatMemoryBuffer`` and LangChain's
``trim_messages`` do, and bound what Redis holds when appending: the leading system message, and
after it the newest messages up to one more than either limit allows (N+1 messages, or up to the
first that takes the total over the token budget), so that a load still has a trim to make
(start-on-user drops leading assistant or tool messages only after a trim, as llama-index does) and
gives what it would over the whole session. Each takes a count window and a token budget
both, so one run checks both window scenarios; in the others both are roomy and nothing is trimmed.
"""

import json

from tests.stores.correct import ListStore

START_ON_USER, KEEP_SYSTEM = "start-on-user", "keep-system"

# each element is "<tokens>|<json>"; KEYS[2] holds the tokens of the whole list. Add the newest
# element's tokens to it; while the list is within ARGV[1] elements and the total within ARGV[2]
# tokens, that is all (an append costs the same at any length). Else keep the newest elements until
# ARGV[1] are kept or their tokens are over ARGV[2] (the element that takes them over is kept too), and
# the first element when ARGV[4] is 1 and its JSON starts with ARGV[3] (a system message, as ListStore
# encodes it), in one step, and count the total again
TRIM_STORAGE = """
local keep, budget = tonumber(ARGV[1]), tonumber(ARGV[2])
local function tokens_of(item) return tonumber(string.match(item, '^(%d+)|')) end
local total = redis.call('INCRBY', KEYS[2], tokens_of(redis.call('LINDEX', KEYS[1], -1)))
if redis.call('LLEN', KEYS[1]) <= keep and total <= budget then return total end
local items = redis.call('LRANGE', KEYS[1], 0, -1)
local function json(item) return string.sub(item, string.find(item, '|', 1, true) + 1) end
local pinned = ARGV[4] == '1' and #items > 0 and string.sub(json(items[1]), 1, string.len(ARGV[3])) == ARGV[3]
local first, start, kept, tokens = pinned and 2 or 1, #items + 1, 0, 0
while start > first and kept < keep and tokens <= budget do
  start = start - 1
  kept, tokens = kept + 1, tokens + tokens_of(items[start])
end
if start > first then
  if pinned then redis.call('LSET', KEYS[1], start - 2, items[1]) end
  redis.call('LTRIM', KEYS[1], pinned and start - 2 or start - 1, -1)
end
total = 0
for _, item in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do total = total + tokens_of(item) end
redis.call('SET', KEYS[2], total)
return total
"""
SYSTEM_PREFIX = json.dumps({"role": "system", "content": ""})[:-len('""}')]   # '{"role": "system", "content": '


class PolicyStore(ListStore):
    """Drops the oldest messages while the rest is over either limit; under start-on-user, after a
    drop, also every assistant or tool message that would then come first (llama-index's loop, which
    leaves a history that fits untouched: the suite's conversations open on a user message, so that
    passes for the rule); under keep-system a leading system message is kept and counted."""

    RULES: tuple[str, ...] = ()
    NOT_FIRST = ("assistant", "tool")   # roles start-on-user drops from the front after a trim

    def __init__(self, redis, namespace, max_messages, max_tokens, count_tokens, ttl):
        super().__init__(redis, namespace, max_messages, ttl)
        self.max_tokens = max_tokens
        self.count_tokens = count_tokens

    def encode(self, role, content):
        return f"{self.count_tokens(content)}|{super().encode(role, content)}"

    def decode(self, raw):
        return super().decode(raw.partition("|")[2])

    def total_key(self, key):
        return key + ":tokens"

    def trim(self, pipe, key):
        """Storage keeps one message more than the window's limits, and the leading system message
        under keep-system: the window itself is applied when loading."""
        pipe.eval(TRIM_STORAGE, 2, key, self.total_key(key), self.max_messages + 1, self.max_tokens, SYSTEM_PREFIX,
                  int(KEEP_SYSTEM in self.RULES))

    def expire(self, pipe, key):
        super().expire(pipe, key)
        pipe.expire(self.total_key(key), self.ttl)

    def clear(self, session_id):
        self.redis.delete(self.key(session_id), self.total_key(self.key(session_id)))

    def cost(self, messages):
        return sum(self.count_tokens(message["content"]) for message in messages)

    def get(self, session_id):
        messages = super().get(session_id)
        pinned = self.pinned(messages)
        return pinned + self.window(messages[len(pinned):], *self.room(pinned))

    def pinned(self, messages):
        """The leading system message, kept whatever the window (keep-system)."""
        if KEEP_SYSTEM in self.RULES and messages and messages[0]["role"] == "system":
            return messages[:1]
        return []

    def room(self, pinned):
        """What the window leaves beside the pinned message: (messages, tokens)."""
        return self.max_messages - len(pinned), self.max_tokens - self.cost(pinned)

    def window(self, messages, max_messages, max_tokens):
        start, tokens = 0, self.cost(messages)
        while start < len(messages) and (len(messages) - start > max_messages or tokens > max_tokens):
            tokens -= self.cost(messages[start:start + 1])
            start += 1
            while (START_ON_USER in self.RULES and start < len(messages)
                   and messages[start]["role"] in self.NOT_FIRST):
                tokens -= self.cost(messages[start:start + 1])
                start += 1
        return messages[start:]


class StartOnUserStore(PolicyStore):
    """llama-index's ``ChatMemoryBuffer``: the history never starts with an assistant or tool message."""

    RULES = (START_ON_USER,)


class KeepSystemStore(PolicyStore):
    """The system prompt stays, and counts toward the window."""

    RULES = (KEEP_SYSTEM,)


class StartOnUserKeepSystemStore(PolicyStore):
    """LangChain's ``trim_messages(start_on="human", include_system=True)``."""

    RULES = (START_ON_USER, KEEP_SYSTEM)


class StartOnUserOrphansTool(StartOnUserStore):
    """Drops a leading assistant message after a trim, but not a tool result: the history can start
    with a tool message whose call was trimmed (llama_index#12394)."""

    CAUSE = r"start-on-user: the history starts with a tool message"

    NOT_FIRST = ("assistant",)


class SystemDroppedWhenFull(KeepSystemStore):
    """Keeps the system message only while everything fits: once the window fills, it is trimmed like
    any other message."""

    CAUSE = r"keep-system: the leading system message was trimmed"

    def pinned(self, messages):
        fits = self.window(messages, self.max_messages, self.max_tokens) == messages
        return super().pinned(messages) if fits else []


class SystemNotCounted(StartOnUserKeepSystemStore):
    """Keeps the system message but leaves it out of the window: a message, and its tokens, too many."""

    CAUSE = r"keep-system: the leading system message counts toward the"

    def room(self, pinned):
        return self.max_messages, self.max_tokens


COUNT_WINDOW = "test_count_window_keeps_last_n"
TOKEN_WINDOW = "test_token_window_keeps_maximal_suffix"

CORRECT = (StartOnUserStore, KeepSystemStore, StartOnUserKeepSystemStore)

CAUGHT_BY: dict[type, list[str]] = {
    StartOnUserOrphansTool: [COUNT_WINDOW, TOKEN_WINDOW],
    SystemDroppedWhenFull: [COUNT_WINDOW, TOKEN_WINDOW],
    SystemNotCounted: [COUNT_WINDOW, TOKEN_WINDOW],
}
