"""A baseline is untrusted input (memory_regression/reports/baseline_file.py): each malformed file a fork or a careless
edit can hand the gate is a usage error that names what is wrong, before any scenario runs; a pipe or a
device is read within a size cap and a deadline."""

import json
import os
import threading
import time

import pytest

from memory_regression.reports.baseline_file import load_baseline, MAX_BYTES, read_bounded
from memory_regression.errors import UsageError

NODEID = "test_core.py::test_round_trip_keeps_role_content_and_order[N=5]"
VALID = {"store": "app/memory.py:Memory", "backend": "redis 7.0.15 (private server)", "window_sizes": [5],
         "profiles": [{"name": "gpt-4o"}], "conformance_level": "core+ttl",
         "results": [{"nodeid": NODEID, "outcome": "passed", "requires": [], "guarantees": []}],
         "warnings": [{"nodeid": NODEID, "guarantee": "any-session-id", "text": "refused"}],
         "latency": [{"nodeid": NODEID, "append": {"ratio_p50": 1.5, "ratio_p95": 3.0}}],
         "footprint": [{"nodeid": NODEID, "bytes_per_message": 80.5}]}


def with_field(path, value):
    """VALID with the field at ``path`` (keys and indexes) set to ``value``, or removed when it is ``...``."""
    data = json.loads(json.dumps(VALID))
    *outer, last = path
    place = data
    for key in outer:
        place = place[key]
    if value is ...:
        del place[last]
    else:
        place[last] = value
    return json.dumps(data)


def refused(tmp_path, text, given="base.json"):
    (tmp_path / given).write_text(text) if isinstance(text, str) else (tmp_path / given).write_bytes(text)
    with pytest.raises(UsageError) as raised:
        load_baseline(tmp_path / given, given)
    return str(raised.value)


def test_a_valid_baseline_is_read_as_the_comparison_reads_it(tmp_path):
    (tmp_path / "base.json").write_text(json.dumps({**VALID, "duration_s": 3.2, "matrix": {"rows": []}}))
    data = load_baseline(tmp_path / "base.json", "base.json")
    assert data["results"][0] == {"nodeid": NODEID, "outcome": "passed", "engine": None, "scenario": "", "point": "",
                                  "message": "", "requires": [], "guarantees": []}
    assert data["footprint"][0]["bytes_per_message"] == 80.5 and "matrix" not in data


# the seven malformed baselines of the hostile round, each one field off, and where the message points
@pytest.mark.parametrize("path, value, named", [
    (("backend",), 7, "backend: Input should be a valid string"),
    (("footprint", 0, "bytes_per_message"), "BIGINT", "footprint[0].bytes_per_message"),
    (("latency", 0, "nodeid"), ..., "latency[0].nodeid: Field required"),
    (("conformance_level",), 3, "conformance_level: Input should be a valid string"),
    (("results", 0, "nodeid"), 5, "results[0].nodeid: Input should be a valid string"),
    (("profiles",), ["gpt-4o"], "profiles[0]: Input should be a valid dictionary"),
    (("warnings", 0, "nodeid"), ..., "warnings[0].nodeid: Field required"),
    # text that would fake the verdict in the job summary: no field of one line may hold a newline
    (("results", 0, "nodeid"), f"{NODEID}\n## ✅ all scenarios passed", "results[0].nodeid: String should match"),
    (("conformance_level",), "core\n<img src=x>", "conformance_level: String should match"),
    (("warnings", 0, "guarantee"), "ttl\n@octocat", "warnings[0].guarantee: String should match"),
    (("footprint", 0, "bytes_per_message"), -1, "footprint[0].bytes_per_message: Input should be greater than"),
    (("results", 0, "outcome"), "great", "results[0].outcome: Input should be 'passed', 'failed'"),
])
def test_a_field_of_another_type_or_beyond_its_range_is_a_usage_error_naming_it(tmp_path, path, value, named):
    text = with_field(path, 0 if value == "BIGINT" else value)
    if value == "BIGINT":   # a JSON number no float holds
        text = text.replace('"bytes_per_message": 0', '"bytes_per_message": 1' + "0" * 400)
    message = refused(tmp_path, text)
    assert message.startswith("--baseline 'base.json': not a summary.json of a run: "), message
    assert named in message, message


@pytest.mark.parametrize("text, said", [
    ("[" * 100_000 + "]" * 100_000, "nested deeper than Python can read"),
    ('{"results": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested deeper than Python can read"),
    (b'{"results": "\xff"}', "not UTF-8 text"),
    ("{", "not JSON"),
    ("[]", "its JSON is no object"),
    ('{"results": []}', "a run that judged nothing"),
])
def test_what_is_no_summary_at_all_says_so(tmp_path, text, said):
    assert said in refused(tmp_path, text)


def test_a_device_that_never_ends_is_cut_at_the_size_cap():
    started = time.monotonic()
    with pytest.raises(UsageError, match=f"'/dev/zero': not read: it is larger than {MAX_BYTES >> 20} MB"):
        load_baseline(os.devnull.replace("null", "zero"), "/dev/zero")
    assert time.monotonic() - started < 10


def test_a_fifo_nothing_writes_to_is_a_usage_error_at_the_deadline(tmp_path):
    """Opening a FIFO with no writer blocks for ever unless it is opened without blocking."""
    os.mkfifo(tmp_path / "base.json")
    started = time.monotonic()
    with pytest.raises(UsageError, match=r"delivered 0 bytes and no end within 0\.5 s"):
        load_baseline(tmp_path / "base.json", "base.json", deadline_s=0.5)
    assert 0.5 <= time.monotonic() - started < 5


def test_a_fifo_written_in_time_is_read_whole(tmp_path):
    """A pipe's writer may come after the reader opened it, and write in pieces: read to its end."""
    os.mkfifo(tmp_path / "base.json")
    text = json.dumps(VALID).encode()

    def write():
        time.sleep(0.2)
        with open(tmp_path / "base.json", "wb", buffering=0) as fifo:
            for start in range(0, len(text), 100):
                fifo.write(text[start:start + 100])
                time.sleep(0.01)
    writer = threading.Thread(target=write)
    writer.start()
    try:
        assert read_bounded(tmp_path / "base.json", deadline_s=10) == text
    finally:
        writer.join()


def test_a_directory_is_no_baseline(tmp_path):
    (tmp_path / "base.json").mkdir()
    with pytest.raises(UsageError, match="--baseline 'base.json': cannot be read: Is a directory"):
        load_baseline(tmp_path / "base.json", "base.json")
