"""The table of every library store the suite is run on (:data:`LIBRARY_STORES`; those of npm packages,
run through the Node.js driver: :data:`NODE_LIBRARY_STORES`): tests/verdicts/test_frameworks.py and
tests/verdicts/test_foreign.py check their verdicts, bench/verdicts.py writes them to docs/frameworks.md.

The three stores themselves (LangChain's ``RedisChatMessageHistory``, LlamaIndex's
``RedisChatStore``, OpenAI Agents' ``RedisSession``) need no adapter: the suite runs them as they are.
The memories and agents built over them are in a module per library (``langchain_memories``,
``llama_index_memories``, ``langgraph_agents``, ``agno_agents``), which imports that library alone.
This one imports none: :func:`words`, the rows' token counter, is imported by every process that counts.
"""

from dataclasses import dataclass


def words(text):
    """The token counter both sides use for the rows below: one token per whitespace-separated word
    (what ChatMemoryBuffer's ``tokenizer_fn=str.split`` counts over the joined history)."""
    return len(text.split())


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
    venv: str = ""               # a virtual environment of its own, where its pins exclude the test extras'
    service: str = ""            # the memory service it is a client of (tests/services.py), over the run's Redis


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
DELETE_THREAD = ("and a bug: delete_thread finds the thread's checkpoints by a search index's TAG query, which does "
                 "not find a thread whose id has whitespace around it, so clearing ' alice ' leaves its history "
                 "(tests/verdicts/test_langgraph.py shows it with LangGraph alone)")

CHECKPOINTS = ("a known design: every checkpoint holds the whole history, so appends slow as it grows (warned "
               "where the budget holds the 200 appends a growth is judged on); runs of one thread that overlap fork "
               "it, and the input of a run that failed stays pending until a new run drops it, so neither is judged "
               "(tests/verdicts/test_langgraph.py and tests/unit/test_langgraph.py show them with LangGraph alone)")

# agno's database, run as it is: every failure is agno's own (tests/verdicts/test_agno.py shows each with
# agno alone); each append reads every earlier run again, so appends slow as the session grows
AGNO = "agno.db.redis:RedisDb"
AGNO_FAILING = ("test_active_session_outlives_its_ttl", "test_append_refreshes_ttl",
                "test_idle_session_disappears_completely", "test_every_key_has_ttl_within_configured",
                "test_store_raises_when_the_server_is_down", "test_eviction_leaves_sessions_whole_or_gone",
                "test_tenants_keep_their_own_conversations")
AGNO_WHY = ("known designs of agno that are bugs of a memory: each run is a key of its own, whose TTL later runs do "
            "not refresh (an active session loses its oldest messages) and which eviction removes alone; its index "
            "sets get no TTL; a read that fails is taken for a session that does not exist (the run goes on from an "
            "empty history); a session is keyed by its id alone, its user kept beside it, so one user's session "
            "s1 goes into another's; and each append reads every earlier run again. Its single system prompt per "
            "session "
            "is its rule, not a failure (tests/verdicts/test_agno.py shows each with agno alone)")

# Google ADK's Redis session service (google-adk-redis), run as it is: its failures are its own and its client
# library's (tests/verdicts/test_adk.py shows each with ADK alone); every append reads and rewrites the whole
# session, so appends slow as it grows
ADK = "google_adk_redis:RedisMemorySessionService"
ADK_FAILING = ("test_store_neither_duplicates_nor_loses_a_message_whose_reply_was_lost",
               "test_store_reconnects_after_its_connections_are_killed", "test_a_restart_between_turns_loses_nothing",
               "test_every_session_id_keeps_its_own_history", "test_tenants_keep_their_own_conversations")
ADK_WHY = ("a bug of the service: it retries its watched transaction on WatchError, which redis-py raises also when "
           "the connection died during EXEC, after the transaction ran, so an append whose reply was lost is stored "
           "twice; "
           "a defect of its client library: the redis.asyncio client it builds (redis-py 8.1) fails once the server "
           "closed its connections (redis/redis-py#4252); create_session strips the session id and get_session "
           "does not, so what is appended under ' s2 ' belongs to session 's2', and ' s2 ' is lost to the caller "
           "that keeps the id it gave; it keys a session app:user:session, so user 'bob''s session 'x:s1' is user "
           "'bob:x''s session 's1'; and each append reads and rewrites the whole session "
           "(tests/verdicts/test_adk.py shows each with ADK alone)")

