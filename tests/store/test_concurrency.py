"""A reader in this process sees a run grow while a writer subprocess is writing it.

The two go in lockstep, so that how busy the machine is cannot change what is seen: the
writer adds a batch of lines and waits until the reader has seen the store grow (a file
`seen-N` the reader makes), then adds the next."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from loadtower.store import StoreReader

BATCHES = 4
WRITER = """
import sys, time
from pathlib import Path
sys.path.insert(0, {root!r})
from loadtower.store import StoreWriter
from tests.store.synth import make_lines
lines, _ = make_lines(seconds=40, agents=2, ops=("read", "update"), per_second=20)
w = StoreWriter({path!r}, flush_every_s=0.2)
run_id = w.start_run("live", "scn", "", "", {{}}, {{}}, {{}})
print(run_id, flush=True)
size = len(lines) // {batches}
for batch in range({batches}):
    for line in lines[batch * size:(batch + 1) * size]:
        w.add_interval(run_id, line)
    seen = Path({marks!r}) / f"seen-{{batch}}"
    deadline = time.monotonic() + 60
    while not seen.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
w.end_run(run_id, "completed", None)
w.close()
"""


def test_reader_sees_a_growing_run(tmp_path: Path) -> None:
    path = tmp_path / "live.duckdb"
    marks = tmp_path / "marks"
    marks.mkdir()
    root = str(Path(__file__).resolve().parents[2])
    code = WRITER.format(root=root, path=str(path), marks=str(marks), batches=BATCHES)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        run_id = proc.stdout.readline().strip()  # type: ignore[union-attr]
        assert run_id, "the writer did not start"
        reader = StoreReader(path)
        counts: list[int] = []
        statuses: set[str] = set()
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:
            count = len(reader.op_seconds(run_id))
            statuses.add(reader.run(run_id)["status"])
            if count > (counts[-1] if counts else 0):
                (marks / f"seen-{len(counts)}").touch()  # the writer may add the next
                counts.append(count)
            time.sleep(0.1)
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    assert "running" in statuses
    assert len(counts) >= BATCHES, counts  # the run grew, batch by batch, while we read it
    assert counts == sorted(counts)
    assert len(reader.op_seconds(run_id)) == 80
    assert reader.run(run_id)["status"] == "completed"
