"""A stand-in for the image's PID 1 (tini): starts the entrypoint with the container's whole
environment (every INPUT_*, keys and token included) and stays alive holding it, as tini does,
forwarding SIGINT and SIGTERM; exits with the entrypoint's code.

    python pid1.py PROGRAM ARGS…
"""

import signal
import subprocess
import sys

child = subprocess.Popen(sys.argv[1:])
for sig in (signal.SIGINT, signal.SIGTERM):
    signal.signal(sig, lambda number, _frame: child.send_signal(number))
sys.exit(child.wait())
