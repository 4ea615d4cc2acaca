"""A store program (docs/protocol.md) that serves a correct store and misbehaves as the program, in one way
its first argument names: what such a program does is the store's finding or data, never the suite's crash,
hang or a verdict it can turn (tests/end_to_end/test_hostile_programs.py). Run by the suite's Python:

    memory-regression --store 'cmd:python tests/stores/hostile_program.py MODE'

Modes:
- ``greeting-line``: the greeting's ``line`` is text that carries a workflow command, and the store strips
  whitespace (a failure for the line to be shown with);
- ``load-error``: the program cannot load its store, and says so with a workflow command.
"""

import sys
from pathlib import Path

import redis

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.stores import py_program  # noqa: E402
from tests.stores.correct import ListStore  # noqa: E402

FORGED = "::error title=forged by the program::the store passed"


class UrlListStore(ListStore):
    """The correct list store, with its own client of the URL (a client cannot cross to a program)."""

    def __init__(self, redis_url, namespace, max_messages, ttl):
        super().__init__(redis.Redis.from_url(redis_url, decode_responses=True), namespace, max_messages, ttl)

    def close(self):
        self.redis.close()


class StripsWhitespace(UrlListStore):
    def encode(self, role, content):
        return super().encode(role, content.strip())


def main(mode: str) -> None:
    greeting = {"store": "UrlListStore", "source": __file__, "line": 24, "language": "python",
                "factory": {"kind": "class", "style": "options", "parameters": py_program.parameters(UrlListStore)}}
    if mode == "load-error":
        py_program.send({"protocol": py_program.PROTOCOL, "error": {"message": f"no store here\n{FORGED}"}})
        return
    if mode == "greeting-line":
        greeting["line"] = f"7\n{FORGED}"
    py_program.serve(StripsWhitespace if mode == "greeting-line" else UrlListStore, greeting)


if __name__ == "__main__":
    main(sys.argv[1])
