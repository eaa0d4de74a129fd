"""heap_trim.py: malloc_trim(0) gives back the free pages that glibc keeps after free(),
the writer's thread trims after its flushes, and where libc has none it does nothing."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from loadtower.store import StoreWriter, heap_trim
from loadtower.store.heap_trim import HeapTrim

WAIT_S = 30.0  # a bound on waiting, not a measured time
GLIBC = HeapTrim().available

# a process that frees 39 of every 40 strings of about 1 KB (an interval line's
# histogram text) of 200 MB: the kept ones pin the heap, so free() alone gives little
# back; prints its RSS (kB) after the free and after the trim
FREED_BUT_KEPT = """
import sys
from loadtower.store.heap_trim import HeapTrim
def rss():
    return next(int(r.split()[1]) for r in open("/proc/self/status") if r.startswith("VmRSS"))
texts = [str(i).rjust(1000, "x") for i in range(200_000)]
kept = texts[::40]
del texts
freed = rss()
assert HeapTrim()()
print(freed, rss())
"""


@pytest.mark.skipif(not GLIBC, reason="libc has no malloc_trim")
def test_the_trim_gives_back_what_free_kept() -> None:
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", FREED_BUT_KEPT], capture_output=True,
                          text=True, timeout=120, cwd=root)  # fmt: skip
    assert done.returncode == 0, done.stderr
    freed, trimmed = (int(v) for v in done.stdout.split())
    # 195 MB were freed: at least half of it is given back by the trim
    assert freed - trimmed > 100 * 1024, (freed, trimmed)


@pytest.mark.skipif(not GLIBC, reason="libc has no malloc_trim")
def test_the_writer_thread_trims_after_its_flushes(tmp_path: Path) -> None:
    with StoreWriter(tmp_path / "s.duckdb", flush_every_s=0.05) as writer:
        run_id = writer.start_run("trim", "scn", "", "", {}, {}, {})
        deadline = time.monotonic() + WAIT_S
        while writer.trim.calls < 3:
            writer.event(run_id, time.time(), "info", "a flush's worth")
            assert time.monotonic() < deadline, "no trim after the thread's flushes"
            time.sleep(0.01)
    assert writer.trim.seconds > 0


def test_where_libc_has_no_malloc_trim_nothing_is_done(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(heap_trim, "_TRIM", None)  # as on musl or macOS
    trim = HeapTrim()
    assert not trim.available
    assert trim() is False
    assert (trim.calls, trim.seconds) == (0, 0.0)
