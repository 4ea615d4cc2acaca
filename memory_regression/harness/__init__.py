"""What scenarios use: the fixtures (:mod:`.fixtures`) over one scenario's context
(:mod:`.context`, built from a :class:`~.context.ScenarioSetup` the worker hands it, never the worker),
its stores, keyspace and connections, races and writer processes, polling, timed appends, findings, a
server of its own, bursts, the proxy, a shared database, many owners of sessions, and the commands
the stores sent (:mod:`.store_commands`, :mod:`.command_evidence`). It may import the settings and
every layer below them."""
