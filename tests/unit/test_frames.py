"""The one frame filter (memory_regression/contract/frames.py): a scenario's failure shows its own lines and
the store's frames, not the harness's between them, in every exception of the chain; a failure with
no frame outside the harness keeps them all. End to end, every run_suite checks that no frame of the
tool reaches the user (conftest.assert_well_formed)."""

import traceback

import pytest

from memory_regression.contract.rules import Message
from memory_regression.reference.diagnosis import assert_history
from memory_regression.contract.frames import harness_frame, without_harness_frames
from memory_regression.harness.growth import timed_appends


class RaisingStore:
    def append(self, session_id, role, content):
        try:
            {}["missing"]
        except KeyError as exc:
            raise RuntimeError("append failed") from exc


def files_and_functions(exc):
    return [(frame.filename.rsplit("/", 1)[-1], frame.name) for frame in traceback.extract_tb(exc.__traceback__)]


def test_the_harness_frames_between_the_scenario_and_the_store_are_left_out():
    with pytest.raises(RuntimeError) as raised:
        timed_appends(RaisingStore(), "s", [Message("user", "hello")], 10, control=True)
    assert ("growth.py", "timed_appends") in files_and_functions(raised.value)
    without_harness_frames(raised.value)
    assert files_and_functions(raised.value) == [
        ("test_frames.py", "test_the_harness_frames_between_the_scenario_and_the_store_are_left_out"),
        ("test_frames.py", "append")]
    assert files_and_functions(raised.value.__cause__) == [("test_frames.py", "append")]


def test_a_failure_of_the_harness_alone_keeps_its_frames():
    try:
        timed_appends(None, "s", [Message("user", "hello")], 10, control=True)
    except AttributeError as exc:
        error = exc
    error.__traceback__ = error.__traceback__.tb_next   # the harness's frames only
    before = files_and_functions(error)
    without_harness_frames(error)
    assert files_and_functions(error) == before == [("growth.py", "timed_appends")]   # None.append


def test_a_finding_raised_by_the_harness_alone_shows_no_frame():
    """One of the failures Hypothesis found in the state machine: its frames are the rule's and the check's."""
    try:
        assert_history([Message("user", "a")], [], [Message("user", "a")])
    except AssertionError as exc:
        finding = exc
    finding.__traceback__ = finding.__traceback__.tb_next   # the harness's frames only
    group = ExceptionGroup("Hypothesis found 2 distinct failures.", [finding, ValueError("the store's")])
    without_harness_frames(group)
    assert files_and_functions(finding) == []


def test_suite_files_show_their_scenarios_not_their_checks(tmp_path):
    from memory_regression.contract.frames import SUITE
    assert not harness_frame(f"{SUITE}test_core.py", "test_no_silent_cap")
    assert harness_frame(f"{SUITE}test_compaction.py", "check_compaction")
    assert harness_frame(f"{SUITE}conftest.py", "memory")
    assert not harness_frame(str(tmp_path / "store.py"), "append")
