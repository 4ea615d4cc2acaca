"""Where the store was when its worker was cut off (supervisor.store_frames), read from a real
faulthandler dump of every thread, as the worker writes one."""

import faulthandler
import threading

from memory_regression.runner.supervisor import store_frames


def stuck_in_the_store(release):
    release.wait()


def test_a_hung_store_is_shown_and_a_thread_only_in_the_standard_library_is_not(tmp_path):
    """The store's thread is shown with its frames (the standard library's under it included); a thread
    that only waits in the standard library (the suite's, a timer) is left out."""
    release = threading.Event()
    store = threading.Thread(target=stuck_in_the_store, args=(release,), name="store")
    waiting = threading.Thread(target=release.wait, name="only-the-standard-library")
    store.start(), waiting.start()
    dump = tmp_path / "dump"
    try:
        with dump.open("w") as file:
            faulthandler.dump_traceback(file, all_threads=True)
    finally:
        release.set()
        store.join(), waiting.join()
    shown = store_frames(dump.read_text())
    headings = [line for line in shown.splitlines() if line.startswith(("Thread", "Current thread"))]
    assert len(headings) == 2, shown   # the store's thread, and this test's own (a file outside the suite)
    assert "in stuck_in_the_store" in shown and "threading.py" in shown, shown
    assert shown.count("test_supervisor.py") == 2, shown
