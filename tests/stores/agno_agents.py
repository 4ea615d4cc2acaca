"""agno ``Agent``s over its ``RedisDb`` that window what they replay, for the verdicts table
(tests/stores/libraries.py); no model, which the suite never calls."""

from agno.agent import Agent
from agno.db.redis import RedisDb


def agno_agent_replaying_messages(redis_url, namespace, ttl, max_messages):
    """An agno ``Agent`` over a ``RedisDb`` that replays the last ``max_messages`` messages of the session
    (``num_history_messages``); no model, which the suite never calls."""
    return Agent(db=RedisDb(db_url=redis_url, db_prefix=namespace, expire=ttl), add_history_to_context=True,
                 num_history_messages=max_messages)


def agno_agent_replaying_runs(redis_url, namespace, ttl, max_messages):
    """The same agent replaying the last ``max_messages`` runs (``num_history_runs``): exchanges, not messages."""
    return Agent(db=RedisDb(db_url=redis_url, db_prefix=namespace, expire=ttl), add_history_to_context=True,
                 num_history_runs=max_messages)
