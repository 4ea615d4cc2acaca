"""The memories that libraries build over their Redis stores, each behind the thinnest adapter that
drives it as an application does, and the table of every library store the suite is run on
(:data:`LIBRARY_STORES`; those of npm packages, run through the Node.js driver: :data:`NODE_LIBRARY_STORES`):
tests/verdicts/test_frameworks.py and tests/verdicts/test_foreign.py check their verdicts, bench/verdicts.py
writes them to docs/frameworks.md.

The three stores themselves (LangChain's ``RedisChatMessageHistory``, LlamaIndex's
``RedisChatStore``, OpenAI Agents' ``RedisSession``) need no adapter: the suite runs them as they are.
"""

import json
import warnings
from dataclasses import dataclass

with warnings.catch_warnings():   # langchain-community warns at import that it is being sunset
    warnings.simplefilter("ignore")
    from langchain_classic.memory import ConversationBufferWindowMemory, ConversationTokenBufferMemory
    from langchain_community.chat_message_histories import RedisChatMessageHistory
from agno.agent import Agent
from agno.db.redis import RedisDb
from langchain.agents import create_agent
from langchain.agents.middleware import before_model
from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.language_models.fake_chat_models import FakeListChatModel, GenericFakeChatModel
from langchain_core.messages import (RemoveMessage, convert_to_messages, message_to_dict, messages_from_dict,
                                     trim_messages)
from langgraph.checkpoint.redis import RedisSaver
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.prebuilt import create_react_agent
from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.memory import ChatMemoryBuffer
from llama_index.storage.chat_store.redis import RedisChatStore


def words(text):
    """The token counter both sides use for the rows below: one token per whitespace-separated word
    (what ChatMemoryBuffer's ``tokenizer_fn=str.split`` counts over the joined history)."""
    return len(text.split())


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


def never_called_model():
    """The agents' model: the suite stops an agent's graph before its model node, so it answers nothing."""
    return GenericFakeChatModel(messages=iter(()))


def react_agent_trimming_to_budget(redis_url, max_tokens, count_tokens):
    """LangGraph's ``create_react_agent`` over a ``RedisSaver``, whose ``pre_model_hook`` sends the model
    the system prompt and the last messages of the thread that fit ``max_tokens`` beside it, starting on a
    user message, as LangGraph's short-term memory guide writes it (``trim_messages`` into
    ``llm_input_messages``)."""
    def pre_model_hook(state):
        return {"llm_input_messages": trim_messages(
            state["messages"], strategy="last", max_tokens=max_tokens, start_on="human", include_system=True,
            token_counter=lambda messages: sum(count_tokens(message.content) for message in messages))}
    return create_react_agent(never_called_model(), [], pre_model_hook=pre_model_hook,
                              checkpointer=RedisSaver(redis_url=redis_url))


def agent_trimming_to_window(redis_url, max_messages):
    """LangChain's ``create_agent`` over a ``RedisSaver``, whose ``before_model`` middleware keeps the
    system prompt and the last messages of the thread, ``max_messages`` in all, starting on a user
    message, in the state itself, as
    LangChain's short-term memory guide writes it (``RemoveMessage(REMOVE_ALL_MESSAGES)``, then those)."""
    @before_model
    def keep_window(state, runtime):
        kept = trim_messages(state["messages"], strategy="last", max_tokens=max_messages, token_counter=len,
                             start_on="human", include_system=True)
        return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *kept]}
    return create_agent(never_called_model(), [], middleware=[keep_window],
                        checkpointer=RedisSaver(redis_url=redis_url))


def agno_agent_replaying_messages(redis_url, namespace, ttl, max_messages):
    """An agno ``Agent`` over a ``RedisDb`` that replays the last ``max_messages`` messages of the session
    (``num_history_messages``); no model, which the suite never calls."""
    return Agent(db=RedisDb(db_url=redis_url, db_prefix=namespace, expire=ttl), add_history_to_context=True,
                 num_history_messages=max_messages)


def agno_agent_replaying_runs(redis_url, namespace, ttl, max_messages):
    """The same agent replaying the last ``max_messages`` runs (``num_history_runs``): exchanges, not messages."""
    return Agent(db=RedisDb(db_url=redis_url, db_prefix=namespace, expire=ttl), add_history_to_context=True,
                 num_history_runs=max_messages)


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


