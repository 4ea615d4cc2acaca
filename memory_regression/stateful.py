"""The stateful scenario's state machine, importable: random sequences of operations over two
sessions and two store instances, each step checked against the reference model.

:class:`MemoryStateMachine` has one Hypothesis rule per operation (zarr's ``testing/stateful.py`` is
the model): fill a session to N-1, N or N+1 messages, append one message, append one equal to the
session's last, clear a session, restart an instance (a new one in its place appends). Bind it to a
scenario's ``stores`` and ``keyspace`` fixtures and a window with :meth:`MemoryStateMachine.bound`, and run it with
Hypothesis' ``run_state_machine_as_test``; :class:`Coverage` counts what the steps reached.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, precondition, rule

from .contract.capabilities import Capability
from .contract.rules import Message
from .reference.diagnosis import assert_history, fresh_instance_loads
from .reference.model import expected_count_window

SESSIONS = ("s1", "s1:2")     # ids sharing a prefix, as a glob or a careless key scheme would merge them
ALONE = "alone"                # a session of its own, where a diagnosis replays one session's appends
INSTANCES = (0, 1)
ROLES = ("user", "assistant")   # a session's messages alternate, the user's first (again after a clear)
CONTENTS = ("hello", "", "  spaced  ", "你好 🌍", "two\nlines", '{"role": "system"}')


@dataclass
class Coverage:
    """What the steps reached at one window size (the scenario's finding); a failure's shrinking
    runs more examples, which count too."""

    window: int | None
    examples: int = 0
    steps: int = 0
    loads: int = 0
    at_full: int = 0      # loads of a session holding exactly N messages
    past_full: int = 0    # loads of a session holding more than N
    refilled: int = 0     # loads of a session refilled since a clear found its window full
    longest: int = 0      # the most messages appended to one session since its last clear

    def loaded(self, held: int, refilled: bool) -> None:
        self.loads += 1
        if self.window:
            self.at_full += held == self.window
            self.past_full += held > self.window
            self.refilled += refilled

    def text(self, failed: bool) -> str:
        ran = f"{self.examples} examples, {self.steps} steps"
        if failed:
            ran += " (the failure's shrinking included)"
        if not self.window:
            return f"unwindowed: {ran}; {self.loads} loads; longest session {self.longest} messages"
        return (f"N={self.window}: {ran}; loads at full {self.at_full}, past full {self.past_full}, refilled "
                f"after clearing a full window {self.refilled}; longest session {self.longest} messages "
                f"({self.longest / self.window:.1f} N)")


sessions = st.sampled_from(SESSIONS)
instances = st.sampled_from(INSTANCES)


class MemoryStateMachine(RuleBasedStateMachine):
    """Two store instances, two sessions and the model of what each holds. Bound to a scenario with
    :meth:`bound`; the rules are tried in the order they are written, so that a failure shrinks
    towards a fill (one step instead of N appends)."""

    builder: Any = None              # the scenario's stores (fixture ``stores``)
    keyspace: Any = None             # its database (fixture ``keyspace``), emptied before each example
    window: int | None = None        # the count window N, or None: unwindowed
    coverage: Coverage | None = None

    @classmethod
    def bound(cls, stores: Any, keyspace: Any, window: int | None, coverage: Coverage) -> type[MemoryStateMachine]:
        """The machine for one scenario's ``stores`` and ``keyspace`` at window ``window``, counting into
        ``coverage``."""
        return type(cls.__name__, (cls,), {"builder": stores, "keyspace": keyspace, "window": window,
                                           "coverage": coverage})

    def __init__(self) -> None:
        super().__init__()
        self.keyspace.flush()
        self.coverage.examples += 1
        self.policy = self.builder.window_policy
        self.stores = [self.new_store(), self.new_store()]
        self.appended: dict[str, list[Message]] = {sid: [] for sid in SESSIONS}
        self.cleared_full = {sid: False for sid in SESSIONS}   # its last clear found its window full
        self.writers: dict[str, set] = {sid: set() for sid in SESSIONS}   # instances that wrote it since its clear
        self.generations = [0, 0]   # of each instance, counted by its restarts
        self.count = 0

    def new_store(self) -> Any:
        return self.builder.new(max_messages=self.window) if self.window else self.builder.new()

    # -- the operations, one rule each ------------------------------------------------------------------
    @precondition(lambda self: bool(self.window))
    @rule(session=sessions, instance=instances, past=st.sampled_from((-1, 0, 1)))
    def fill(self, session: str, instance: int, past: int) -> None:
        """Append until the session holds N-1, N or N+1 messages (at least one more)."""
        self._append(session, instance, target=max(self.window + past, 1))

    @rule(session=sessions, instance=instances)
    def append(self, session: str, instance: int) -> None:
        self._append(session, instance)

    @precondition(lambda self: self.builder.has(Capability.CLEAR))
    @rule(session=sessions, instance=instances)
    def clear(self, session: str, instance: int) -> None:
        self.coverage.steps += 1
        self.stores[instance].clear(session)
        self.cleared_full[session] = bool(self.window) and len(self.appended[session]) >= self.window
        self.appended[session] = []
        self.writers[session] = set()
        self.check(dict.fromkeys(SESSIONS, INSTANCES))   # the other session keeps its history

    @rule(session=sessions, instance=instances)
    def restart(self, session: str, instance: int) -> None:
        """A new instance in place of this one (a restarted worker) appends one message."""
        self.stores[instance] = self.new_store()
        self.generations[instance] += 1
        self._append(session, instance, restarted=True)

    @rule(session=sessions, instance=instances)
    def repeat(self, session: str, instance: int) -> None:
        """Append a message equal to the session's last (users do say "ok" twice)."""
        self._append(session, instance, repeat=True)

    def _alone(self, session: str) -> list[Message]:
        """What one new store instance loads after appending the session's messages since its last
        clear to a session of its own (``alone``), with no clear and no other instance."""
        store = self.new_store()
        for message in self.appended[session]:
            store.append(ALONE, message.role, message.content)
        return store.load(ALONE)

    # -- the model --------------------------------------------------------------------------------------
    def _append(self, session: str, instance: int, target: int = 0, repeat: bool = False,
                restarted: bool = False) -> None:
        self.coverage.steps += 1
        appended = self.appended[session]
        self.writers[session].add((instance, self.generations[instance]))
        for _ in range(max(target - len(appended), 1)):
            self.count += 1
            message = (appended[-1] if repeat and appended else
                       Message(ROLES[len(appended) % 2], f"{CONTENTS[self.count % len(CONTENTS)]} #{self.count}"))
            self.stores[instance].append(session, message.role, message.content)
            appended.append(message)
        self.coverage.longest = max(self.coverage.longest, len(appended))
        # the session through both instances; after a restart every session through the new one
        self.check({**dict.fromkeys(SESSIONS if restarted else (), (instance,)), session: INSTANCES})

    def check(self, loads: dict[str, tuple[int, ...]]) -> None:
        """Load each session through the instances given, and compare with the model."""
        for session, instances_ in loads.items():
            appended = self.appended[session]
            expected = expected_count_window(appended, self.window, self.policy) if self.window else appended
            for instance in instances_:
                self.coverage.loaded(len(appended), self.cleared_full[session] and bool(appended))
                assert_history(expected, self.stores[instance].load(session), appended,
                               context=f"loading {session!r} through instance {instance}: ",
                               hint=lambda history, session=session, instance=instance, expected=expected:
                               self.why(session, instance, expected, history))

    def why(self, session: str, instance: int, expected: list[Message], history: list[Message]) -> str | None:
        """What the steps show of a load that differed: a new instance loading it right (state in
        the instance), or loading the same (Redis holds it) after a clear of a full window or
        writes through several instances, named as a cause only where one new instance given the
        same appends alone keeps them right."""
        fresh = self.new_store().load(session)
        if fresh != history:
            return fresh_instance_loads(expected, fresh, f"instance {instance} answers from state kept in the "
                                        "instance (a cache, a count) that another instance's writes or a clear "
                                        "made stale")
        held = "a new store instance loads the same, so Redis holds it"
        if self.cleared_full[session] or len(self.writers[session]) > 1:
            alone = self._alone(session)
            if alone != expected:   # neither the clear nor the second instance is needed to get it wrong
                return (f"{held}; one new store instance given the same {len(self.appended[session])} appends in a "
                        f"session of its own, with no clear and no other instance, loads it wrong as well "
                        f"({len(alone)} messages, expected {len(expected)})")
        if self.cleared_full[session]:
            return (f"{held}; the session was refilled after a clear of its full window: state kept beside the "
                    "list that clear leaves behind (a \"window full\" mark, a counter of messages or trims) "
                    "would do this")
        if len(self.writers[session]) > 1:
            return (f"{held}; since its last clear {len(self.writers[session])} store instances wrote the session "
                    "(two instances, or one restarted): state each instance keeps of the session (a sequence "
                    "number or a count seeded from it) that the other's writes make stale would do this")
        return None
