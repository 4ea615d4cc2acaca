"""A store program (docs/protocol.md) that serves a correct store and misbehaves as the program, in one way
its first argument names: what such a program does is the store's finding or data, never the suite's crash,
hang or a verdict it can turn (tests/end_to_end/test_hostile_programs.py). Run by the suite's Python:

    memory-regression --store 'cmd:python tests/stores/hostile_program.py MODE'

Modes:
- ``greeting-line``: the greeting's ``line`` is text that carries a workflow command, and the store strips
  whitespace (a failure for the line to be shown with);
- ``load-error``: the program cannot load its store, and says so with a workflow command;
- ``stderr-flood``: before it greets, 60 MB on its stderr, half of it one line;
- ``stderr-bytes``: each request, a line on its stderr that is no UTF-8;
- ``ignores-eof``: answers each request after 0.2 s; ignores the end of its input and SIGTERM, and lives on
  (for at most two minutes);
- ``close-hangs``: never answers a close.
"""

import signal
import sys
import time
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
    if mode == "stderr-flood":
        for _ in range(30):
            sys.stderr.write(("x" * 1023 + "\n") * 1024)
        sys.stderr.write("y" * (30 << 20))
        sys.stderr.flush()
    if mode == "stderr-bytes":
        py_program.HEARD = lambda request: (sys.stderr.buffer.write(b"\xff\xfe not utf-8 \x80\n"),
                                            sys.stderr.flush())
    if mode == "ignores-eof":   # slow, so that a run is still going when the test kills its runner
        py_program.HEARD = lambda request: time.sleep(0.2)
    if mode == "close-hangs":
        py_program.HEARD = lambda request: time.sleep(3600) if request.get("op") == "close" else None
    py_program.serve(StripsWhitespace if mode == "greeting-line" else UrlListStore, greeting)
    if mode == "ignores-eof":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        time.sleep(120)


if __name__ == "__main__":
    main(sys.argv[1])
