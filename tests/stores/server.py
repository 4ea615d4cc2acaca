"""Broken stores that are right while the server has memory to spare and keeps running: only the
memory-pressure and restart scenarios, each on a redis-server of its own, catch them."""

import json

import redis

from tests.stores.correct import ListStore

OOM_RAISES = "test_append_raises_when_memory_is_full"
WHOLE_OR_GONE = "test_eviction_leaves_sessions_whole_or_gone"
RESTART = "test_a_restart_between_turns_loses_nothing"

# push, trim and refresh the TTL in one step, as ListStore's transaction does
PUSH_TRIM_EXPIRE = """
redis.call('RPUSH', KEYS[1], ARGV[1])
redis.call('LTRIM', KEYS[1], -tonumber(ARGV[2]), -1)
redis.call('EXPIRE', KEYS[1], ARGV[3])
"""


class SwallowsOutOfMemory(ListStore):
    """Swallows Redis' OOM error in append ("the cache is full, the chat goes on"), so a message
    appended while the server is out of memory is lost while append returns as if it were stored.
    Redis 7 fails the transaction's command at EXEC (OutOfMemoryError); Redis 8 refuses it as it is
    queued and aborts the transaction (ExecAbortError): it swallows both."""

    CAUSE = r"the store swallows Redis' OOM error"

    def append(self, session_id, role, content):
        try:
            super().append(session_id, role, content)
        except (redis.exceptions.OutOfMemoryError, redis.exceptions.ExecAbortError):
            pass


class MessagePerKey:
    """A key per message (``{ns}message:{session}:{n}``) and an index list of those keys per session,
    appended, trimmed and read each in one Lua script, so it is atomic and windowed like ListStore.
    Its load skips a message key that is gone: when eviction takes some of a session's keys and not
    others, the history comes back with holes. It takes no TTL."""

    CAUSE = r"a session kept in one key is intact or gone: this store keeps it in several"

    APPEND = """
    local n = redis.call('INCR', KEYS[2])
    local key = ARGV[3] .. n
    redis.call('SET', key, ARGV[1])
    redis.call('RPUSH', KEYS[1], key)
    local excess = redis.call('LLEN', KEYS[1]) - tonumber(ARGV[2])
    if excess > 0 then
        local trimmed = redis.call('LRANGE', KEYS[1], 0, excess - 1)
        redis.call('LTRIM', KEYS[1], excess, -1)
        redis.call('DEL', unpack(trimmed))
    end
    """
    LOAD = """
    local keys = redis.call('LRANGE', KEYS[1], 0, -1)
    if #keys == 0 then return {} end
    return redis.call('MGET', unpack(keys))
    """
    CLEAR = """
    local keys = redis.call('LRANGE', KEYS[1], 0, -1)
    if #keys > 0 then redis.call('DEL', unpack(keys)) end
    redis.call('DEL', KEYS[1], KEYS[2])
    """

    def __init__(self, redis, namespace, max_messages):
        self.redis = redis
        self.namespace = namespace
        self.max_messages = max_messages
        self.append_script = redis.register_script(self.APPEND)
        self.load_script = redis.register_script(self.LOAD)
        self.clear_script = redis.register_script(self.CLEAR)

    def keys(self, session_id):
        return [f"{self.namespace}index:{session_id}", f"{self.namespace}counter:{session_id}"]

    def append(self, session_id, role, content):
        raw = json.dumps({"role": role, "content": content}, ensure_ascii=False)
        self.append_script(keys=self.keys(session_id),
                           args=[raw, self.max_messages, f"{self.namespace}message:{session_id}:"])

    def get(self, session_id):
        return [json.loads(raw) for raw in self.load_script(keys=self.keys(session_id)[:1]) if raw is not None]

    def clear(self, session_id):
        self.clear_script(keys=self.keys(session_id))


class ScriptLoadedOnce(ListStore):
    """Pushes, trims and refreshes the TTL in a Lua script it loads once, when built (SCRIPT LOAD), and
    then calls by its SHA alone (EVALSHA), with no fallback on NOSCRIPT: a restarted server's script
    cache is empty, so every append after a restart fails. A connection killed by CLIENT KILL leaves
    the script cache alone."""

    CAUSE = r"NoScriptError.*calls only EVALSHA"

    def __init__(self, redis, namespace, max_messages, ttl):
        super().__init__(redis, namespace, max_messages, ttl)
        self.sha = redis.script_load(PUSH_TRIM_EXPIRE)

    def append(self, session_id, role, content):
        self.redis.evalsha(self.sha, 1, self.key(session_id), self.encode(role, content), self.max_messages,
                           self.ttl)


class FunctionLoadedOnce(ListStore):
    """Pushes, trims and refreshes the TTL in a Redis Function it loads once, when built (FUNCTION
    LOAD), and then calls (FCALL). Functions are part of the dataset: an append-only file keeps them
    across a restart, but a server without persistence comes back without them, so every append
    after that restart fails with 'Function not found'."""

    CAUSE = r"Function not found.*loaded a Redis Function once"

    LIBRARY = ("#!lua name=memory_regression_broken_store\n"
               "redis.register_function('mr_push_trim_expire', function(KEYS, ARGV)\n"
               f"{PUSH_TRIM_EXPIRE}\nend)\n")

    def __init__(self, redis, namespace, max_messages, ttl):
        super().__init__(redis, namespace, max_messages, ttl)
        redis.function_load(self.LIBRARY, replace=True)

    def append(self, session_id, role, content):
        self.redis.fcall("mr_push_trim_expire", 1, self.key(session_id), self.encode(role, content),
                         self.max_messages, self.ttl)


CAUGHT_BY: dict[type, list[str]] = {
    SwallowsOutOfMemory: [OOM_RAISES],
    MessagePerKey: [WHOLE_OR_GONE],
    ScriptLoadedOnce: [RESTART],
    FunctionLoadedOnce: [RESTART],
}