@dataclass(frozen=True)
class LibraryStore:
    package: str                 # the PyPI distribution (npm package, with ``project``) whose version the table shows
    store: str                   # what is run, in the library's words
    spec: str                    # --store
    args: tuple = ()             # further options: policy, token counter
    failing: tuple = ()          # the scenarios it fails, each a real bug or contract mismatch
    why: str = ""                # what those failures and warnings are, checked against the library alone
    warned: tuple = ()           # the scenarios that warn: a cost (storage a window does not bound, slow appends)
    may_warn: tuple = ()         # ... and those that warn on some runs: a growth the machine's speed decides
    needs_modules: bool = False  # run on a server with RediSearch and RedisJSON (Redis Stack), not plain Redis
    may_fail: tuple = ()         # the scenarios it fails on some runs only: a race its calls meet or not
    project: str = ""            # an npm package's store: the directory it runs from, whose node_modules holds it


# the footprint scenarios: a window applied only to what is read leaves Redis holding every message
FOOTPRINT = "test_storage_stays_within_the_window"
TOKEN_FOOTPRINT = "test_storage_stays_within_the_token_budget"
WORD_BUDGETS = ("--token-counter", "tests.stores.libraries:words", "--model-profiles", "small-4k,llama-3-8b")

# the three stores of the libraries, run as they are
LANGCHAIN = "langchain_community.chat_message_histories:RedisChatMessageHistory"
LLAMA_INDEX = "llama_index.storage.chat_store.redis:RedisChatStore"
OPENAI_AGENTS = "agents.extensions.memory:RedisSession"

# LangGraph's checkpointers (langgraph-checkpoint-redis), run as they are on Redis Stack; every checkpoint
# holds the whole history, so appends slow as it grows (the library's serialisation: the worker's CPU
# time per append grows), which the scenarios' 10 s budgets (a scenario timeout of 40 s) show where
# they hold 200 appends (a loaded machine fits fewer, and nothing is judged)
LANGGRAPH = "langgraph.checkpoint.redis:RedisSaver"
LANGGRAPH_ASYNC = "langgraph.checkpoint.redis:AsyncRedisSaver"
LANGGRAPH_SHALLOW = "langgraph.checkpoint.redis:ShallowRedisSaver"
CHECKPOINTER = "LangGraph checkpointer: append(session_id, [message, ...])"
GROWING = ("test_no_silent_cap", "test_many_fast_appends_keep_order")

CHECKPOINTS = ("a known design: every checkpoint holds the whole history, so appends slow as it grows (warned "
               "where the budget holds the 200 appends a growth is judged on); runs of one thread that overlap fork "
               "it, and the input of a run that failed stays pending until a new run drops it, so neither is judged "
               "(tests/verdicts/test_langgraph.py and tests/unit/test_langgraph.py show them with LangGraph alone)")

# agno's database, run as it is: every failure is agno's own (tests/verdicts/test_agno.py shows each with
# agno alone); each append reads every earlier run again, so appends slow as the session grows
AGNO = "agno.db.redis:RedisDb"
AGNO_FAILING = ("test_active_session_outlives_its_ttl", "test_append_refreshes_ttl",
                "test_idle_session_disappears_completely", "test_every_key_has_ttl_within_configured",
                "test_store_raises_when_the_server_is_down", "test_eviction_leaves_sessions_whole_or_gone")
AGNO_WHY = ("known designs of agno that are bugs of a memory: each run is a key of its own, whose TTL later runs do "
            "not refresh (an active session loses its oldest messages) and which eviction removes alone; its index "
            "sets get no TTL; a read that fails is taken for a session that does not exist (the run goes on from an "
            "empty history); and each append reads every earlier run again. Its single system prompt per session "
            "is its rule, not a failure (tests/verdicts/test_agno.py shows each with agno alone)")

# Google ADK's Redis session service (google-adk-redis), run as it is: its failures are its own and its client
# library's (tests/verdicts/test_adk.py shows each with ADK alone); every append reads and rewrites the whole
# session, so appends slow as it grows
ADK = "google_adk_redis:RedisMemorySessionService"
ADK_FAILING = ("test_store_neither_duplicates_nor_loses_a_message_whose_reply_was_lost",
               "test_store_reconnects_after_its_connections_are_killed", "test_a_restart_between_turns_loses_nothing")
ADK_WHY = ("a bug of the service: it retries its watched transaction on WatchError, which redis-py raises also when "
           "the connection died during EXEC, after the transaction ran, so an append whose reply was lost is stored "
           "twice; "
           "a defect of its client library: the redis.asyncio client it builds (redis-py 8.1) fails once the server "
           "closed its connections (redis/redis-py#4252); and each append reads and rewrites the whole session "
           "(tests/verdicts/test_adk.py shows each with ADK alone)")

# the agents over those stores run without the groups that judge the store under them alone (its own row's),
# so that what an agent adds, the window of what it sends the model, is what its row shows
AGENT_ONLY = ("-k", "not expiry and not ttl and not faults and not memory_pressure and not restart")
WITHOUT_STORE_GROUPS = "without the groups that judge the {} alone: its own row's"