# adk-session-services' Redis session service, bound by the same ADK module (its redis_url and prefix), run from
# .venv-adk-services (its google-generativeai pins protobuf below the test extras'); adk_services_alone.py shows its
# failure with ADK alone
ADK_SERVICES = "adk_session_services.redis_session:RedisSessionService"
ADK_SERVICES_WHY = ("a bug of the service: it keys a session <prefix>:sessions:app:user:session, so user 'bob''s "
                    "session 'x:s1' is user 'bob:x''s session 's1' (tests/verdicts/test_adk_services.py shows it with "
                    "ADK alone); it refuses to append to a session another writer appended to since it was read "
                    "(ValueError: stale session, as ADK's database service does), which writers of one session in "
                    "several processes meet on some runs; and a runner reads the whole session before each turn, "
                    "so appends slow as it grows")

# redis-openai-agents' AgentSession (installed without its dependencies: tests/conftest.py's NO_DEPS_INSTALLS), one
# redisvl MessageHistory per conversation in one shared index, on Redis Stack; redis_openai_agents_alone.py shows
# its failures with the library alone
REDIS_OPENAI_AGENTS = "redis_openai_agents.session:AgentSession"
REDIS_OPENAI_AGENTS_FAILING = (
    "test_no_silent_cap", "test_clear_leaves_no_keys", "test_every_session_id_keeps_its_own_history",
    "test_clearing_one_session_leaves_every_other_whole", "test_tenants_keep_their_own_conversations",
    "test_random_operations_match_the_model")
REDIS_OPENAI_AGENTS_WHY = (
    "bugs of the session: get_messages() with no top_k, documented as all messages, returns the newest 1,000; "
    "clear() clears its MessageHistory, whose index holds every conversation (one name, agent_sessions), so clearing "
    "one conversation deletes them all; user_id is kept beside the conversation, not in its key, so two users' "
    "conversations of one id are one; and redisvl's session tag folds letter case, so 'ABC' is 'abc' "
    "(tests/verdicts/test_redis_openai_agents.py shows them with the library alone)")

# redisvl's message history, run as it is on Redis Stack, one history per session (one index, named after the
# scenario's namespace, a session tag each) read through its messages: every failure is redisvl's own
# (tests/verdicts/test_redisvl.py shows each with redisvl alone); 5 s of appends (not the tests' 2 s) reach
# past its cap of 1,000 on a loaded machine too
REDISVL = "redisvl.extensions.message_history:MessageHistory"
REDISVL_ARGS = ("--store-params", "name=namespace,session_tag=session_id", "--load-method", "messages",
                "--append-budget", "5")
REDISVL_FAILING = ("test_no_silent_cap", "test_clearing_one_session_leaves_every_other_whole",
                   "test_clear_leaves_no_keys", "test_random_operations_match_the_model",
                   "test_tool_calls_and_metadata_round_trip", "test_every_session_id_keeps_its_own_history")
REDISVL_WHY = ("known designs of redisvl that are bugs of a memory: its whole history (messages) is a query of at "
               "most 1,000 results, oldest first, so a longer session loses its newest messages; clear() clears the "
               "index, emptying every session that shares it; its session tag is a search index's TAG, matched in "
               "any letter case, so sessions whose ids differ only in case share a history; and a message keeps its "
               "tool_call_id but not its "
               "tool_calls, so an assistant's tool calls are lost (tests/verdicts/test_redisvl.py shows each with "
               "redisvl alone)")

# the history of LangChain's Redis package, run as it is on Redis Stack: every failure is langchain-redis's own
# (tests/verdicts/test_langchain_redis.py shows each with it alone)
LANGCHAIN_REDIS = "langchain_redis:RedisChatMessageHistory"
LANGCHAIN_REDIS_FAILING = (
    "test_no_silent_cap", "test_many_fast_appends_keep_order", "test_every_session_id_keeps_its_own_history",
    "test_two_instances_share_history", "test_clearing_one_session_leaves_every_other_whole",
    "test_keys_stay_in_namespace",
    "test_clear_leaves_no_keys", "test_random_operations_match_the_model", "test_concurrent_writers_lose_nothing",
    "test_every_key_has_ttl_within_configured", "test_append_refreshes_ttl", "test_active_session_outlives_its_ttl",
    "test_tool_calls_and_metadata_round_trip")
