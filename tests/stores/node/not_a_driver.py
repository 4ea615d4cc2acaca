"""Programs that do not speak the store protocol, run as ``--store 'cmd:python3 not_a_driver.py MODE'``:
``garbage`` writes a line that is not the greeting, ``silent`` exits without a word, ``mute`` says
nothing and waits."""

import sys
import time

mode = sys.argv[1]
if mode == "garbage":
    print("Listening on port 3000", flush=True)
    time.sleep(30)
elif mode == "mute":
    time.sleep(30)
