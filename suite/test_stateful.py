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

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import run_state_machine_as_test

from memory_regression.stateful import Coverage, MemoryStateMachine

EXAMPLES = 10       # per window size; the generated sequences, not counting a failure's shrinking
STEPS = 30


@pytest.mark.starts_first
def test_random_operations_match_the_model(stores, keyspace, findings, window):
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
    coverage = Coverage(window)
    machine = MemoryStateMachine.bound(stores, keyspace, window, coverage)
    failed = True
    try:
        run_state_machine_as_test(machine, settings=settings(
            max_examples=EXAMPLES, stateful_step_count=STEPS, deadline=None, derandomize=True, database=None,
            phases=[p for p in Phase if p is not Phase.explain], suppress_health_check=list(HealthCheck),
            print_blob=False))
        failed = False
    finally:
        findings.note(coverage.text(failed))
