"""Broken compacting stores: each is right but for one compaction bug, which only one compaction
scenario catches. They are :class:`CompactingListStore` with one step of its ``compact`` changed."""

import json

import redis

from tests.stores.correct import ListStore, TokenStore

COVERS_ONCE = "test_compaction_covers_every_message_once"
APPENDS_DURING = "test_appends_during_compaction_are_not_lost"
FAILING_SUMMARIZER = "test_a_failing_summarizer_leaves_the_session_as_it_was"
KILLED_CONNECTION = "test_a_connection_killed_during_compaction_leaves_no_mix"
KEEPS_THE_WINDOW = "test_compaction_keeps_the_window"
KEEPS_THE_BUDGET = "test_compaction_keeps_the_token_budget"

KEEP_RECENT = 2          # the newest messages a compaction leaves as they are
COMPACT_ATTEMPTS = 5


class CompactingListStore(ListStore):
    """The correct :class:`ListStore` with a correct ``compact``: WATCH the session, read it,
    summarise all but the newest two messages, then in MULTI/EXEC trim them off the head and push
    the summary there; compact again when the session changed meanwhile (a few times at most). The
    summary is a system message marked as one, and counts toward the window like any other."""

    def __init__(self, redis, namespace, max_messages, ttl, summarize):
        super().__init__(redis, namespace, max_messages, ttl)
        self.summarize = summarize

    def encode_summary(self, summary):
        return json.dumps({"role": "system", "content": summary, "summary": True}, ensure_ascii=False)

    def head(self, raw):
        """The oldest messages a compaction replaces: all but the newest two, at least one."""
        return raw[:max(1, len(raw) - KEEP_RECENT)] if len(raw) > 1 else []

    def summarized(self, head):
        """What is handed to summarize: the messages replaced, an earlier summary among them."""
        return [self.decode(raw) for raw in head]

    def replace(self, pipe, key, count, summary):
        pipe.ltrim(key, count, -1)
        pipe.lpush(key, self.encode_summary(summary))
        self.expire(pipe, key)

    def compact(self, session_id):
        key = self.key(session_id)
        for _ in range(COMPACT_ATTEMPTS):
            with self.redis.pipeline(transaction=True) as pipe:
                pipe.watch(key)
                head = self.head(pipe.lrange(key, 0, -1))
                if not head:
                    return
                summary = self.summarize(self.summarized(head))
                pipe.multi()
                self.replace(pipe, key, len(head), summary)
                try:
                    pipe.execute()
                    return
                except redis.WatchError:
                    continue
        raise RuntimeError("the session kept changing while it was being compacted")


class AsyncCompactingStore:
    """:class:`CompactingListStore` on ``redis.asyncio``: a count window trimmed in MULTI/EXEC, and a
    compaction that WATCHes the session, summarises, and replaces the head in MULTI/EXEC."""

    def __init__(self, redis, namespace, max_messages, ttl, summarize):
        self.redis, self.namespace, self.max_messages = redis, namespace, max_messages
        self.ttl, self.summarize = ttl, summarize

    def key(self, session_id):
        return f"{self.namespace}async-compacting:{session_id}"

    async def append(self, session_id, role, content):
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.rpush(self.key(session_id), json.dumps({"role": role, "content": content}, ensure_ascii=False))
            pipe.ltrim(self.key(session_id), -self.max_messages, -1)
            pipe.expire(self.key(session_id), self.ttl)
            await pipe.execute()

    async def get(self, session_id):
        return [json.loads(raw) for raw in await self.redis.lrange(self.key(session_id), 0, -1)]

    async def clear(self, session_id):
        await self.redis.delete(self.key(session_id))

    async def compact(self, session_id):
        key = self.key(session_id)
        for _ in range(COMPACT_ATTEMPTS):
            async with self.redis.pipeline(transaction=True) as pipe:
                await pipe.watch(key)
                raw = await pipe.lrange(key, 0, -1)
                if len(raw) < 2:
                    return
                head = raw[:max(1, len(raw) - KEEP_RECENT)]
                summary = self.summarize([json.loads(item) for item in head])
                pipe.multi()
                pipe.ltrim(key, len(head), -1)
                pipe.lpush(key, json.dumps({"role": "assistant", "content": summary}, ensure_ascii=False))
                pipe.expire(key, self.ttl)
                try:
                    await pipe.execute()
                    return
                except redis.WatchError:
                    continue
        raise RuntimeError("the session kept changing while it was being compacted")


class LosesTheEarlierSummary(CompactingListStore):
    """Summarises only the messages that are not a summary themselves, "so as not to summarise a
    summary", and replaces them and the earlier summary with it: a second compaction loses what the
    first summarised."""

    CAUSE = r"lost are exactly those the earlier summary covered: the store dropped the earlier summary"

    def summarized(self, head):
        return [message for message in super().summarized(head) if not message.get("summary")]


class RewritesTheSession(CompactingListStore):
    """Reads the session, summarises its head, then writes the summary and the rest as it read them
    (DEL, RPUSH) in one MULTI/EXEC, but without WATCH: a message appended while it summarised is
    overwritten (a lost update)."""

    CAUSE = (r"lost are exactly those appended while compact summarised: it wrote the session back as it had read it "
             r"\(MULTI: DEL \S+, RPUSH \S+ .*\), over what was appended meanwhile \(a lost update\)")

    def compact(self, session_id):
        key = self.key(session_id)
        raw = self.read(key)
        head = self.head(raw)
        if not head:
            return
        summary = self.summarize(self.summarized(head))
        with self.redis.pipeline(transaction=True) as pipe:
            pipe.delete(key)
            pipe.rpush(key, self.encode_summary(summary), *raw[len(head):])
            self.expire(pipe, key)
            pipe.execute()


