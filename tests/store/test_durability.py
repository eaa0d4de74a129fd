"""A writer killed with SIGKILL mid-stream keeps what it was handed more than ~1.5 s before.

The writer runs in a subprocess and hands synthetic seconds to the real StoreWriter
(default cadence: a commit about every second). After each second it appends the
second and the time it finished handing it over to a side file, so the test knows
exactly what the writer had been given, and when, at the moment of the kill.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from loadtower.store import StoreReader
from loadtower.store.admin import mark_interrupted_runs
from tests.store.synth import T0, make_lines

LOST_AT_MOST_S = 1.5  # the promise: committed about every second (plus the commit itself)
OPS = ("read", "update")
AGENTS = 2
STREAM_S = 4.0  # kill once this much handing over is logged: several commits happened

WRITER = """
import sys, time
sys.path.insert(0, {root!r})
from loadtower.store import StoreWriter
from tests.store.synth import make_lines

# made up front, so that handing over costs the writer's process next to nothing
seconds = [make_lines(seconds=1, agents={agents}, ops={ops!r}, start=ts, seed=ts,
                      per_second=20)[0] for ts in range({t0}, {t0} + {count})]
w = StoreWriter({path!r})  # the default flush cadence: the promise under test
run_id = w.start_run("kill", "scn", "", "", {{}}, {{}}, {{}})
log = open({log!r}, "a", buffering=1)
log.write(run_id + "\\n")
for ts, lines in enumerate(seconds, {t0}):
    for line in lines:
        w.add_interval(run_id, line)
    w.add_node_sample(run_id, float(ts), "db0", 40.0, 1, 2, 0.0, 0.0, 0.0, 0.0)
    if ts == {t0}:
        w.flush()  # warm-up: the compiled histogram loops load on the first flush
    log.write(f"{{ts}} {{time.monotonic()}}\\n")
    time.sleep(0.05)
print("handed everything over before the kill", file=sys.stderr)
"""
COUNT = 400  # seconds made: 20 s of handing over, far more than STREAM_S


def _handed(log: Path) -> tuple[str, list[tuple[int, float]]]:
    lines = log.read_text().splitlines() if log.exists() else []
    if not lines:
        return "", []
    rows = [ln.split() for ln in lines[1:]]
    return lines[0], [(int(ts), float(at)) for ts, at in rows if at]


def test_sigkilled_writer_keeps_what_it_was_handed(tmp_path: Path) -> None:
    path, log = tmp_path / "kill.duckdb", tmp_path / "handed.log"
    code = WRITER.format(root=str(Path(__file__).resolve().parents[2]), path=str(path),
                         log=str(log), t0=T0, agents=AGENTS, ops=OPS, count=COUNT)  # fmt: skip
    proc = subprocess.Popen([sys.executable, "-c", code])
    try:
        deadline = time.monotonic() + 120
        while True:
            _, handed = _handed(log)
            if len(handed) > 1 and handed[-1][1] - handed[0][1] >= STREAM_S:
                break
            assert proc.poll() is None, "the writer subprocess ended by itself"
            assert time.monotonic() < deadline, "the writer did not stream within 120 s"
            time.sleep(0.05)
        killed_at = time.monotonic()
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL

    run_id, handed = _handed(log)
    due = {ts for ts, at in handed if at < killed_at - LOST_AT_MOST_S}
    assert len(due) >= 20, handed  # the test can fail: there is something that must be kept

    reader = StoreReader(path)
    _, rows = reader.sql(f"SELECT ts, agent, op, ops FROM op_intervals WHERE run_id = '{run_id}'")
    per_second = Counter(ts for ts, _, _, _ in rows)
    stored = set(per_second)
    missing = sorted(due - stored)
    ages = {ts: round(killed_at - at, 2) for ts, at in handed if ts in missing}
    assert not missing, f"handed over this many s before the kill, not stored: {ages}"
    assert stored <= {ts for ts, _ in handed}  # nothing stored that was not handed over
    assert all(per_second[ts] == AGENTS * len(OPS) for ts in due)  # whole seconds

    # the merged rollup of every due second holds exactly what the agents sent
    merged = {(r["ts"], r["op"]): r["ops"] for r in reader.op_seconds(run_id)}
    for ts in sorted(due):
        lines, _ = make_lines(seconds=1, agents=AGENTS, ops=OPS, start=ts, seed=ts, per_second=20)
        for op in OPS:
            assert merged[(ts, op)] == sum(ln["ops"][op]["ops"] for ln in lines), (ts, op)
    nodes = {int(r["ts"]) for r in reader.node_seconds(run_id)}
    assert due <= nodes

    # the next loadtower start on this machine sees the writer is gone
    assert reader.run(run_id)["status"] == "running"
    assert mark_interrupted_runs(path) == [run_id]
    assert reader.run(run_id)["status"] == "interrupted"
