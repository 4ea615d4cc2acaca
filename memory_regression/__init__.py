"""A generic regression suite for LLM conversation memory kept in Redis.

The pieces: :mod:`.contract` (how a store is found, built and called), :mod:`.capabilities`
(what a store claims), :mod:`.reference` (what a correct store returns), :mod:`.profiles`
(model profiles and token counters), :mod:`.backend` (the Redis server under test),
:mod:`.plugin` (the pytest plugin), :mod:`.reports` (summaries) and :mod:`.cli` (the runner).
The scenarios themselves live in ``suite/``.
"""

__version__ = "0.1.0"
