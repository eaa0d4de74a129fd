"""A real other process that holds a store file open (DuckDB's lock), for as long as a test
needs it: ended (and waited for) when the `with` block ends, also on failure."""

from __future__ import annotations

import select
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

# short: the holder's command line (this, then the marker) is what the lock error names
HOLD = "import sys,duckdb;c=duckdb.connect(sys.argv[2]);print('holding',flush=True);sys.stdin.read()"


@contextmanager
def holding(path: Path, timeout_s: float = 60.0) -> Iterator[subprocess.Popen]:
    proc = subprocess.Popen([sys.executable, "-c", HOLD, "lock-holder-for-test", str(path)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        ready, _, _ = select.select([proc.stdout], [], [], timeout_s)
        assert ready and proc.stdout.readline().strip() == "holding", "holder did not start"
        yield proc
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)
        proc.stdout.close()
