"""Stores that the suite cannot judge as it binds them: their window or TTL keeps a default of their
own under a name the contract does not know, they connect to a server of their own choosing, or they
cannot be built at all. Each of the first is correct; what it does with the suite's parameters is what
the observation must name (memory_regression/worker/observe.py)."""

import json

import redis as redis_py

from tests.stores.correct import ListStore


class WindowCalledLimit(ListStore):
    """A count window under the name ``limit``, 20 by default: told nothing, it keeps the newest 20."""

    def __init__(self, redis, namespace, ttl, limit=20):
        super().__init__(redis, namespace, limit, ttl)


class CapsOnItsOwn(ListStore):
    """Keeps the newest 30 whatever it is given; its one unfilled parameter, a retry count whose
    default is 30 too, is no window by its name, so what it keeps is observed, with both causes
    named, and the scenarios judge it."""

    CAP = 30

    def __init__(self, redis, namespace, ttl, max_retries=30):
        super().__init__(redis, namespace, self.CAP, ttl)


class TtlCalledExpireSeconds(ListStore):
    """A sliding TTL under the name ``expire_seconds``, 600 s by default: correct, but the ttl
    scenarios cannot run until it is named or mapped."""

    def __init__(self, redis, namespace, max_messages, expire_seconds=600):
        super().__init__(redis, namespace, max_messages, expire_seconds)


class OwnClientOnAnotherPort:
    """Builds its own client on a port where no server listens (the port a test gives it through the
    environment variable OWN_REDIS_PORT)."""

    def __init__(self):
        import os
        self.redis = redis_py.Redis(host="127.0.0.1", port=int(os.environ["OWN_REDIS_PORT"]),
                                    decode_responses=True, socket_connect_timeout=1)

    def append(self, session_id, role, content):
        self.redis.rpush(f"own:{session_id}", json.dumps({"role": role, "content": content}))

    def load(self, session_id):
        return [json.loads(raw) for raw in self.redis.lrange(f"own:{session_id}", 0, -1)]


class InTheProcess:
    """Keeps its memory in a dict of the process: it writes nothing to Redis at all."""

    def __init__(self):
        self.sessions = {}

    def append(self, session_id, role, content):
        self.sessions.setdefault(session_id, []).append({"role": role, "content": content})

    def load(self, session_id):
        return list(self.sessions.get(session_id, []))


class RefusesToBeBuilt(ListStore):
    """Refuses what the suite passes, as Agent Framework's history provider refused a client beside a URL
    ("redis_client, redis_url, and credential_provider are mutually exclusive"), naming the parameters: a
    binding fault, said once as a usage error before any scenario."""

    def __init__(self, redis, namespace, max_messages, ttl):
        raise ValueError("redis and namespace are mutually exclusive")


class CannotStart(ListStore):
    """Every build raises, naming nothing the suite passes (a bug of its own constructor, as LlamaIndex's chat
    store has on a cluster URL): no scenario can judge it, and none may pass, the server-down scenario included
    (it once returned early on any build error)."""

    def __init__(self, redis, namespace, max_messages, ttl):
        raise RuntimeError("the store's worker pool did not start")
