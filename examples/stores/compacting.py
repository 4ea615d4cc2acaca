"""A compacting store: keeps the last N messages of each session and, on ``compact``, replaces the
oldest of them with one summary message, written by the summariser it was built with.

Shape: ``CompactingStore(redis, max_messages, summarize, ttl=None, namespace="chat:", keep_recent=2)``
with ``append``/``get``/``clear``/``compact``.

Append is RPUSH, LTRIM ``-N -1`` and EXPIRE in one MULTI/EXEC. Compact reads the session, summarises
all but the newest ``keep_recent`` messages (at least one, when the session holds two or more), and
replaces them in one Lua script, which first checks that the session still starts with exactly the
messages it summarised: an append in the meantime went to the tail and changes nothing there, so it
is kept; a trim by the window moved the head, and then compact reads and summarises again (a few
times at most, then it raises). A summariser that raises, or a connection lost before the script
ran, leaves the session as it was. The summary is a message of the session like any other
(``summary_in_window = True``): it counts as one message toward N, and the window trims it once it
is the oldest. A second compaction summarises the first summary with the messages after it.
"""

import json

SUMMARY_ROLE = "system"
COMPACT_ATTEMPTS = 5

# KEYS[1] the session; ARGV[1] the summary message, ARGV[2] how many messages it replaces, ARGV[3] the
# TTL in seconds (0: none), ARGV[4..] those messages as read. Returns 1 if replaced, 0 if the head changed.
_REPLACE_HEAD = """
local count = tonumber(ARGV[2])
local head = redis.call('LRANGE', KEYS[1], 0, count - 1)
if #head ~= count then return 0 end
for i = 1, count do
  if head[i] ~= ARGV[3 + i] then return 0 end
end
redis.call('LTRIM', KEYS[1], count, -1)
redis.call('LPUSH', KEYS[1], ARGV[1])
if tonumber(ARGV[3]) > 0 then redis.call('EXPIRE', KEYS[1], ARGV[3]) end
return 1
"""


class CompactingStore:
    summary_in_window = True   # the summary counts toward max_messages, as one message

    def __init__(self, redis, max_messages, summarize, ttl=None, namespace="chat:", keep_recent=2):
        if max_messages < 1:
            raise ValueError("max_messages must be at least 1")
        self.redis = redis
        self.max_messages = max_messages
        self.summarize = summarize
        self.ttl = ttl
        self.namespace = namespace
        self.keep_recent = keep_recent
        self._replace_head = redis.register_script(_REPLACE_HEAD)

    def _key(self, session_id):
        return f"{self.namespace}compacting:{session_id}"

    @staticmethod
    def _encode(role, content):
        return json.dumps({"role": role, "content": content}, ensure_ascii=False)

    def append(self, session_id, role, content):
        key = self._key(session_id)
        with self.redis.pipeline(transaction=True) as pipe:
            pipe.rpush(key, self._encode(role, content))
            pipe.ltrim(key, -self.max_messages, -1)
            if self.ttl:
                pipe.expire(key, self.ttl)
            pipe.execute()

    def get(self, session_id):
        return [json.loads(raw) for raw in self.redis.lrange(self._key(session_id), 0, -1)]

    def clear(self, session_id):
        self.redis.delete(self._key(session_id))

    def compact(self, session_id):
        """Replace the oldest messages with their summary; return how many it replaced (0: too few)."""
        key = self._key(session_id)
        for _ in range(COMPACT_ATTEMPTS):
            raw = self.redis.lrange(key, 0, -1)
            if len(raw) < 2:
                return 0
            head = raw[:max(1, len(raw) - self.keep_recent)]
            summary = self.summarize([json.loads(item) for item in head])
            if self._replace_head(keys=[key], args=[self._encode(SUMMARY_ROLE, summary), len(head),
                                                    self.ttl or 0, *head]):
                return len(head)
        raise RuntimeError(f"compact: the session changed at its head {COMPACT_ATTEMPTS} times while it was "
                           "being summarised")
