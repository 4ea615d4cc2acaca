"""A broken store only the footprint scenario catches: every load is right, and Redis holds every
message ever appended."""

from tests.stores.correct import ListStore

FOOTPRINT = "test_storage_stays_within_the_window"


class TrimsOnlyWhenLoading(ListStore):
    """Pushes without trimming and trims when it loads: LTRIM to the window and LRANGE in one
    transaction, so that every load, and the session as a load leaves it, holds exactly the last N;
    between loads the session grows with every append (a chatbot that writes more than it reads
    grows without bound)."""

    def trim(self, pipe, key):
        """Nothing is trimmed when appending."""

    def read(self, key):
        with self.redis.pipeline(transaction=True) as pipe:
            pipe.ltrim(key, -self.max_messages, -1)
            pipe.lrange(key, 0, -1)
            return pipe.execute()[1]


CAUGHT_BY: dict[type, list[str]] = {TrimsOnlyWhenLoading: [FOOTPRINT]}
