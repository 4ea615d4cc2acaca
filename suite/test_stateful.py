"""Stateful: random sequences of appends, loads, clears and restarts over several sessions and two
store instances, checked against the reference model at every load.

The fixed scenarios each try one thing; this one finds the bugs that need an order of operations
to show, such as a per-instance cache that another instance's writes do not invalidate. It runs a
Hypothesis state machine, derandomized so that a failure repeats on the next run, and shrinks a
failure to a short sequence of steps, listed under the expected and actual histories.
"""

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, precondition, rule, run_state_machine_as_test

from memory_regression.capabilities import Capability
from memory_regression.contract import Message
from memory_regression.reference import assert_history, expected_count_window

SESSIONS = ("s1", "s2", "s1:2")
CONTENTS = ("hello", "", "  spaced  ", "你好 🌍", "two\nlines", '{"role": "system"}')
EXAMPLES = 40
STEPS = 30


@pytest.mark.starts_first
def test_random_operations_match_the_model(memory):
    """After any sequence of appends (through either of two instances), clears and restarts of an
    instance, loading a session through either instance returns what the reference model holds:
    everything appended since its last clear, or the last N of it for a count-windowed store (N is
    the first of --window-sizes).

    If this fails: read the steps listed after the histories, oldest first. Look for state that
    lives in one instance (caches, counters, buffers), a clear that forgets a companion key, and
    trimming that depends on what happened before the last clear."""
    window = memory.window_sizes[0] if memory.has(Capability.COUNT_WINDOW) else None
    can_clear = memory.has(Capability.CLEAR)

    class MemoryModel(RuleBasedStateMachine):
        def __init__(self):
            super().__init__()
            memory.reset()
            self.stores = [self.new_store(), self.new_store()]
            self.appended = {sid: [] for sid in SESSIONS}
            self.count = 0

        @staticmethod
        def new_store():
            return memory.store(max_messages=window) if window else memory.store()

        @rule(session=st.sampled_from(SESSIONS), instance=st.sampled_from((0, 1)),
              role=st.sampled_from(("user", "assistant")), content=st.sampled_from(CONTENTS))
        def append(self, session, instance, role, content):
            self.count += 1
            message = Message(role, f"{content} #{self.count}")
            self.stores[instance].append(session, message.role, message.content)
            self.appended[session].append(message)

        @rule(session=st.sampled_from(SESSIONS), instance=st.sampled_from((0, 1)))
        def load(self, session, instance):
            appended = self.appended[session]
            expected = expected_count_window(appended, window) if window else appended
            assert_history(expected, self.stores[instance].load(session), appended,
                           context=f"loading {session!r} through instance {instance}: ")

        @precondition(lambda self: can_clear)
        @rule(session=st.sampled_from(SESSIONS), instance=st.sampled_from((0, 1)))
        def clear(self, session, instance):
            self.stores[instance].clear(session)
            self.appended[session] = []

        @rule(instance=st.sampled_from((0, 1)))
        def restart(self, instance):
            self.stores[instance] = self.new_store()

    run_state_machine_as_test(MemoryModel, settings=settings(
        max_examples=EXAMPLES, stateful_step_count=STEPS, deadline=None, derandomize=True, database=None,
        phases=[p for p in Phase if p is not Phase.explain], suppress_health_check=list(HealthCheck),
        print_blob=False))
