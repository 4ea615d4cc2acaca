"""Stateful: random sequences of appends, fills, clears and restarts over two sessions and two store
instances, each step checked against the reference model; for a count-windowed store once per
window size N, else once, unwindowed.

The fixed scenarios each try one thing; this one finds the bugs that need an order of operations
to show: a window one message short or long that shows only past full, state kept beside the list
(a "window full" mark, a counter) that a clear leaves behind, state kept in the instance (a cache,
a count, a sequence number) that the other instance's writes or a restart make stale. A fill
appends until the session holds N-1, N or N+1 messages, so a few steps reach full windows, go
past them, clear them and refill them. After every step the sessions it may have changed are
loaded through both instances (after a restart, through the new one) and compared with the model.
What the steps reached is the scenario's finding, pass or fail: per N, the loads at full, past
full and refilled after clearing a full window, and the longest session.

It runs a Hypothesis state machine, derandomized so that a failure repeats on the next run, and
shrinks a failure to a short sequence of steps, listed under the expected and actual histories.
"""

from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule, run_state_machine_as_test

from memory_regression.capabilities import Capability
from memory_regression.contract import Message
from memory_regression.diagnosis import assert_history, fresh_instance_loads
from memory_regression.reference import expected_count_window

SESSIONS = ("s1", "s1:2")     # ids sharing a prefix, as a glob or a careless key scheme would merge them
INSTANCES = (0, 1)
ROLES = ("user", "assistant")   # a session's messages alternate, the user's first (again after a clear)
CONTENTS = ("hello", "", "  spaced  ", "你好 🌍", "two\nlines", '{"role": "system"}')
EXAMPLES = 10       # per window size; the generated sequences, not counting a failure's shrinking
STEPS = 30
FILL = "fill to "   # appends until the session holds that many messages (at least one)
RESTART = "restart, then append"   # a new instance in place of this one (a restarted worker) appends one message
REPEAT = "repeat"   # appends a message equal to the session's last one (users do say "ok" twice)


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


@pytest.mark.starts_first
def test_random_operations_match_the_model(memory, window):
    """After any sequence of steps, each through either of two instances (append one message; append
    one equal to the session's last; fill the session to N-1, N or N+1 messages; clear it; restart an
    instance), every session holds
    what the reference model says: everything appended since its last clear, or, for a
    count-windowed store (run once per N of --window-sizes), what the window policy keeps of it
    (under suffix, the last N; a session's messages alternate user and assistant, the user's first).

    If this fails: read the steps listed after the histories, oldest first; the diagnosis names the
    load that differed. One message too many or too few once a session passes N is a trim index
    (``ltrim(key, -N, -1)`` keeps N). A window that misbehaves only after a clear of a full one is
    state kept beside the list (a "window full" mark, a counter of messages or trims) that clear
    does not delete. A history that is stale or misordered after the other instance wrote, or
    after a restart, is state kept in the instance: a cache checked by the list's length (which
    stops changing once the window is full), a count of the session's messages, a sequence number
    seeded from the list's length. The finding says what the steps reached at each N; a count of
    0 there means the scenario did not test that state."""
    can_clear = memory.has(Capability.CLEAR)
    policy = memory.window_policy
    fills = sorted({max(window - 1, 1), window, window + 1}) if window else []
    # fills first: a failure shrinks towards them, one step instead of N appends
    operations = (*(f"{FILL}{n}" for n in fills), "append", *(["clear"] if can_clear else []), RESTART, REPEAT)
    coverage = Coverage(window)

    class MemoryModel(RuleBasedStateMachine):
        def __init__(self):
            super().__init__()
            memory.reset()
            coverage.examples += 1
            self.stores = [self.new_store(), self.new_store()]
            self.appended = {sid: [] for sid in SESSIONS}
            self.cleared_full = {sid: False for sid in SESSIONS}   # its last clear found its window full
            self.writers = {sid: set() for sid in SESSIONS}   # the instances that wrote it since its last clear
            self.generations = [0, 0]   # of each instance, counted by its restarts
            self.count = 0

        @staticmethod
        def new_store():
            return memory.store(max_messages=window) if window else memory.store()

        @rule(session=st.sampled_from(SESSIONS), instance=st.sampled_from(INSTANCES), op=st.sampled_from(operations))
        def write(self, session, instance, op):
            coverage.steps += 1
            appended = self.appended[session]
            if op == "clear":
                self.stores[instance].clear(session)
                self.cleared_full[session] = bool(window) and len(appended) >= window
                self.appended[session] = []
                self.writers[session] = set()
                self.check(dict.fromkeys(SESSIONS, INSTANCES))   # the other session keeps its history
                return
            restarted = op == RESTART
            if restarted:
                self.stores[instance] = self.new_store()
                self.generations[instance] += 1
            self.writers[session].add((instance, self.generations[instance]))
            target = int(op.removeprefix(FILL)) if op.startswith(FILL) else 0
            for _ in range(max(target - len(appended), 1)):
                self.count += 1
                message = (appended[-1] if op == REPEAT and appended else
                           Message(ROLES[len(appended) % 2], f"{CONTENTS[self.count % len(CONTENTS)]} #{self.count}"))
                self.stores[instance].append(session, message.role, message.content)
                appended.append(message)
            coverage.longest = max(coverage.longest, len(appended))
            # the session through both instances; after a restart every session through the new one
            self.check({**dict.fromkeys(SESSIONS if restarted else (), (instance,)), session: INSTANCES})

        def check(self, loads):
            """Load each session through the instances given, and compare with the model."""
            for session, instances in loads.items():
                appended = self.appended[session]
                expected = expected_count_window(appended, window, policy) if window else appended
                for instance in instances:
                    coverage.loaded(len(appended), self.cleared_full[session] and bool(appended))
                    assert_history(expected, self.stores[instance].load(session), appended,
                                   context=f"loading {session!r} through instance {instance}: ",
                                   hint=lambda history: self.why(session, instance, expected, history))

        def why(self, session, instance, expected, history):
            """What the steps show of a load that differed: a new instance loading it right (state in
            the instance), or loading the same (Redis holds it) after a clear of a full window or
            writes through several instances."""
            fresh = self.new_store().load(session)
            if fresh != history:
                return fresh_instance_loads(expected, fresh, f"instance {instance} answers from state kept in the "
                                            "instance (a cache, a count) that another instance's writes or a clear "
                                            "made stale")
            held = "a new store instance loads the same, so Redis holds it"
            if self.cleared_full[session]:
                return (f"{held}; the session was refilled after a clear of its full window: state kept beside the "
                        "list that clear leaves behind (a \"window full\" mark, a counter of messages or trims) "
                        "would do this")
            if len(self.writers[session]) > 1:
                return (f"{held}; since its last clear {len(self.writers[session])} store instances wrote the session "
                        "(two instances, or one restarted): state each instance keeps of the session (a sequence "
                        "number or a count seeded from it) that the other's writes make stale would do this")
            return None

    failed = True
    try:
        run_state_machine_as_test(MemoryModel, settings=settings(
            max_examples=EXAMPLES, stateful_step_count=STEPS, deadline=None, derandomize=True, database=None,
            phases=[p for p in Phase if p is not Phase.explain], suppress_health_check=list(HealthCheck),
            print_blob=False))
        failed = False
    finally:
        memory.note(coverage.text(failed))
