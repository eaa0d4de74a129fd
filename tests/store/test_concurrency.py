"""A reader in this process sees a run grow while a writer subprocess is writing it."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from loadtower.store import StoreReader

WRITER = """
import sys, time
sys.path.insert(0, {root!r})
from loadtower.store import StoreWriter
from tests.store.synth import make_lines
lines, _ = make_lines(seconds=40, agents=2, ops=("read", "update"), per_second=20)
w = StoreWriter({path!r}, flush_every_s=0.2)
run_id = w.start_run("live", "scn", "", "", {{}}, {{}}, {{}})
print(run_id, flush=True)
for i in range(0, len(lines), 2):
    for line in lines[i:i + 2]:
        w.add_interval(run_id, line)
    time.sleep(0.1)
w.end_run(run_id, "completed", None)
w.close()
"""


def test_reader_sees_a_growing_run(tmp_path: Path) -> None:
    path = tmp_path / "live.duckdb"
    root = str(Path(__file__).resolve().parents[2])
    code = WRITER.format(root=root, path=str(path))
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        run_id = proc.stdout.readline().strip()  # type: ignore[union-attr]
        assert run_id, "the writer did not start"
        reader = StoreReader(path)
        counts: list[int] = []
        statuses: set[str] = set()
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:
            counts.append(len(reader.op_seconds(run_id)))
            statuses.add(reader.run(run_id)["status"])
            time.sleep(0.3)
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    assert "running" in statuses
    seen = [c for c in counts if c > 0]
    assert len(set(seen)) >= 3, counts  # the run grew while we read it
    assert seen == sorted(seen)
    assert len(reader.op_seconds(run_id)) == 80
    assert reader.run(run_id)["status"] == "completed"
