"""Broken stores for the stateful scenario: bugs that need an order of operations to show, which
every fixed scenario misses (a full window, then a clear; a full window, then the other
instance's write; a window passed, then a restart), and a window one message short, which the
stateful scenario must catch on its own as well as the count-window scenario does.

Each overrides one step of the correct :class:`tests.stores.correct.ListStore`, as those of
:mod:`tests.stores.broken` do; ``broken.CAUGHT_BY`` lists them with the scenarios that catch them.
"""

from tests.stores.correct import ListStore


class OneTooFew(ListStore):
    """Keeps N-1 messages: ``ltrim(key, -N+1, -1)``, the mirror of an off-by-one that keeps N+1."""

    CAUSE = r"lost message 1 of (\d+) \(.*\): history has \d+ messages, expected \1$"

    def trim(self, pipe, key):
        pipe.ltrim(key, -self.max_messages + 1, -1)


class FullWindowMarkSurvivesClear(ListStore):
    """Once a session's window is full, marks it (``<key>:full``, with the list's TTL) and from
    then on pops one message per push instead of trimming to N. Clear deletes the list but not the
    mark, which exists only once a window has filled: after a clear of a full window, every push is
    popped at once and the session stays empty. The clear and hygiene scenarios never fill a window."""

    LISTED_CAUSE = r"refilled after a clear of its full window: state kept beside the list"

    def mark(self, key):
        return key + ":full"

    def append(self, session_id, role, content):
        key = self.key(session_id)
        full = self.redis.exists(self.mark(key))
        with self.redis.pipeline(transaction=True) as pipe:
            self.push(pipe, key, self.encode(role, content))
            if full:
                pipe.lpop(key)
                pipe.expire(self.mark(key), self.ttl)
            self.expire(pipe, key)
            length = pipe.execute()[0]
        if not full and length >= self.max_messages:
            self.redis.set(self.mark(key), 1, ex=self.ttl)


class CacheCheckedByLength(ListStore):
    """Caches each history it loads in the instance and serves it again while the list's length
    (one LLEN) is unchanged. Once the window is full the length stays N whatever is appended, so
    the other instance's appends to a full session go unseen: a sequence must load a full session
    through one instance, append through the other and load through the first again."""

    CAUSE = r"Redis holds them: instance \d answers from state kept in the instance"

    def __init__(self, redis, namespace, max_messages, ttl):
        super().__init__(redis, namespace, max_messages, ttl)
        self.cache = {}

    def get(self, session_id):
        cached = self.cache.get(session_id)
        if cached is None or self.redis.llen(self.key(session_id)) != len(cached):
            cached = self.cache[session_id] = super().get(session_id)
        return list(cached)

    def append(self, session_id, role, content):
        self.cache.pop(session_id, None)
        super().append(session_id, role, content)

    def clear(self, session_id):
        self.cache.pop(session_id, None)
        super().clear(session_id)


class SequenceSeededFromSize(ListStore):
    """A sorted set of numbered messages scored by a sequence number that the instance keeps, seeded from the set's size
    the first time it writes a session (one round trip fewer than INCR on a counter). The size
    equals the next number only until the window first trims: an instance started after that (a
    restart, another worker) numbers its messages below the ones kept, which sort before them and
    are the first trimmed; two instances writing one session in turn reuse numbers."""

    LISTED_CAUSE = r"store instances wrote the session .*a sequence number"

    def __init__(self, redis, namespace, max_messages, ttl):
        super().__init__(redis, namespace, max_messages, ttl)
        self.next_score = {}

    def push(self, pipe, key, raw):
        if key not in self.next_score:
            self.next_score[key] = self.redis.zcard(key)
        pipe.zadd(key, {f"{self.next_score[key]}|{raw}": self.next_score[key]})   # numbered: repeats stay apart
        self.next_score[key] += 1

    def trim(self, pipe, key):
        pipe.zremrangebyrank(key, 0, -self.max_messages - 1)

    def read(self, key):
        return [member.partition("|")[2] for member in self.redis.zrange(key, 0, -1)]
