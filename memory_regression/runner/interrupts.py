"""Ctrl-C and SIGTERM: the run stops at the first one, and any later one is only noted.

The runner installs this before anything else. A signal raises KeyboardInterrupt only where that
is safe: while the runner waits (on pip, or on the workers in the session's loop). Anywhere else,
while Python imports modules or pytest configures itself, an exception raised by a signal handler
can be swallowed (fork callbacks ignore it) or turned into another error (class creation wraps it
in a RuntimeError), so there the signal is noted, and the next checkpoint raises it. Either way
the run ends in exit status 130 with reports that say "interrupted". Once the run is stopping,
signals raise nothing, so killing the workers, stopping Redis and writing the reports always
complete, however often the user presses Ctrl-C.
"""

from __future__ import annotations

import contextlib
import signal
from typing import Any, Iterator

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupts:
    def __init__(self) -> None:
        self.received: str | None = None    # the first signal's name
        self._raising = False               # inside raising(): a signal raises at once
        self._delivered = False             # KeyboardInterrupt was raised once, or the run is stopping

    def install(self) -> None:
        """Handle SIGINT and SIGTERM (SIGINT too when a shell started us with it ignored)."""
        for signum in SIGNALS:
            signal.signal(signum, self._handle)

    def check(self) -> None:
        """A checkpoint: raise KeyboardInterrupt if a signal came and has not been raised yet."""
        if self.received is not None and not self._delivered:
            self._delivered = True
            raise KeyboardInterrupt

    @contextlib.contextmanager
    def raising(self) -> Iterator[None]:
        """While inside, a signal raises KeyboardInterrupt at once (one that came before, on entry)."""
        self.check()
        self._raising = True
        try:
            yield
        finally:
            self._raising = False

    def hold(self) -> None:
        """The run is stopping: from now on, signals are noted and raise nothing."""
        self._raising = False
        self._delivered = True

    def ignore(self) -> None:
        """The run is over: a late signal must not kill the exiting process (Python would restore the
        default handlers while shutting down, and the exit status would become the signal's)."""
        for signum in SIGNALS:
            signal.signal(signum, signal.SIG_IGN)

    def _handle(self, signum: int, _frame: Any) -> None:
        if self.received is None:
            self.received = signal.Signals(signum).name
        if self._raising:
            self._raising = False
            self.check()


INTERRUPTS = Interrupts()
