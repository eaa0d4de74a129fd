"""A deterministic store for TUI tests and snapshots: two finished runs of the same
scenario (B slower than A) and one failed run, written through the real StoreWriter
with real HDR histograms, at fixed times and ids."""

from __future__ import annotations

import random
from pathlib import Path

from hdrh.histogram import HdrHistogram

T0 = 1_790_000_000  # 2026-09-21 14:13:20 UTC
RUN_A, RUN_B, RUN_FAILED = "20260921-141320-aaaa", "20260921-151320-bbbb", "20260921-161320-ffff"
SCENARIO = 'name = "fixture"\n[[phases]]\ntype = "load"\n[[phases]]\ntype = "run"\nduration = "30s"\nrate = 500\n'
INVENTORY = '[cassandra]\npassword = "hunter2-secret"\n[hosts.db1]\naddress = "127.0.0.1"\nroles = ["db"]\n'
PHASES = (("1-load", "load", 0, 6, {"insert": 1500}), ("ycsb-a", "run", 6, 36, {"read": 250, "update": 250}))


def _hist(rng: random.Random, count: int, median_us: float) -> str:
    hist = HdrHistogram(1, 60_000_000, 3)
    for _ in range(count):
        hist.record_value(max(1, int(rng.lognormvariate(0, 0.6) * median_us)))
    return hist.encode().decode()


def _write_run(writer: object, run_id: str, start: float, slow: float, seed: int,
               status: str = "completed", cut_at: int | None = None) -> None:
    rng = random.Random(seed)
    w = writer  # StoreWriter
    w.start_run("fixture", "fixture", SCENARIO, INVENTORY, {"loadtower": "0.1.0"},  # type: ignore[attr-defined]
                {"db1": {"cpus": 2}}, {}, run_id=run_id, started=start)
    w.event(run_id, start, "run", f"run {run_id} started: scenario fixture")  # type: ignore[attr-defined]
    end = start
    for index, (label, kind, t0, t1, rates) in enumerate(PHASES):
        w.phase_started(run_id, index, label, kind, start + t0, {"type": kind})  # type: ignore[attr-defined]
        w.event(run_id, start + t0, "phase_start", f"phase {label} ({kind}) started", phase=label)  # type: ignore[attr-defined]
        for sec in range(t0, t1):
            if cut_at is not None and sec >= cut_at:
                break
            ts = int(start) + sec
            ops = {}
            for op, rate in rates.items():
                n = rate + rng.randint(-10, 10)
                errors = {"WriteTimeout": 2} if (op == "update" and sec == 20) else {}
                median = (900 if op == "read" else 700) * slow * (3 if 18 <= sec <= 21 else 1)
                ops[op] = {"ops": n, "errors": errors, "late": 0,
                           "service_hist": _hist(rng, n, median * 0.8),
                           "response_hist": _hist(rng, n, median)}
            line = {"type": "interval", "agent": "agent1/0", "host": "agent1", "ts": ts,
                    "phase": label, "cpu_pct": 20.0 + sec % 7, "ops": ops}
            w.add_interval(run_id, line)  # type: ignore[attr-defined]
            w.add_agent_sample(run_id, ts, "agent1/0", "agent1", 20.0 + sec % 7,  # type: ignore[attr-defined]
                               float(sum(o["ops"] for o in ops.values())), "running")
            for host, base in (("db1", 35.0), ("db2", 25.0)):
                w.add_node_sample(run_id, ts, host, base + 10 * slow + sec % 5,  # type: ignore[attr-defined]
                                  8_000_000_000 + sec * 10_000_000, 24_000_000_000,
                                  1000.0 * sec, 50_000.0 * sec, 200_000.0, 180_000.0)
            end = ts + 1
        if cut_at is not None and cut_at < t1:
            break
        w.phase_ended(run_id, index, start + t1, {"ops": 1})  # type: ignore[attr-defined]
        w.event(run_id, start + t1, "phase_end", f"phase {label} ended", phase=label)  # type: ignore[attr-defined]
    w.event(run_id, start + 19, "warning", "agent agent1/0 at 93% CPU: its latency figures are suspect",  # type: ignore[attr-defined]
            host="agent1", phase="ycsb-a")
    w.log(run_id, start + 2, "agent1", "stderr", "worker agent1/0 connected to master")  # type: ignore[attr-defined]
    reason = None if status == "completed" else "host db1: SSH connection lost"
    w.end_run(run_id, status, reason, ended=end)  # type: ignore[attr-defined]


def build_fixture_store(path: Path) -> Path:
    from loadtower.store import StoreWriter

    writer = StoreWriter(path)
    try:
        _write_run(writer, RUN_A, T0, 1.0, 1)
        _write_run(writer, RUN_B, T0 + 3600, 1.4, 2)
        _write_run(writer, RUN_FAILED, T0 + 7200, 1.0, 3, status="failed", cut_at=15)
    finally:
        writer.close()
    return path
