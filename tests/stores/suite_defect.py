"""A stand-in for a defect of the suite's own code: a correct store whose module, imported by the
worker, breaks a method of the suite's (``Message.plain``, which the suite calls after each append
of the store's returned). Every scenario that appends then raises in the suite's code, outside any
call of the store: the run must say that it judged nothing, and blame nothing on the store."""

from memory_regression.contract.rules import Message
from tests.stores.correct import ListStore


def _broken_plain(self: Message) -> Message:
    raise LookupError("a defect of the suite's own code")


Message.plain = _broken_plain


class CorrectStoreBesideASuiteDefect(ListStore):
    """A correct list store: nothing it does can fail a scenario."""
