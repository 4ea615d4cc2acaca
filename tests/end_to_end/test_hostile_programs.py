"""Store programs held to the bounds Python stores have: a program (tests/stores/hostile_program.py) that
serves a correct store and misbehaves as a process. Its stderr is capped and decoded whatever it holds, a
program that ignores the end of its input dies with the run even when the runner is killed, and a close
that never answers is the store's failure, cut off by the call timeout."""

import signal
import sys


PROGRAM = f"cmd:{sys.executable} tests/stores/hostile_program.py"
ROUND_TRIP = ("-k", "round_trip_keeps")
MB = 1 << 20


def test_a_programs_stderr_is_capped_and_the_correct_store_passes(run_suite):
    """60 MB on its stderr (one line of 30 MB): the run's output stays within a few MB, and says it was cut."""
    result = run_suite("--store", f"{PROGRAM} stderr-flood", *ROUND_TRIP)
    assert result.exit_code == 0, result.output[-3000:]
    assert len(result.output.encode()) < 2 * MB, len(result.output.encode())
    assert "the store program's stderr is cut here" in result.output, result.output[-3000:]


def test_bytes_that_are_no_utf8_on_a_programs_stderr_are_shown_replaced(run_suite):
    """A byte that is no UTF-8 once killed the reader of the program's stderr: the pipe filled, and every later
    call of the correct store hung."""
    result = run_suite("--store", f"{PROGRAM} stderr-bytes", "--groups", "core")
    assert result.exit_code == 0, result.output[-3000:]
    assert "\ufffd\ufffd not utf-8 \ufffd" in result.output


def test_a_program_that_ignores_the_end_of_its_input_dies_with_a_killed_runner(run_suite):
    """The runner is killed (SIGKILL: no code of it runs after) while the program serves: the program, which
    ignores the end of its input and SIGTERM, dies all the same (its parent-death signal)."""
    result = run_suite("--store", f"{PROGRAM} ignores-eof", "--groups", "core,ttl", signals=[(8, signal.SIGKILL)],
                       expect_reports=False)
    assert result.exit_code == -signal.SIGKILL, result.output[-3000:]


def test_a_close_that_never_answers_is_the_stores_failure(run_suite):
    """Its close, first called as the suite binds it, never answers: said in the run's header, and the calls
    that wait behind it are cut off by the call timeout, failures of the store's (not a usage error)."""
    result = run_suite("--store", f"{PROGRAM} close-hangs", "--call-timeout", "3", *ROUND_TRIP)
    assert result.exit_code == 1, result.output[-3000:]
    failure, = result.summary["failures"]
    assert "did not return within 3 s" in failure["message"], failure["message"]
    assert result.summary["observations"][-1].startswith("the store's close did not return within 3 s "
                                                         "(--call-timeout) while the suite bound it")
