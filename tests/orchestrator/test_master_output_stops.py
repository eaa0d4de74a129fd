"""The master's output survives stop signals (master_output.write_all).

A stop signal (SIGSTOP, a frozen cgroup, a debugger) that lands while the output thread
is blocked writing to a full pipe cuts that write short. Python's buffered stdout then
lost the rest of the batch: about 1 MB of interval lines per stop, seen as a line cut in
two and 13-35 workers' lines missing after a 5 s stop of the master at 512 workers
(bench/fleet.py). Here a real master output in a child process writes to a real pipe
that the test reads slowly (so the writes block), and the child is stopped and
continued many times: every line must arrive whole and in order.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

LINES = 1200
CHILD = f"""
import json
from loadtower.orchestrator.master_output import MasterOutput

out = MasterOutput()
pad = "x" * 20_000
for seq in range({LINES}):
    out.put_text(json.dumps({{"seq": seq, "pad": pad}}))
assert out.drain(120)
"""


def test_every_line_arrives_whole_across_stops_of_the_writer() -> None:
    child = subprocess.Popen([sys.executable, "-c", CHILD], stdout=subprocess.PIPE)
    done = threading.Event()
    stops = []

    def stop_and_continue() -> None:
        while not done.wait(0.3):
            os.kill(child.pid, signal.SIGSTOP)
            stops.append(time.monotonic())
            time.sleep(0.1)
            os.kill(child.pid, signal.SIGCONT)

    stopper = threading.Thread(target=stop_and_continue, daemon=True)
    seqs = []
    try:
        assert child.stdout is not None
        stopper.start()
        for raw in child.stdout:
            seqs.append(json.loads(raw)["seq"])  # a line cut in two does not parse
            time.sleep(0.004)  # a reader slower than the writer: its writes block
        assert child.wait(timeout=60) == 0
    finally:
        done.set()
        stopper.join(timeout=10)
        if child.poll() is None:
            os.kill(child.pid, signal.SIGCONT)
            child.kill()
            child.wait(timeout=10)
        if child.stdout is not None:
            child.stdout.close()
    assert len(stops) >= 5  # the writer was stopped while it wrote, many times
    assert seqs == list(range(LINES))