LANGCHAIN_REDIS_WHY = (
    "bugs of the history: under redis-py 8.1 building one whose search index exists raises AttributeError (it reads "
    "FT.INFO's index_definition as a list, which redis-py 8.1 returns as a dict), so every scenario that builds a "
    "second history fails; each message is a key of its own whose TTL later appends do not refresh (an active "
    "session loses its oldest messages); and an assistant's tool calls are not stored "
    "(tests/verdicts/test_langchain_redis.py shows each with langchain-redis alone)")

# Microsoft Agent Framework's history provider, run as it is from .venv-agent-framework (its redis-py and redisvl pins
# exclude the test extras'); tests/stores/agent_framework_alone.py shows both failures with the library alone
AGENT_FRAMEWORK = "agent_framework_redis:RedisHistoryProvider"
AGENT_FRAMEWORK_WHY = (
    "bugs of the provider: save_messages drops a message equal to the last one stored (filter_new_messages takes it "
    "for the overlap of a replayed transcript; a repeated user message is kept), and its max_messages trim cuts "
    "between a tool call and its result, keeping the result alone; and designs of it: it counts and trims (LLEN, "
    "then LTRIM) after the push's MULTI/EXEC, so a reader between them loads more than the window; its keys carry "
    "key_prefix base32-encoded, not as a prefix; each append reads the whole session first "
    "(tests/verdicts/test_agent_framework.py shows the bugs with Agent Framework alone)")

# Strands Agents' session managers, run as they are from .venv312 (they need Python 3.12); strands_redis_alone.py and
# strands_alone.py show their failures with the library alone
STRANDS_REDIS = "redis_session_manager:RedisSessionManager"
STRANDS_VALKEY = "strands_valkey_session_manager:ValkeySessionManager"
STRANDS_AGENTS = ("an agent numbers its messages from the index it keeps in its process, so agents on one session in "
                  "several processes (replicas of a service) overwrite each other's messages, and an agent whose "
                  "session was deleted or lost (a clear by another instance, an eviction, a restart) goes on writing "
                  "messages that no agent restored from the session sees")
STRANDS_REDIS_WHY = (
    f"bugs of the manager: {STRANDS_AGENTS}; delete_session finds keys by the pattern <namespace>:<id>:* as well as "
    "its registry, so deleting 'alice' deletes 'alice:2', and it walks the whole keyspace (SCAN) to do it; and "
    "delete_session raises for a session that does not exist (tests/verdicts/test_python312.py shows them with "
    "Strands alone)")
STRANDS_VALKEY_WHY = (
    f"bugs of the manager: {STRANDS_AGENTS}; it lists and deletes a session's documents by SCAN patterns made of the "
    "id, so session 'al*' reads 'al''s messages and deleting 'alice' deletes 'alice2'; and it refuses ids holding "
    "':' (tests/verdicts/test_python312.py shows them with Strands alone)")

# Redis' agent-memory-server: its working memory through its own client, against a service started over the row's
# Redis Stack (tests/services.py), run from .venv312 (it needs Python 3.12); agent_memory_alone.py shows its failures
# with the library alone
AGENT_MEMORY = "agent_memory_client:MemoryAPIClient"
AGENT_MEMORY_FAILING = (
    "test_concurrent_writers_lose_nothing", "test_round_trip_keeps_role_content_and_order",
    "test_every_session_id_keeps_its_own_history", "test_tenants_keep_their_own_conversations",
    "test_tool_calls_and_metadata_round_trip")
AGENT_MEMORY_WHY = (
    "bugs of the client and the service: the client appends by reading the session's working memory and putting it "
    "back whole, so appends that overlap lose messages; it puts the session id in the URL's path unquoted, so 'al?' "
    "is session 'al' (and an id holding '/' is not found: refused, warned); the service joins the user id and the "
    "session id with ':' into one key, so user 'bob''s session 'x:s1' and user 'bob:x''s 's1' are one "
    "conversation; and a contract mismatch: the service refuses a message of empty content (HTTP 400), as the round "
    "trip's empty message is, and an assistant's message of tool calls alone (tool calls are not carried) "
    "(tests/verdicts/test_python312.py shows them with the library alone)")

