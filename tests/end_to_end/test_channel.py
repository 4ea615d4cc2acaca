"""The verdict channel is the run's alone (memory_regression/runner/supervisor.py): while a broken store
runs, a process that is not one of the run's workers, of another user or of the runner's own,
sends the supervisor's socket what a worker would (an abort with the status "passed", a hello
naming another process's pid), and the verdict stands and that process lives."""

import os
import signal
import subprocess

import pytest

# sends, every 50 ms for at most 60 s, an abort "passed" and a hello naming VICTIM to every socket
# of a run it can see: in the run directories under TMPDIR, /tmp and /dev/shm, and in Linux's
# abstract namespace; it prints what reached a socket
SPOOFER = r"""
import glob, json, os, socket, sys, time
victim, bases = int(sys.argv[1]), sys.argv[2:]
abort = json.dumps({"kind": "abort", "worker": "gw0", "status": "passed", "message": "SPOOFED"}).encode()
hello = json.dumps({"kind": "hello", "worker": "gw9", "pid": victim}).encode()
sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
reached = set()
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    addresses = [path for base in bases for path in glob.glob(base + "/memory-regression-run-*/supervisor.sock")]
    try:
        with open("/proc/net/unix") as table:
            addresses += ["\0" + line.split()[-1][1:] for line in table if "@memory-regression" in line]
    except OSError:
        pass
    addresses += [base + "/" + name + "/supervisor.sock" for base in bases
                  for name in (os.listdir(base) if os.access(base, os.R_OK) else [])
                  if name.startswith("memory-regression-run-")]
    for address in set(addresses):
        for data in (hello, abort):
            try:
                sock.sendto(data, address)
                if address not in reached:
                    reached.add(address)
                    print("reached", repr(address), flush=True)
            except OSError:
                pass
    time.sleep(0.05)
"""


@pytest.mark.parametrize("user, long_tmpdir", [("nobody", True), (None, False)],
                         ids=["another user, a long TMPDIR", "the same user, not a worker"])
def test_no_process_but_the_workers_can_speak_for_the_run(run_suite, tmp_path, user, long_tmpdir):
    if user and os.geteuid() != 0:
        pytest.skip("starting a process as another user needs root")
    tmpdir = tmp_path / ("t" * 110 if long_tmpdir else "t")
    tmpdir.mkdir()
    tmpdir.chmod(0o777)
    victim = subprocess.Popen(["sleep", "120"])
    spoofer = subprocess.Popen(["/usr/bin/python3", "-c", SPOOFER, str(victim.pid), str(tmpdir), "/tmp", "/dev/shm"],
                               user=user, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               env={"PATH": "/usr/bin:/bin"})
    try:
        # a broken store whose window keeps one message too many, caught however loaded the machine
        # (a cap would show only if enough appends fit in the budget); a run of several seconds (the
        # expiry scenarios wait 3 s), past the scenario timeout after which the runner would kill a
        # "worker" that said hello and never ended a scenario
        result = run_suite("--store", "tests.stores.broken:OffByOneTrim", "--groups", "core,count-window,ttl,expiry",
                           "--scenario-timeout", "3", env={"TMPDIR": str(tmpdir)})
    finally:
        spoofer.send_signal(signal.SIGTERM)
        reached = spoofer.communicate(timeout=10)[0]
    try:
        assert result.exit_code == 1, result.output
        assert result.summary["status"] == "failed" and "SPOOFED" not in result.output, result.output
        assert result.failing_scenarios() == {"test_count_window_keeps_last_n"}, result.output
        assert victim.poll() is None, "the runner signalled a process that is not its worker"
        if user:
            assert "reached" not in reached, f"another user reached the run's socket: {reached}"
    finally:
        victim.kill()
        victim.wait()
