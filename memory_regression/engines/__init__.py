"""The Redis servers a run can use, each a registered kind (:mod:`.registry`): the backends and their
connections (:mod:`.backend`), servers the suite starts (:mod:`.servers`), containers
(:mod:`.containers`) and what a server's health says (:mod:`.server_health`). It imports only the
base modules (errors, redaction)."""
