"""Stores in shapes the contract must accept, and shapes it must reject with a clear message."""

import json
from dataclasses import asdict, dataclass
from enum import Enum

import redis

from tests.stores.correct import ListStore


def make_store(redis, max_messages):
    """A factory function, not a class: the suite builds one to find its methods."""
    return ListStore(redis, "factory:", max_messages, 3600)


def make_store_from_kwargs(**kwargs):
    """Takes everything through **kwargs: claims no capability beyond core."""
    return ListStore(kwargs["redis"], kwargs["namespace"], 10**6, kwargs["ttl"])


class ClientOrUrl(ListStore):
    """Takes one way to reach Redis, a client or a URL, and refuses both, as Microsoft Agent Framework's
    RedisHistoryProvider does ("redis_client, redis_url, and credential_provider are mutually exclusive")."""

    def __init__(self, namespace, max_messages, ttl, redis_client=None, redis_url=None):
        if (redis_client is None) == (redis_url is None):
            raise ValueError("redis_client and redis_url are mutually exclusive: give exactly one")
        client = redis_client if redis_client is not None else redis.Redis.from_url(redis_url, decode_responses=True)
        super().__init__(client, namespace, max_messages, ttl)


@dataclass
class LangChainStyleMessage:
    type: str
    content: str


class LangChainStyle(ListStore):
    """Returns LangChain-style messages: .type human/ai/system instead of .role."""

    TYPES = {"user": "human", "assistant": "ai", "system": "system"}

    def get(self, session_id):
        return [LangChainStyleMessage(self.TYPES[m["role"]], m["content"]) for m in super().get(session_id)]


class Role(str, Enum):
    """Like llama-index's MessageRole: ``str(Role.USER)`` is ``'Role.USER'`` on Python 3.11."""

    USER = "user"
    ASSISTANT = "assistant"
    SYSTEM = "system"


@dataclass
class BlockMessage:
    role: Role
    content: list


class EnumRolesAndTextBlocks(ListStore):
    """Returns roles as a str-Enum and content as a list of text blocks, split in two, the way
    llama-index's ChatMessage and LangChain's content blocks carry them."""

    def get(self, session_id):
        return [BlockMessage(Role(m["role"]), [m["content"][:1], {"type": "text", "text": m["content"][1:]}])
                for m in super().get(session_id)]


class DecodesBytes(ListStore):
    """Written for a client without decode_responses: decodes what it reads as bytes."""

    def read(self, key):
        return [raw.decode("utf-8") for raw in super().read(key)]


class NeedsSearch(ListStore):
    """Indexes each message with RediSearch (as langchain-redis and redisvl do): plain Redis lacks it."""

    def append(self, session_id, role, content):
        self.redis.execute_command("FT._LIST")
        super().append(session_id, role, content)


def make_search_store(redis):
    """Looks for its RediSearch index while it is built."""
    redis.execute_command("FT._LIST")
    return ListStore(redis, "search:", 10**6, 3600)


class OwnMethodNames(ListStore):
    """Methods the search does not find: run with --append-method remember --load-method recall."""

    remember = ListStore.append
    recall = ListStore.get
    append = get = None


class NeedsLlm:
    """Requires a parameter the contract does not provide."""

    def __init__(self, redis, llm):
        self.redis = redis


class LoadNeedsPage(ListStore):
    """Its load method needs a second argument without a default, which is nothing the contract gives."""

    def get(self, session_id, page):
        return super().get(session_id)


class TenantInMethods(ListStore):
    """Takes the tenant in its methods, beside the session id, as services' clients do (in the middle of
    append's, keyword-only in clear's): each tenant's sessions are its own. Correct, with tenants."""

    def key(self, session_id, user_id=None):
        return f"{self.namespace}messages:{json.dumps([user_id, session_id])}"

    def append(self, session_id, user_id, role, content):
        with self.redis.pipeline(transaction=True) as pipe:
            key = self.key(session_id, user_id)
            pipe.rpush(key, self.encode(role, content))
            self.trim(pipe, key)
            self.expire(pipe, key)
            pipe.execute()

    def get(self, session_id, user_id):
        return [self.decode(raw) for raw in self.redis.lrange(self.key(session_id, user_id), 0, -1)]

    def clear(self, session_id, *, user_id):
        self.redis.delete(self.key(session_id, user_id))


class Crashes(ListStore):
    """Raises on every append."""

    def append(self, session_id, role, content):
        raise ValueError("backend exploded while appending")


