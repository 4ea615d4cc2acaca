"""Broken stores that are right one append at a time and wrong when appends race: only the
concurrency scenarios, on a real server, catch them."""

import json
import threading

from tests.stores.correct import ListStore, TokenStore

LOSE_NOTHING = "test_concurrent_writers_lose_nothing"
KEEP_THE_WINDOW = "test_concurrent_writers_keep_the_window"
KEEP_THE_TOKEN_BUDGET = "test_concurrent_writers_keep_the_token_budget"


class ReadModifyWrite:
    """The whole history as one JSON document: GET, parse, append, SET, without WATCH. Two appends
    that overlap both read the same document, and the later SET drops the other's message (a lost
    update)."""

    CAUSE = (r"though one writer appending as many loses none: appends that overlap overwrite each other: the store "
             r"reads the session and writes it back whole in another step "
             r"\(GET ('[^']+'|\S+), then SET ('[^']+'|\S+) .*\(a lost update\)")

    def __init__(self, redis, namespace, ttl):
        self.redis, self.namespace, self.ttl = redis, namespace, ttl

    def key(self, session_id):
        return f"{self.namespace}document:{session_id}"

    def append(self, session_id, role, content):
        history = json.loads(self.redis.get(self.key(session_id)) or "[]")
        history.append({"role": role, "content": content})
        self.redis.set(self.key(session_id), json.dumps(history, ensure_ascii=False), ex=self.ttl)

    def get(self, session_id):
        return json.loads(self.redis.get(self.key(session_id)) or "[]")

    def clear(self, session_id):
        self.redis.delete(self.key(session_id))


class LocksInItsProcess(ReadModifyWrite):
    """The read-modify-write append behind a lock of the class: no two threads of one process
    overlap, so writers sharing the store lose nothing, but each process has a lock of its own, and
    writers in separate processes (replicas of a service) still overwrite each other."""

    CAUSE = (r"though one writer appending as many loses none: appends that overlap overwrite each other: the store "
             r"reads the session and writes it back whole in another step "
             r"\(GET ('[^']+'|\S+), then SET ('[^']+'|\S+) .*\(a lost update\)")

    LOCK = threading.Lock()

    def append(self, session_id, role, content):
        with self.LOCK:
            super().append(session_id, role, content)


class GivesUpOnAConflict(LocksInItsProcess):
    """The read-modify-write append behind a lock of the class and under WATCH, as optimistic locking
    is written, but without its retry: threads of one process never conflict, but an append of a
    writer in another process (a replica of a service) whose document changed meanwhile raises
    WatchError to its caller. Nothing is overwritten; overlapping appends fail instead."""

    CAUSE = r"the store raised redis\.exceptions\.WatchError: Watched variable changed\."

    def append(self, session_id, role, content):
        with self.LOCK, self.redis.pipeline() as pipe:
            pipe.watch(self.key(session_id))
            history = json.loads(pipe.get(self.key(session_id)) or "[]")
            history.append({"role": role, "content": content})
            pipe.multi()
            pipe.set(self.key(session_id), json.dumps(history, ensure_ascii=False), ex=self.ttl)
            pipe.execute()

class TrimsFromPushedLength(ListStore):
    """Pushes and sets the TTL in one transaction, then trims in a second round trip, from the length
    RPUSH returned: ``LTRIM key (length - N) -1``. Between the two, a reader sees more than N
    messages, and a push by another writer shifts the list, so the stale start cuts a message that
    should stay."""

    CAUSE = r"the session lost messages it held \(a trim cut more than the oldest"

    def trim(self, pipe, key):
        pass

    def append(self, session_id, role, content):
        key = self.key(session_id)
        with self.redis.pipeline(transaction=True) as pipe:
            self.push(pipe, key, self.encode(role, content))
            self.expire(pipe, key)
            length = pipe.execute()[0]
        self.redis.ltrim(key, max(length - self.max_messages, 0), -1)


class TrimsUnderItsProcessLock(TrimsFromPushedLength):
    """The two-step push and trim, and every load, behind a lock of the class: threads of one
    process never see between the steps nor trim from a stale length, but the lock is of this
    process only, so writers in other processes (replicas of a service) still interleave their
    steps, and cut messages they should keep or show readers more than N."""

    CAUSE = r"the session lost messages it held \(a trim cut more than the oldest"

    LOCK = threading.Lock()

    def append(self, session_id, role, content):
        with self.LOCK:
            super().append(session_id, role, content)

    def get(self, session_id):
        with self.LOCK:
            return super().get(session_id)


class TrimsInASecondStep(ListStore):
    """Pushes and sets the TTL in one transaction, then trims in a second round trip, with the right
    range (``LTRIM key -N -1``): nothing is lost and the session ends with the last N, but a reader
    between the two steps sees more than N: a transient effect, which the window scenario warns of,
    naming the two steps as the store sent them."""

    CAUSE = (r"the trim runs after the push, not with it: the store sent MULTI: RPUSH \S+ .*; EXEC and LTRIM \S+ "
             r"-\d+ -1 as separate steps")

    def trim(self, pipe, key):
        pass

    def append(self, session_id, role, content):
        super().append(session_id, role, content)
        self.redis.ltrim(self.key(session_id), -self.max_messages, -1)


class TrimsTokensByAStaleIndex(TokenStore):
    """Reads the session, computes how many of the oldest to drop, and trims by that index in a
    second step, with no WATCH: another writer's push and trim in between moved the list, and the
    stale index cuts messages that should stay (the token window over-trims under concurrency)."""

    CAUSE = r"the session lost messages it held \(a trim cut more than the oldest"

    def trim(self, key, total_key):
        costs = [json.loads(raw)["tokens"] for raw in self.redis.lrange(key, 0, -1)]
        drop = self.how_many_to_drop(costs)
        with self.redis.pipeline() as pipe:
            pipe.ltrim(key, drop, -1)
            pipe.decrby(total_key, sum(costs[:drop]))
            pipe.execute()


WARNED_BY: dict[type, list[str]] = {TrimsInASecondStep: [KEEP_THE_WINDOW]}

CAUGHT_BY: dict[type, list[str]] = {
    ReadModifyWrite: [LOSE_NOTHING],
    LocksInItsProcess: [LOSE_NOTHING],
    TrimsFromPushedLength: [KEEP_THE_WINDOW],
    TrimsUnderItsProcessLock: [KEEP_THE_WINDOW],
    TrimsTokensByAStaleIndex: [KEEP_THE_TOKEN_BUDGET],
}
