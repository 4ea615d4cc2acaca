"""LlamaIndex's ``ChatMemoryBuffer`` over its ``RedisChatStore``, behind the thinnest adapter that
drives it as an application does: a store of the verdicts table (tests/stores/libraries.py)."""

from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.memory import ChatMemoryBuffer
from llama_index.storage.chat_store.redis import RedisChatStore


class LlamaIndexMemoryBuffer:
    """``ChatMemoryBuffer(token_limit=max_tokens, tokenizer_fn=str.split)`` over a ``RedisChatStore``:
    ``put`` each message, ``get`` the history it keeps."""

    def __init__(self, redis, redis_url, max_tokens, ttl):
        self.store = RedisChatStore(redis_url=redis_url, redis_client=redis, ttl=ttl)
        self.max_tokens = max_tokens

    def memory(self, session_id):
        return ChatMemoryBuffer.from_defaults(chat_store=self.store, chat_store_key=session_id,
                                              token_limit=self.max_tokens, tokenizer_fn=str.split)

    def append(self, session_id, role, content):
        self.memory(session_id).put(ChatMessage(role=role, content=content))

    def get(self, session_id):
        return self.memory(session_id).get()

    def clear(self, session_id):
        self.memory(session_id).reset()