# CAMEL's Redis key-value storage, run as it is from .venv-camel (camel-ai's pydantic and tiktoken pins exclude the
# test extras'); camel_alone.py shows its failures with the library alone
CAMEL_STORAGE = "camel.storages.key_value_storages.redis:RedisStorage"
CAMEL_FAILING = (
    "test_no_silent_cap", "test_round_trip_keeps_role_content_and_order", "test_many_fast_appends_keep_order",
    "test_two_instances_share_history", "test_loading_twice_changes_nothing", "test_concurrent_writers_lose_nothing",
    "test_store_reconnects_after_its_connections_are_killed", "test_store_raises_when_the_server_is_down",
    "test_store_neither_duplicates_nor_loses_a_message_whose_reply_was_lost",
    "test_every_session_id_keeps_its_own_history", "test_random_operations_match_the_model",
    "test_tool_calls_and_metadata_round_trip", "test_append_raises_when_memory_is_full",
    "test_eviction_leaves_sessions_whole_or_gone", "test_a_restart_between_turns_loses_nothing")
CAMEL_WHY = (
    "bugs of the storage: save replaces the conversation with the records it is given (one SET), where "
    "ChatHistoryMemory saves each turn's new records, so a conversation keeps its last turn only; and save, load and "
    "clear log every error and swallow it, so a write that failed returns and a read that failed is an empty "
    "history (tests/verdicts/test_camel.py shows both with CAMEL alone)")

# the agents over those stores run without the groups that judge the store under them alone (its own row's),
# so that what an agent adds, the window of what it sends the model, is what its row shows
AGENT_ONLY = ("-k", "not expiry and not ttl and not faults and not memory_pressure and not restart and not identity")
WITHOUT_STORE_GROUPS = "without the groups that judge the {} alone: its own row's"

# LangGraph agents over RedisSaver whose hooks window what the model is sent, as the guides write them
# (tests.stores.libraries' factories are the applications' code, not adapters); on Redis Stack
HOOK_AGENT = "tests.stores.langgraph_agents:react_agent_trimming_to_budget"
MIDDLEWARE_AGENT = "tests.stores.langgraph_agents:agent_trimming_to_window"
AGENT_POLICY = ("--window-policy", "start-on-user,keep-system", "--scenario-timeout", "40")

# agno agents over RedisDb, windowing what they replay
AGNO_MESSAGES = "tests.stores.agno_agents:agno_agent_replaying_messages"
AGNO_RUNS = "tests.stores.agno_agents:agno_agent_replaying_runs"
REPLAY_WINDOW = ("a known design: the agent windows what it replays, never the database, which keeps every message of "
                 "the session")

# the stores a framework binding recognises by their base class: spec -> (shape, capabilities, conformance level
# on a real server)
LIBRARIES = {
    LANGCHAIN: ("LangChain BaseChatMessageHistory: add_message(message)",
                ["clear", "core", "namespace", "tool-calls", "ttl"],
                "core+ttl+namespace+clear+tool-calls+bounded-storage+steady-appends+any-session-id+prefixed-keys"),
    LLAMA_INDEX: ("LlamaIndex BaseChatStore: add_message(session_id, message)",
                  ["clear", "core", "tool-calls", "ttl"],
                  "core+ttl+clear+tool-calls+bounded-storage+steady-appends+any-session-id"),
    OPENAI_AGENTS: ("OpenAI Agents Session: add_items([message, ...])",
                    ["async", "clear", "core", "namespace", "tool-calls", "ttl"],
                    "core+ttl+namespace+clear+tool-calls+async+bounded-storage+steady-appends+any-session-id"
                    "+prefixed-keys"),
    LANGGRAPH: (CHECKPOINTER, ["clear", "core", "tool-calls", "ttl"],
                "core+ttl+tool-calls+bounded-storage+any-session-id"),
    LANGGRAPH_ASYNC: (CHECKPOINTER, ["async", "clear", "core", "tool-calls", "ttl"],
                      "core+ttl+tool-calls+async+bounded-storage+any-session-id"),
    LANGGRAPH_SHALLOW: (CHECKPOINTER, ["clear", "core", "tool-calls", "ttl"],
                        "core+ttl+tool-calls+bounded-storage+any-session-id"),
    AGNO: ("agno database: append(session_id, [message, ...])",
           ["clear", "core", "namespace", "tenants", "tool-calls", "ttl"], "none"),
    ADK: ("Google ADK session service: append(session_id, [message, ...])",
          ["async", "clear", "core", "tenants", "tool-calls", "ttl"], "none"),
    LANGCHAIN_REDIS: ("LangChain BaseChatMessageHistory: add_message(message)",
                      ["clear", "core", "namespace", "tool-calls", "ttl"], "none"),
}

