#!/usr/bin/env python3
"""Run the memory-regression suite against a store: ``python entrypoint.py --store app/memory.py:Store``.

See README.md, or ``python entrypoint.py --help``.
"""

import sys

from memory_regression.runner import utf8_mode

utf8_mode.ensure()   # under an ASCII locale, start again in Python's UTF-8 mode (memory_regression/utf8_mode.py)

from memory_regression.runner.interrupts import INTERRUPTS  # noqa: E402

INTERRUPTS.install()  # first, so that Ctrl-C at any moment ends with reports that say "interrupted"

from memory_regression.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
