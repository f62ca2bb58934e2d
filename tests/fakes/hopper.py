"""A process of a pull request's that a sweep reading pids and then killing them never catches: it
keeps forking, each parent exits at once and each child starts a new session, so whatever pid was
read is gone when the kill lands. Meanwhile it tries to append to FILEs (the runner's file commands,
which are root's while the PR's programs run) and records in OUT/hopper.wrote each one it could
write; it beats into OUT/hopper.beats, the first time at once (the setup returns only then). It
stops by itself after LIFETIME seconds, or once OUT/stop exists (so a test's machine is never left
with one). Standard library only.

    python3 hopper.py OUT LIFETIME [FILE…]
"""

import os
import sys
import time

out, lifetime, files = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
deadline = time.time() + lifetime
beating = os.path.join(out, "hopper.beats")
if os.fork():  # the setup command returns once the hopper runs (its first beat), whatever the machine's load
    started = time.time()
    while not os.path.exists(beating) and time.time() - started < 20:
        time.sleep(0.01)
    sys.exit(0)
os.setsid()
os.closerange(0, 3)
written: set[str] = set()
hops = 0
while time.time() < deadline and not os.path.exists(os.path.join(out, "stop")):
    if os.fork():
        os._exit(0)
    os.setsid()
    hops += 1
    if hops % 50 and hops != 1:
        continue
    with open(beating, "a") as beats:
        beats.write(f"{time.time()}\n")
    for path in files:
        if path in written:
            continue
        try:
            with open(path, "a") as f:
                f.write(f"BASH_ENV={out}/evil.sh\n")
        except OSError:
            continue
        written.add(path)
        with open(os.path.join(out, "hopper.wrote"), "a") as log:
            log.write(path + "\n")
os._exit(0)
