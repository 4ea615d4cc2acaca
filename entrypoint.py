#!/usr/bin/env python3
"""Run the memory-regression suite against a store: ``python entrypoint.py --store app/memory.py:Store``.

See README.md, or ``python entrypoint.py --help``.
"""

import sys

from memory_regression.cli import main

if __name__ == "__main__":
    sys.exit(main())
