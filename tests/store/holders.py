"""A real other process that holds a store file open (DuckDB's lock), for as long as a test
needs it: ended (and waited for) when the `with` block ends, also on failure. A writer
holding the file is asked to let go (a knock from this process while the holder starts;
the holder itself is plain DuckDB, retrying until it gets in)."""

from __future__ import annotations

import select
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from loadtower.store.knock import Knock

# the holder's command line (the marker first) is what the lock error names
HOLD = ("'lock-holder-for-test';import sys,time,duckdb as d\nwhile 1:\n try:c=d.connect(sys.argv[1]);"
        "break\n except d.IOException:time.sleep(.01)\nprint('holding',flush=True);sys.stdin.read()")


@contextmanager
def holding(path: Path, timeout_s: float = 60.0) -> Iterator[subprocess.Popen]:
    knock = Knock(path)
    knock.knock()
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(path)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        try:
            ready, _, _ = select.select([proc.stdout], [], [], timeout_s)
            assert ready and proc.stdout.readline().strip() == "holding", "holder did not start"
        finally:
            knock.withdraw()
        yield proc
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)
        proc.stdout.close()
