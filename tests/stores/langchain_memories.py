"""LangChain's memories over its ``RedisChatMessageHistory``, each behind the thinnest adapter that
drives it as an application does, and a chat history of LangChain's interface with only its async
methods: stores of the verdicts table (tests/stores/libraries.py) and of the correct-store corpus.

Each library's stores are a module of their own, which imports only that library: a writer process
of the concurrency scenarios imports the store's module anew, as a replica would.
"""

import json
import warnings

with warnings.catch_warnings():   # langchain-community warns at import that it is being sunset
    warnings.simplefilter("ignore")
    from langchain_classic.memory import ConversationBufferWindowMemory, ConversationTokenBufferMemory
    from langchain_community.chat_message_histories import RedisChatMessageHistory
from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import convert_to_messages, message_to_dict, messages_from_dict

from tests.stores.libraries import words


class WordCountingModel(FakeListChatModel):
    """A chat model for ConversationTokenBufferMemory's ``llm``, which it asks only to count tokens."""

    responses: list = [""]

    def get_num_tokens_from_messages(self, messages, tools=None):
        return sum(words(message.content) for message in messages)


class LangChainTokenBuffer:
    """``ConversationTokenBufferMemory(max_token_limit=max_tokens)`` over a ``RedisChatMessageHistory``,
    driven as a LangChain application drives it: one ``save_context`` per exchange, a user message
    and the assistant's answer (the user message waits under its own key until the answer comes, or
    goes to the history unanswered when the next user message comes first; other messages go to the
    history as they come)."""

    def __init__(self, redis, redis_url, namespace, max_tokens):
        self.redis, self.redis_url, self.namespace, self.max_tokens = redis, redis_url, namespace, max_tokens

    def memory(self, session_id):
        history = RedisChatMessageHistory(session_id, url=self.redis_url, key_prefix=self.namespace)
        return ConversationTokenBufferMemory(chat_memory=history, llm=WordCountingModel(),
                                             max_token_limit=self.max_tokens, return_messages=True)

    def pending_key(self, session_id):
        return f"{self.namespace}pending-input:{session_id}"

    def append(self, session_id, role, content):
        memory = self.memory(session_id)
        if role == "user":   # a question left unanswered goes to the history as it is
            unanswered = self.redis.getset(self.pending_key(session_id), content)
            if unanswered is not None:
                memory.chat_memory.add_messages(convert_to_messages([{"role": "user", "content": unanswered}]))
        elif role == "assistant" and (question := self.redis.getdel(self.pending_key(session_id))) is not None:
            memory.save_context({"input": question}, {"output": content})
        else:
            memory.chat_memory.add_messages(convert_to_messages([{"role": role, "content": content}]))

    def get(self, session_id):
        pending = self.redis.get(self.pending_key(session_id))
        return [*self.memory(session_id).buffer_as_messages,
                *([{"role": "user", "content": pending}] if pending is not None else [])]

    def clear(self, session_id):
        self.memory(session_id).clear()
        self.redis.delete(self.pending_key(session_id))


class LangChainWindow:
    """``ConversationBufferWindowMemory(k=max_messages)`` over a ``RedisChatMessageHistory``: each
    message added to the history, the memory's ``buffer_as_messages`` read back."""

    def __init__(self, redis_url, namespace, max_messages, ttl):
        self.redis_url, self.namespace, self.max_messages, self.ttl = redis_url, namespace, max_messages, ttl

    def memory(self, session_id):
        history = RedisChatMessageHistory(session_id, url=self.redis_url, key_prefix=self.namespace, ttl=self.ttl)
        return ConversationBufferWindowMemory(chat_memory=history, k=self.max_messages, return_messages=True)

    def append(self, session_id, role, content):
        self.memory(session_id).chat_memory.add_messages(convert_to_messages([{"role": role, "content": content}]))

    def get(self, session_id):
        return self.memory(session_id).buffer_as_messages

    def clear(self, session_id):
        self.memory(session_id).clear()


class AsyncOnlyHistory(BaseChatMessageHistory):
    """A LangChain chat history that implements only the async methods (over redis.asyncio), as
    LangChain allows: the suite drives it through aadd_messages, aget_messages and aclear."""

    def __init__(self, session_id, redis, namespace, ttl):
        self.redis, self.key, self.ttl = redis, f"{namespace}history:{session_id}", ttl

    async def aadd_messages(self, messages):
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.rpush(self.key, *(json.dumps(message_to_dict(message)) for message in messages))
            pipe.expire(self.key, self.ttl)
            await pipe.execute()

    async def aget_messages(self):
        return messages_from_dict([json.loads(raw) for raw in await self.redis.lrange(self.key, 0, -1)])

    async def aclear(self):
        await self.redis.delete(self.key)

    def clear(self):
        raise NotImplementedError("this history is async only: use aclear")