class TrimsBeforeSummarizing(CompactingListStore):
    """Trims the messages it will replace off the head first, then summarises them and pushes the
    summary: when the summariser raises, they are gone and nothing replaces them."""

    CAUSE = r"failed \(its summariser raised\), the session is neither as it was nor compacted whole"

    def compact(self, session_id):
        key = self.key(session_id)
        head = self.head(self.read(key))
        if not head:
            return
        self.redis.ltrim(key, len(head), -1)
        summary = self.summarize(self.summarized(head))
        with self.redis.pipeline(transaction=True) as pipe:
            pipe.lpush(key, self.encode_summary(summary))
            self.expire(pipe, key)
            pipe.execute()


class PinnedCompaction(CompactingListStore):
    """Compacts on a connection it took from the client's pool when it was built (reading and
    trimming "on one connection"), but writes the summary through the client: it sets the newest
    replaced message to the summary (LSET), then trims the older ones (LTRIM) on its connection.
    When the server closed that connection while it summarised, the LSET goes through on a fresh
    one and the LTRIM fails: the summary sits after the originals it covers."""

    CAUSE = r"the session is neither as it was nor compacted whole"

    def __init__(self, redis, namespace, max_messages, ttl, summarize):
        super().__init__(redis, namespace, max_messages, ttl, summarize)
        self.connection = redis.connection_pool.get_connection()

    def command(self, *args):
        self.connection.send_command(*args)
        return self.connection.read_response()

    def compact(self, session_id):
        key = self.key(session_id)
        head = self.head(self.command("LRANGE", key, 0, -1))
        if not head:
            return
        summary = self.summarize(self.summarized(head))
        self.redis.lset(key, len(head) - 1, self.encode_summary(summary))
        self.command("LTRIM", key, len(head) - 1, -1)

    def close(self):
        self.redis.connection_pool.release(self.connection)


class SummaryOutsideTheWindow(CompactingListStore):
    """Keeps the summary in a key of its own beside the list, which the window trims: loaded first,
    it is never counted, so once the window is full the history holds N messages and the summary,
    while the store says (no ``summary_in_window = False``) that the summary counts toward N."""

    CAUSE = r"kept \d+ messages, expected \d+: .*summary_in_window = False"

    def summary_key(self, session_id):
        return f"{self.namespace}summary:{session_id}"

    def get(self, session_id):
        summary = self.redis.get(self.summary_key(session_id))
        return ([self.decode(summary)] if summary else []) + super().get(session_id)

    def compact(self, session_id):
        key, summary_key = self.key(session_id), self.summary_key(session_id)
        earlier = self.redis.get(summary_key)
        raw = ([earlier] if earlier else []) + self.read(key)
        head = self.head(raw)
        if not head:
            return
        summary = self.summarize(self.summarized(head))
        with self.redis.pipeline(transaction=True) as pipe:
            pipe.set(summary_key, self.encode_summary(summary), ex=self.ttl)
            pipe.ltrim(key, len(head) - (1 if earlier else 0), -1)
            pipe.execute()

    def clear(self, session_id):
        self.redis.delete(self.key(session_id), self.summary_key(session_id))


class CompactingTokenStore(TokenStore):
    """The correct :class:`TokenStore` with a correct ``compact``: WATCH the session's list and its
    total, summarise all but the newest two messages, then in MULTI/EXEC replace them with the
    summary, recorded with its own cost, and set the total to match. The summary counts toward the
    budget by its cost, and is trimmed like any other message once it is the oldest that does not
    fit (the next append trims when the summary leaves the session over the budget)."""

    def __init__(self, redis, namespace, max_tokens, count_tokens, ttl, summarize):
        super().__init__(redis, namespace, max_tokens, count_tokens, ttl)
        self.summarize = summarize

    def summary_cost(self, summary):
        return self.count_tokens(summary)

    def compact(self, session_id):
        key, total_key = self.key(session_id), self.total_key(session_id)
        for _ in range(COMPACT_ATTEMPTS):
            with self.redis.pipeline(transaction=True) as pipe:
                pipe.watch(key, total_key)
                raw = pipe.lrange(key, 0, -1)
                if len(raw) < 2:
                    return
                head = [json.loads(item) for item in raw[:max(1, len(raw) - KEEP_RECENT)]]
                summary = self.summarize([{"role": m["role"], "content": m["content"]} for m in head])
                cost = self.summary_cost(summary)
                pipe.multi()
                pipe.ltrim(key, len(head), -1)
                pipe.lpush(key, json.dumps({"role": "system", "content": summary, "tokens": cost}, ensure_ascii=False))
                pipe.incrby(total_key, cost - sum(m["tokens"] for m in head))
                pipe.expire(key, self.ttl)
                pipe.expire(total_key, self.ttl)
                try:
                    pipe.execute()
                    return
                except redis.WatchError:
                    continue
        raise RuntimeError("the session kept changing while it was being compacted")


class UncountedSummary(CompactingTokenStore):
    """Records the summary with a cost of nothing ("it is ours, not the user's"), so the budget
    never counts it: once the session is full, the history costs the summary's tokens over it."""

    CAUSE = r"over the budget of \d+ tokens .*summary_in_window = False"

    def summary_cost(self, summary):
        return 0


CAUGHT_BY = {
    LosesTheEarlierSummary: (COVERS_ONCE,),
    RewritesTheSession: (APPENDS_DURING,),
    TrimsBeforeSummarizing: (FAILING_SUMMARIZER,),
    PinnedCompaction: (KILLED_CONNECTION,),
    SummaryOutsideTheWindow: (KEEPS_THE_WINDOW,),
    UncountedSummary: (KEEPS_THE_BUDGET,),
}
