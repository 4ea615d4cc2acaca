"""CAMEL's Redis key-value storage with nothing of the suite's (run from .venv-camel): the failures the
suite finds in it, shown with the library alone (tests/verdicts/test_camel.py).

    python camel_alone.py REDIS_URL DEAD_URL

Two turns saved as ChatHistoryMemory saves them, each turn's records in one save: the storage holds
the second turn only (save replaces what the conversation held). Then a save on a URL where no server
listens: it returns, the error only logged."""

import logging
import sys

from camel.storages.key_value_storages.redis import RedisStorage

logging.disable(logging.CRITICAL)   # the storage logs the error it swallows
storage = RedisStorage(sid="s1", url=sys.argv[1])
storage.save([{"turn": 1, "content": "hi"}])
storage.save([{"turn": 2, "content": "hello again"}])
print("s1 holds turns:", ", ".join(str(record["turn"]) for record in storage.load()))
try:
    RedisStorage(sid="s1", url=sys.argv[2]).save([{"turn": 3, "content": "lost"}])
    print("save with no server: returned")
except Exception as exc:   # noqa: BLE001
    print(f"save with no server: raised {type(exc).__name__}")
