"""The runner runs in Python's UTF-8 mode, whatever the locale.

Under a locale whose encoding is ASCII (``LC_ALL=C`` with ``PYTHONUTF8=0``, where Python's own
switch to UTF-8 for the C locale is turned off), paths, arguments and the store's text would be
decoded as ASCII: a non-ASCII directory becomes a string with surrogates that no worker can be sent
and no report can hold, and printing a store's non-ASCII message fails. The runner therefore starts
itself again, before anything else, with ``PYTHONUTF8=1``, which its workers (and so the store)
inherit. Bytes that are not UTF-8 still decode with surrogate escapes, as in any UTF-8 locale.
"""

from __future__ import annotations

import os
import sys


def ensure() -> None:
    """Start this process again in UTF-8 mode, unless it is in it, or its file system encoding is UTF-8."""
    if sys.flags.utf8_mode or sys.getfilesystemencoding().lower().replace("-", "") == "utf8":
        return
    if os.environ.get("PYTHONUTF8") == "1":
        return   # asked for already, and not granted: go on as we are rather than loop
    sys.stdout.flush()
    os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], {**os.environ, "PYTHONUTF8": "1"})