# LangGraph agents over RedisSaver whose hooks window what the model is sent, as the guides write them
# (tests.stores.libraries' factories are the applications' code, not adapters); on Redis Stack
HOOK_AGENT = "tests.stores.libraries:react_agent_trimming_to_budget"
MIDDLEWARE_AGENT = "tests.stores.libraries:agent_trimming_to_window"
AGENT_POLICY = ("--window-policy", "start-on-user,keep-system", "--scenario-timeout", "40")

# agno agents over RedisDb, windowing what they replay
AGNO_MESSAGES = "tests.stores.libraries:agno_agent_replaying_messages"
AGNO_RUNS = "tests.stores.libraries:agno_agent_replaying_runs"
REPLAY_WINDOW = ("a known design: the agent windows what it replays, never the database, which keeps every message of "
                 "the session")

# spec -> (shape, capabilities, conformance level on a real server)
LIBRARIES = {
    LANGCHAIN: ("LangChain BaseChatMessageHistory: add_message(message)",
                ["clear", "core", "namespace", "tool-calls", "ttl"],
                "core+ttl+namespace+clear+tool-calls+bounded-storage+steady-appends"),
    LLAMA_INDEX: ("LlamaIndex BaseChatStore: add_message(session_id, message)",
                  ["clear", "core", "tool-calls", "ttl"], "core+ttl+clear+tool-calls+bounded-storage+steady-appends"),
    OPENAI_AGENTS: ("OpenAI Agents Session: add_items([message, ...])",
                    ["async", "clear", "core", "namespace", "tool-calls", "ttl"],
                    "core+ttl+namespace+clear+tool-calls+async+bounded-storage+steady-appends"),
    LANGGRAPH: (CHECKPOINTER, ["clear", "core", "tool-calls", "ttl"], "core+ttl+clear+tool-calls+bounded-storage"),
    LANGGRAPH_ASYNC: (CHECKPOINTER, ["async", "clear", "core", "tool-calls", "ttl"],
                      "core+ttl+clear+tool-calls+async+bounded-storage"),
    LANGGRAPH_SHALLOW: (CHECKPOINTER, ["clear", "core", "tool-calls", "ttl"],
                        "core+ttl+clear+tool-calls+bounded-storage"),
    AGNO: ("agno database: append(session_id, [message, ...])", ["clear", "core", "namespace", "tool-calls", "ttl"],
           "none"),
    ADK: ("Google ADK session service: append(session_id, [message, ...])",
          ["async", "clear", "core", "tool-calls", "ttl"], "none"),
}

