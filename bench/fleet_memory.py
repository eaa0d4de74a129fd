"""Memory of the orchestrator side over a long run at a large fleet, in simulated time
(issue 28: RSS flat over any run length and worker count).

bench/fleet.py measures in real time, so on a busy machine a backlog (lines waiting in
the Locust master, the pipe, the reader) moves the RSS as much as the product's own
structures do. Here no clock runs: for each simulated second, --workers synthetic
interval lines (bench/fleet_workers.py's real HDR payloads, each worker's own seq) go
through the orchestrator's real consumers exactly as a run hands them over (LocustLoad's
dispatch of the master's JSON text: Sinks, LiveStats, the StoreWriter into a real DuckDB
file), and the writer flushes once per simulated second, as its thread does. Every
--every simulated seconds it prints the process's RSS and the sizes of the structures
that are kept per second (LiveStats' hot and frozen cells, the rollups' accumulators, the
seen-seq sets), and at the end the least-squares slope of the RSS per simulated minute
over the second half. --trace also compares tracemalloc snapshots (first report against
last) and prints where Python's memory grew.

usage: python bench/fleet_memory.py [--workers 1024] [--seconds 600] [--every 60]
                                    [--op-types 8] [--ops 500] [--trace]
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

from loadtower.orchestrator.load_controller import LocustLoad
from loadtower.orchestrator.sinks import Sinks
from loadtower.scenarios.plan import load_plan
from loadtower.store import StoreWriter

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import fleet_workers  # noqa: E402 - bench/fleet_workers.py: the synthetic lines' payloads

import fleet  # noqa: E402 - bench/fleet.py, a sibling script: its inventory, scenario, rss_mb

PHASE = "steady"


def slope_per_min(points: list[tuple[float, float]]) -> float:
    """Least-squares slope of (second, MB) points, in MB per simulated minute."""
    n = len(points)
    if n < 2:
        return 0.0
    mx = sum(t for t, _ in points) / n
    my = sum(v for _, v in points) / n
    var = sum((t - mx) ** 2 for t, _ in points)
    return 60.0 * sum((t - mx) * (v - my) for t, v in points) / var if var else 0.0


def sizes(sinks: Any, writer: Any) -> dict[str, int]:
    """The structures kept per second or per line (their entries)."""
    stats = sinks.stats
    rollups = writer._rollups
    return {
        "live_hot": sum(len(v) for v in stats._cells_at.values()),
        "live_frozen": sum(len(v) for v in stats._frozen_at.values()),
        "rollup_s": len(rollups.seconds.accs), "rollup_min": len(rollups.minutes.accs),
        "rollup_phase": len(rollups.phases.accs),
        "seen_above": sum(len(v) for v in sinks.seen.above.values()),
    }


def consumers(tmp: Path, name: str) -> tuple[StoreWriter, str, Sinks, LocustLoad]:
    """The orchestrator's consumers of the master's lines as a run has them, in `tmp`:
    the store writer (flushed by hand: its thread's tick is an hour away), the run it
    writes, Sinks (with LiveStats) and LocustLoad's dispatch, the phase PHASE started."""
    (tmp / "inventory.toml").write_text(fleet.INVENTORY)
    (tmp / "scenario.toml").write_text(fleet.SCENARIO)
    plan = load_plan(tmp / "scenario.toml", tmp / "inventory.toml")
    writer = StoreWriter(tmp / "fleet.duckdb", flush_every_s=3600.0)
    run_id = writer.start_run(name, "fleet", None, None, {}, {}, {})
    sinks = Sinks(writer, run_id, plan)
    sinks.phase = PHASE
    load = LocustLoad(None, plan, run_id, sinks)
    writer.phase_started(run_id, 0, PHASE, "run", time.time(), {})
    return writer, run_id, sinks, load


def line_text(worker: int, ts: int, ops: str, seq: int) -> str:
    """Synthetic worker `worker`'s interval line of second `ts` (its `ops`: a template's
    JSON) as the master prints it."""
    return (f'{{"type":"interval","agent":"bench/{worker}","host":"h{worker % 64}",'
            f'"ts":{ts},"phase":"{PHASE}","cpu_pct":3.0,"cpu_s":0.03,'
            f'"span":[{ts + 0.001},{ts + 0.999}],"ops":{ops},"seq":{seq}}}')


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=1024)
    parser.add_argument("--seconds", type=int, default=600, help="simulated seconds")
    parser.add_argument("--every", type=int, default=60, help="report every N seconds")
    parser.add_argument("--op-types", type=int, default=8)
    parser.add_argument("--ops", type=int, default=500)
    parser.add_argument("--trace", action="store_true", help="tracemalloc: where it grew")
    args = parser.parse_args()

    templates = [json.dumps(t, separators=(",", ":"))
                 for t in fleet_workers.op_templates(args.op_types, args.ops)]
    with tempfile.TemporaryDirectory(prefix="fleet-memory-") as tmp_name:
        # flushed by hand once per simulated second
        writer, run_id, sinks, load = consumers(Path(tmp_name), "fleet-memory")
        start_ts = int(time.time()) - args.seconds - 60
        points: list[tuple[float, float]] = []
        if args.trace:
            tracemalloc.start(8)
        first_snap = None
        wall0 = time.monotonic()
        print(f"fleet_memory: {args.workers} workers, {args.seconds} simulated s, "
              f"{args.op_types} op types x {args.ops} ops a line")
        print("| second | RSS MB | " + " | ".join(sizes(sinks, writer)) + " | wall s |")
        for second in range(args.seconds):
            ts = start_ts + second
            for w in range(args.workers):
                text = line_text(w, ts, templates[(second + w) % len(templates)], second + 1)
                # as LocustLoad's reader hands it: ASCII text without a \u escape
                load._dispatch(json.loads(text), text.isascii() and "\\u" not in text)
            writer.flush()
            if (second + 1) % args.every == 0 or second + 1 == args.seconds:
                gc.collect()
                mb = fleet.rss_mb()
                points.append((second + 1, mb))
                row = sizes(sinks, writer)
                print(f"| {second + 1} | {mb:.0f} | " + " | ".join(str(v) for v in row.values())
                      + f" | {time.monotonic() - wall0:.0f} |", flush=True)
                if args.trace:
                    snap = tracemalloc.take_snapshot()
                    if first_snap is None:
                        first_snap = snap
        half = [p for p in points if p[0] > args.seconds / 2]
        print(f"RSS: {points[0][1]:.0f} -> {points[-1][1]:.0f} MB; slope over the second half "
              f"{slope_per_min(half):+.2f} MB per simulated minute")
        if args.trace and first_snap is not None:
            last = tracemalloc.take_snapshot()
            print("tracemalloc, first report -> last, top growth by line:")
            for stat in last.compare_to(first_snap, "lineno")[:15]:
                print(f"  {stat.size_diff / 2**20:+8.2f} MB {stat.count_diff:+8d}  "
                      f"{stat.traceback}")
        writer.end_run(run_id, "completed", None)
        writer.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