LIBRARY_STORES = (
    LibraryStore("langchain-community", "RedisChatMessageHistory", LANGCHAIN),
    LibraryStore("llama-index-storage-chat-store-redis", "RedisChatStore", LLAMA_INDEX),
    # a store built per session, whose control appends (each tenth of 37 against about 9 of them in the tests' 2 s)
    # warned of growth once in a clean-clone CI run on a loaded machine (2.1x on the wall clock, its CPU time flat):
    # left to the table's full budgets, where it never warned
    LibraryStore("openai-agents", "RedisSession", OPENAI_AGENTS, may_warn=GROWING),
    LibraryStore("llama-index-core", "ChatMemoryBuffer over RedisChatStore",
                 "tests.stores.llama_index_memories:LlamaIndexMemoryBuffer",
                 ("--window-policy", "start-on-user", *WORD_BUDGETS), (),
                 "a known design: ChatMemoryBuffer applies its token limit to the history it returns (get), never to "
                 "the chat store, so Redis keeps every message of the session", (TOKEN_FOOTPRINT,)),
    LibraryStore("langchain-classic", "ConversationTokenBufferMemory over RedisChatMessageHistory (without the "
                 "concurrency group: the adapter holds a user message until its answer, one exchange at a time)",
                 # it re-reads and re-counts the whole history at every exchange: the scenario timeout
                 # of 20 s gives the no-silent-cap scenario 5 s of appends (the default, 20 s)
                 "tests.stores.langchain_memories:LangChainTokenBuffer",
                 (*WORD_BUDGETS, "--scenario-timeout", "20", "-k", "not concurrency"),
                 ("test_token_window_keeps_maximal_suffix",),
                 "a known bug: it prunes a copy of the history, so Redis is never trimmed "
                 "(langchain#5053, #10078, #18303); and it re-counts the whole history at every exchange, so "
                 "its appends slow as the session grows", (TOKEN_FOOTPRINT,),
                 ("test_no_silent_cap", "test_many_fast_appends_keep_order")),
    LibraryStore("langchain-classic", "ConversationBufferWindowMemory over RedisChatMessageHistory",
                 "tests.stores.langchain_memories:LangChainWindow", (),
                 ("test_count_window_keeps_last_n", "test_random_operations_match_the_model",
                  "test_concurrent_writers_keep_the_window"),
                 "a contract mismatch: k counts exchanges, so it keeps 2k messages; and a known design: the window "
                 "applies to what it reads (buffer_as_messages), never to the history in Redis, which keeps every "
                 "message", (FOOTPRINT, "test_concurrent_writers_keep_the_window")),
    *(LibraryStore("langgraph-checkpoint-redis", spec.rpartition(":")[2], spec, ("--scenario-timeout", "40"),
                   ("test_clearing_one_session_leaves_every_other_whole",), f"{CHECKPOINTS}; {DELETE_THREAD}",
                   may_warn=GROWING, needs_modules=True)
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
    LibraryStore("redis-openai-agents", "AgentSession", REDIS_OPENAI_AGENTS, ("--store-params",
                 "conversation_id=session_id"), REDIS_OPENAI_AGENTS_FAILING, REDIS_OPENAI_AGENTS_WHY,
                 needs_modules=True),
    LibraryStore("adk-session-services", "RedisSessionService", ADK_SERVICES, (),
                 ("test_tenants_keep_their_own_conversations",), ADK_SERVICES_WHY, may_warn=GROWING,
                 may_fail=("test_concurrent_writers_lose_nothing",), venv=".venv-adk-services"),
    LibraryStore("langchain-redis", "RedisChatMessageHistory", LANGCHAIN_REDIS, (), LANGCHAIN_REDIS_FAILING,
                 LANGCHAIN_REDIS_WHY, needs_modules=True),
    LibraryStore("redisvl", "MessageHistory (one per session: name=namespace, session_tag=session_id; load: messages)",
                 REDISVL, REDISVL_ARGS, REDISVL_FAILING, REDISVL_WHY, needs_modules=True),
    LibraryStore("agent-framework-redis", "RedisHistoryProvider", AGENT_FRAMEWORK, (),
                 ("test_random_operations_match_the_model", "test_window_leaves_no_orphaned_tool_result"),
                 AGENT_FRAMEWORK_WHY, ("test_concurrent_writers_keep_the_window", "test_keys_stay_in_namespace"),
                 GROWING, venv=".venv-agent-framework"),
    LibraryStore("strands-redis-session-manager", "RedisSessionManager", STRANDS_REDIS, (),
                 ("test_concurrent_writers_lose_nothing", "test_clearing_one_session_leaves_every_other_whole",
                  "test_a_shared_database_is_left_as_it_was", "test_eviction_leaves_sessions_whole_or_gone",
                  "test_a_restart_between_turns_loses_nothing", "test_random_operations_match_the_model"),
                 STRANDS_REDIS_WHY, may_warn=GROWING, venv=".venv312"),
    LibraryStore("strands-valkey-session-manager", "ValkeySessionManager", STRANDS_VALKEY, (),
                 ("test_concurrent_writers_lose_nothing", "test_every_session_id_keeps_its_own_history",
                  "test_clearing_one_session_leaves_every_other_whole", "test_random_operations_match_the_model"),
                 STRANDS_VALKEY_WHY, ("test_every_session_id_keeps_its_own_history",), GROWING,
                 needs_modules=True, venv=".venv312"),
    LibraryStore("camel-ai", "RedisStorage", CAMEL_STORAGE, (), CAMEL_FAILING, CAMEL_WHY, venv=".venv-camel"),
    LibraryStore("agent-memory-client", "MemoryAPIClient", AGENT_MEMORY, (), AGENT_MEMORY_FAILING, AGENT_MEMORY_WHY,
                 ("test_keys_stay_in_namespace", "test_every_session_id_keeps_its_own_history"), GROWING,
                 needs_modules=True, venv=".venv312", service="agent-memory"),
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
    LibraryStore("@mastra/redis", "RedisStore", "node:@mastra/redis:RedisStore",
                 failing=("test_no_silent_cap", "test_round_trip_keeps_role_content_and_order",
                          "test_many_fast_appends_keep_order", "test_clearing_one_session_leaves_every_other_whole",
                          "test_a_shared_database_is_left_as_it_was", "test_eviction_leaves_sessions_whole_or_gone",
                          *KILLED),
                 may_fail=("test_append_raises_when_memory_is_full", "test_random_operations_match_the_model",
                           "test_concurrent_writers_lose_nothing", "test_two_instances_share_history",
                           "test_loading_twice_changes_nothing", "test_store_raises_when_the_server_is_down"),
                 project=NODE_PROJECT,
                 why="bugs of the storage: a thread's messages are a sorted set scored by their createdAt in "
                     "milliseconds, so messages saved in the same millisecond come back in their ids' order, not "
                     "theirs (the scenarios that append fast meet it; the others on some runs); listMessages leaves "
                     "out system messages; deleteThread finds a thread's messages by a SCAN pattern made of the id, "
                     "so deleting 'al*' deletes 'alice''s; a thread is several keys (a record, an index, a key per "
                     "message), which eviction takes apart; and its node-redis client has no 'error' listener, so a "
                     "connection the server closes ends the Node.js process, and with no server its offline queue "
                     "holds a call (or the store's close) past the call timeout on some runs (mastra_alone.mjs "
                     "shows the pattern delete with Mastra alone)"),
)