class SessionHistory(ListStore):
    """Built once per session (its factory takes session_id), so its methods take no session id,
    as LangChain's chat histories and OpenAI Agents' sessions are."""

    def __init__(self, session_id, redis, namespace, max_messages, ttl):
        super().__init__(redis, namespace, max_messages, ttl)
        self.session_id = session_id

    def append(self, role, content):
        super().append(self.session_id, role, content)

    def get(self):
        return super().get(self.session_id)

    def clear(self):
        super().clear(self.session_id)


class SavesDicts:
    """Takes whole chat-completions messages as dicts, ``save(session_id, message)``, and returns
    them as stored: tool calls, tool results and metadata included. It keeps every message (no
    window: a window must not orphan tool results, see tests.stores.messages)."""

    def __init__(self, redis, namespace, ttl):
        self.lists = ListStore(redis, namespace, 10**9, ttl)

    def save(self, session_id, message):
        key = self.lists.key(session_id)
        with self.lists.redis.pipeline(transaction=True) as pipe:
            self.lists.push(pipe, key, json.dumps(message, ensure_ascii=False))
            self.lists.trim(pipe, key)
            self.lists.expire(pipe, key)
            pipe.execute()

    def get_history(self, session_id):
        return self.lists.get(session_id)

    def clear(self, session_id):
        self.lists.clear(session_id)


@dataclass
class ChatTurn:
    role: str
    content: str
    tool_calls: list | None = None
    tool_call_id: str | None = None
    name: str | None = None
    metadata: dict | None = None


class TypedMessages:
    """Takes and returns its own message class, named by the annotation of its append parameter."""

    def __init__(self, redis, namespace, ttl):
        self.dicts = SavesDicts(redis, namespace, ttl)

    def add_message(self, session_id: str, turn: ChatTurn) -> None:
        self.dicts.save(session_id, asdict(turn))

    def get_messages(self, session_id: str) -> list[ChatTurn]:
        return [ChatTurn(**data) for data in self.dicts.get_history(session_id)]

    def clear(self, session_id: str) -> None:
        self.dicts.clear(session_id)


@dataclass
class TextAndParts:
    """A message class of an SDK's kind: its content named ``parts``, a list of text parts."""

    role: str
    parts: list


class PartsMessages:
    """Takes and returns TextAndParts: the suite builds them through their constructor's parameters (the
    content as a list of one part) and reads their parts back."""

    def __init__(self, redis, namespace, ttl):
        self.dicts = SavesDicts(redis, namespace, ttl)

    def add_message(self, session_id: str, message: TextAndParts) -> None:
        self.dicts.save(session_id, {"role": message.role, "parts": list(message.parts)})

    def get_messages(self, session_id: str) -> list[TextAndParts]:
        return [TextAndParts(**data) for data in self.dicts.get_history(session_id)]

    def clear(self, session_id: str) -> None:
        self.dicts.clear(session_id)


@dataclass
class Utterance:
    speaker: str
    words: str


class UtteranceLog(PartsMessages):
    """Takes a message class that has no role and no content: the suite cannot build one, which the
    binding says before any scenario (and --list before it promises a shape)."""

    def add_message(self, session_id: str, message: Utterance) -> None:
        self.dicts.save(session_id, {"role": message.speaker, "parts": [message.words]})


class NeverSuspends(ListStore):
    """``async def`` methods that do their I/O with a synchronous client (built from ``redis_url``), as
    autogen's memory does: a coroutine that never suspends, so tasks beside it run only between its
    calls. Correct: the suite's readers and writers on its loop must still take turns."""

    def __init__(self, redis_url, namespace, max_messages, ttl):
        import redis
        super().__init__(redis.Redis.from_url(redis_url, decode_responses=True), namespace, max_messages, ttl)

    async def append(self, session_id, role, content):
        super().append(session_id, role, content)

    async def get(self, session_id):
        return super().get(session_id)

    async def clear(self, session_id):
        super().clear(session_id)

    def close(self):
        self.redis.close()


class ReturnsLangChainMessages:
    """No framework's store: it takes whole messages as dicts and keeps them as JSON, but its load
    returns LangChain message objects (``convert_to_messages``), as an application that hands its
    history to a LangChain model does. What it returns is intact, read with LangChain's converters."""

    def __init__(self, redis, namespace):
        self.redis, self.namespace = redis, namespace

    def append(self, session_id, message: dict):
        self.redis.rpush(f"{self.namespace}{session_id}", json.dumps(message))

    def load(self, session_id):
        from langchain_core.messages import convert_to_messages
        raw = self.redis.lrange(f"{self.namespace}{session_id}", 0, -1)
        return convert_to_messages([json.loads(item) for item in raw])


class TenantInMethodsLeftOut(TenantInMethods):
    """Takes the tenant in its methods and keys a session by its id alone: two users' s1 are one conversation."""

    def key(self, session_id, user_id=None):
        return super().key(session_id)
