"""Ctrl-C and SIGTERM: the first one stops the run, any later one is only noted.

The runner installs this before anything else and arms it as soon as it knows where the reports
go, so an interrupt at any moment ends in exit status 130 with reports that say "interrupted". Once the run is stopping (or finishing), signals no longer
raise, so killing the workers, stopping Redis and writing the reports always complete, however
often the user presses Ctrl-C.
"""

from __future__ import annotations

import signal
from typing import Any

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupts:
    def __init__(self) -> None:
        self.received: str | None = None    # the first signal's name
        self._raising = False

    def install(self) -> None:
        """Handle SIGINT and SIGTERM (SIGINT too when a shell started us with it ignored); until
        :meth:`arm`, a signal is only noted."""
        for signum in SIGNALS:
            signal.signal(signum, self._handle)

    def arm(self) -> None:
        """Let the first signal raise KeyboardInterrupt, at once if it came already: the caller is
        ready to write reports that say "interrupted"."""
        if self.received is not None:
            raise KeyboardInterrupt
        self._raising = True

    def hold(self) -> None:
        """From now on, signals are noted and raise nothing."""
        self._raising = False

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
                raise KeyboardInterrupt


INTERRUPTS = Interrupts()