LIBRARY_STORES = (
    LibraryStore("langchain-community", "RedisChatMessageHistory", LANGCHAIN),
    LibraryStore("llama-index-storage-chat-store-redis", "RedisChatStore", LLAMA_INDEX),
    LibraryStore("openai-agents", "RedisSession", OPENAI_AGENTS),
    LibraryStore("llama-index-core", "ChatMemoryBuffer over RedisChatStore",
                 "tests.stores.libraries:LlamaIndexMemoryBuffer", ("--window-policy", "start-on-user", *WORD_BUDGETS),
                 (), "a known design: ChatMemoryBuffer applies its token limit to the history it returns "
                 "(get), never to the chat store, so Redis keeps every message of the session", (TOKEN_FOOTPRINT,)),
    LibraryStore("langchain-classic", "ConversationTokenBufferMemory over RedisChatMessageHistory (without the "
                 "concurrency group: the adapter holds a user message until its answer, one exchange at a time)",
                 # it re-reads and re-counts the whole history at every exchange: the scenario timeout
                 # of 20 s gives the no-silent-cap scenario 5 s of appends (the default, 20 s)
                 "tests.stores.libraries:LangChainTokenBuffer",
                 (*WORD_BUDGETS, "--scenario-timeout", "20", "-k", "not concurrency"),
                 ("test_token_window_keeps_maximal_suffix",),
                 "a known bug: it prunes a copy of the history, so Redis is never trimmed "
                 "(langchain#5053, #10078, #18303); and it re-counts the whole history at every exchange, so "
                 "its appends slow as the session grows", (TOKEN_FOOTPRINT,),
                 ("test_no_silent_cap", "test_many_fast_appends_keep_order")),
    LibraryStore("langchain-classic", "ConversationBufferWindowMemory over RedisChatMessageHistory",
                 "tests.stores.libraries:LangChainWindow", (),
                 ("test_count_window_keeps_last_n", "test_random_operations_match_the_model",
                  "test_concurrent_writers_keep_the_window"),
                 "a contract mismatch: k counts exchanges, so it keeps 2k messages; and a known design: the window "
                 "applies to what it reads (buffer_as_messages), never to the history in Redis, which keeps every "
                 "message", (FOOTPRINT, "test_concurrent_writers_keep_the_window")),
    *(LibraryStore("langgraph-checkpoint-redis", spec.rpartition(":")[2], spec, ("--scenario-timeout", "40"),
                   why=CHECKPOINTS, may_warn=GROWING, needs_modules=True)
      for spec in (LANGGRAPH, LANGGRAPH_ASYNC, LANGGRAPH_SHALLOW)),
    LibraryStore("langgraph", "create_react_agent over RedisSaver, its pre_model_hook trimming what the model is sent "
                 f"(trim_messages; {WITHOUT_STORE_GROUPS.format('checkpointer')})", HOOK_AGENT,
                 (*AGENT_POLICY, *WORD_BUDGETS, *AGENT_ONLY), (),
                 "a known design: the hook trims what the model is sent (llm_input_messages), never the thread, and "
                 "every checkpoint holds the whole history, so Redis keeps every message, more than once",
                 (TOKEN_FOOTPRINT, "test_storage_grows_with_the_messages_kept"), GROWING, needs_modules=True),
    LibraryStore("langchain", "create_agent over RedisSaver, its before_model middleware trimming the thread "
                 f"(trim_messages, RemoveMessage; {WITHOUT_STORE_GROUPS.format('checkpointer')})", MIDDLEWARE_AGENT,
                 (*AGENT_POLICY, *AGENT_ONLY), (),
                 "a known design: the middleware trims the thread's live state, which stays within the window, but "
                 "the checkpointer keeps every earlier checkpoint, as the footprint warning says",
                 (FOOTPRINT,), GROWING, needs_modules=True),
    LibraryStore("agno", "RedisDb", AGNO, (), AGNO_FAILING, AGNO_WHY, may_warn=GROWING),
    LibraryStore("agno", f"Agent(num_history_messages=N) over RedisDb ({WITHOUT_STORE_GROUPS.format('database')})",
                 AGNO_MESSAGES, AGENT_ONLY, (), REPLAY_WINDOW, (FOOTPRINT,), GROWING),
    LibraryStore("agno", f"Agent(num_history_runs=N) over RedisDb ({WITHOUT_STORE_GROUPS.format('database')})",
                 AGNO_RUNS, AGENT_ONLY,
                 ("test_count_window_keeps_last_n", "test_random_operations_match_the_model",
                  "test_window_leaves_no_orphaned_tool_result"),
                 "a contract mismatch: num_history_runs counts runs, each a user message and what follows it, so N "
                 "runs keep up to 2N messages; and " + REPLAY_WINDOW, (FOOTPRINT,), GROWING),
    LibraryStore("google-adk-redis", "RedisMemorySessionService", ADK, (), ADK_FAILING, ADK_WHY, may_warn=GROWING),
)

# LangChain.js's Redis histories, run as they are through the Node.js driver, from tests/stores/node (whose
# package.json pins them); langchain_alone.mjs and langchain_community_alone.mjs show each failure with the
# library alone
NODE_PROJECT = "tests/stores/node"
KILLED = ("test_store_reconnects_after_its_connections_are_killed",
          "test_store_neither_duplicates_nor_loses_a_message_whose_reply_was_lost",
          "test_a_restart_between_turns_loses_nothing")
NODE_LIBRARY_STORES = (
    LibraryStore("@langchain/redis", "RedisChatMessageHistory", "node:@langchain/redis:RedisChatMessageHistory",
                 failing=KILLED, may_fail=("test_concurrent_writers_lose_nothing",), project=NODE_PROJECT,
                 why="a bug of the history: the node-redis client it makes has no 'error' listener, so a connection "
                     "the server closes ends the Node.js process (SocketClosedUnexpectedlyError); and a history's "
                     "first two calls at once both connect its client, and one throws 'Socket already opened' (the "
                     "concurrent writers meet it in some runs)"),
    LibraryStore("@langchain/community", "RedisChatMessageHistory (ioredis)",
                 "node:@langchain/community/stores/message/ioredis:RedisChatMessageHistory",
                 failing=("test_store_raises_when_the_server_is_down",
                          "test_store_neither_duplicates_nor_loses_a_message_whose_reply_was_lost"),
                 project=NODE_PROJECT,
                 why="its client library's defaults: with no server, ioredis retries each command 20 times with "
                     "backoff, so an append raises only after 10.5 s, past the suite's 10 s call timeout; and "
                     "ioredis re-sends the commands in flight when its connection drops, so an LPUSH whose reply was "
                     "lost is stored twice"),
)
