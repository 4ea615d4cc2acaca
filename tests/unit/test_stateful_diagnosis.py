"""What the stateful scenario's state machine says of a load that differed (MemoryStateMachine.why),
in-process over stores whose instances share one dict (the server): the writes of two instances
are named as the likely cause only where one new instance given the same appends alone keeps them
right."""

from types import SimpleNamespace

from memory_regression.contract.rules import Message
from memory_regression.reference.model import SUFFIX, expected_count_window
from memory_regression.stateful import Coverage, MemoryStateMachine

WINDOW = 3


class SharedList:
    """Keeps the last ``keep`` messages of each session in ``server``, shared by every instance; with
    ``numbered``, it numbers them from a count kept in the instance, seeded from what the server holds
    (as tests.stores.stateful_bugs.SequenceSeededFromSize does): two instances writing in turn reuse
    numbers, and the newest of them sorts first and is trimmed."""

    def __init__(self, server, keep, numbered):
        self.server, self.keep, self.numbered, self.next = server, keep, numbered, {}

    def append(self, session, role, content):
        held = self.server.setdefault(session, [])
        number = self.next.setdefault(session, len(held)) if self.numbered else len(held)
        self.next[session] = number + 1
        held.append((number, Message(role, content)))
        held.sort(key=lambda numbered: (numbered[0], numbered[1].content))   # a sorted set's order
        del held[:-self.keep]

    def load(self, session):
        return [message for _number, message in self.server.get(session, [])]


def machine(keep, numbered=False):
    server = {}
    builder = SimpleNamespace(window_policy=SUFFIX, has=lambda capability: True,
                              new=lambda max_messages: SharedList(server, keep, numbered))
    bound = MemoryStateMachine.bound(builder, SimpleNamespace(flush=server.clear), WINDOW, Coverage(WINDOW))
    return bound()


def diagnosis(state, writes):
    """Append ``writes`` (instance, content) to s1, and what ``why`` says of instance 0's load."""
    for instance, content in writes:
        message = Message("user", content)
        state.stores[instance].append("s1", message.role, message.content)
        state.appended["s1"].append(message)
        state.writers["s1"].add((instance, 0))
    expected = expected_count_window(state.appended["s1"], WINDOW, SUFFIX)
    history = state.stores[0].load("s1")
    assert history != expected, "the store under test must get this wrong"
    return state.why("s1", 0, expected, history)


def test_a_store_wrong_on_its_own_is_not_blamed_on_its_two_instances():
    """It keeps one message too many whoever writes: one instance alone gets it wrong as well."""
    why = diagnosis(machine(keep=WINDOW + 1), [(0, "a"), (1, "b"), (0, "c"), (1, "d")])
    assert why == ("a new store instance loads the same, so Redis holds it; one new store instance given the same 4 "
                   "appends in a session of its own, with no clear and no other instance, loads it wrong as well "
                   "(4 messages, expected 3)")


def test_two_instances_are_named_where_one_alone_keeps_the_window():
    """Numbers kept in each instance: one instance alone numbers right; a second one, started after the
    window first trimmed, numbers its message below the ones kept."""
    writes = [(0, content) for content in "abcdef"] + [(1, "g")]
    why = diagnosis(machine(keep=WINDOW, numbered=True), writes)
    assert why.startswith("a new store instance loads the same, so Redis holds it; since its last clear 2 store "
                          "instances wrote the session"), why
