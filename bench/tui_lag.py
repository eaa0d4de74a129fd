"""Benchmark of the live dashboard: event-loop lag and CPU of the TUI under a big live run.

A writer process plays a run of 256 agents x 8 ops plus 64 nodes at 1 Hz into a real
DuckDB store through StoreWriter (interval lines with real HDR histograms, agent and
node samples, events, host output), as `loadtower run` does. The app, in this
process, shows that run's live dashboard headless (all layout, rendering and store
queries happen; only the bytes to a terminal are not written). A heartbeat task in
the app's event loop sleeps 20 ms at a time and records how late it wakes up.

Prints the lag p50/p95/max, the app's CPU share (this process's CPU time / wall time;
the writer's CPU is counted apart), and how many snapshots the dashboard drew.
Goal: p95 lag < 50 ms, app CPU < 30% of one core.

Usage: python bench/tui_lag.py [--seconds 60] [--size 160x50] [--dir DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import random
import resource
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from hdrh.histogram import HdrHistogram

from loadtower.protocol.hdr_encoding import encode

AGENTS, OPS, NODES = 256, [f"op{i}" for i in range(8)], 64
AGENTS_PER_HOST = 4
RUN_ID = "20260101-000000-lag0"
HEARTBEAT_S = 0.02
WARMUP_S = 3.0


def hist_pool(n: int = 32, per_second: int = 200) -> list[str]:
    rng, pool = random.Random(7), []
    for i in range(n):
        h = HdrHistogram(1, 60_000_000, 3)
        for _ in range(per_second):
            h.record_value(min(int(rng.lognormvariate(6.9 + 0.05 * (i % 8), 0.5)), 60_000_000))
        pool.append(encode(h))  # as the agents send it
    return pool


def write_stream(store: str, seconds: float, ready: Any, done: Any) -> None:
    """The writer process: one second of the simulated run per wall-clock second."""
    from loadtower.store import StoreWriter

    pool, rng = hist_pool(), random.Random(1)
    writer = StoreWriter(Path(store))
    start = time.time()
    writer.start_run("lag", "lag", None, None, {}, {}, {}, run_id=RUN_ID, started=start)
    writer.phase_started(RUN_ID, 0, "run", "run", start, {"type": "run"})
    writer.event(RUN_ID, start, "phase_start", "phase run (run) started", phase="run")
    writer.flush()
    ready.set()
    ts = int(start)
    deadline = start + seconds
    while time.time() < deadline and not done.is_set():
        for a in range(AGENTS):
            host = f"loader{a // AGENTS_PER_HOST}"
            ops = {}
            for k, op in enumerate(OPS):
                errors = {"WriteTimeout": 1} if (ts + a + k) % 997 == 0 else {}
                ops[op] = {"ops": 400 + (ts + a + k) % 40, "errors": errors, "late": 0,
                           "service_hist": pool[(ts * 5 + a + k) % len(pool)],
                           "response_hist": pool[(ts * 7 + a * 3 + k) % len(pool)]}
            line = {"type": "interval", "agent": f"{host}/{a % AGENTS_PER_HOST}", "host": host,
                    "ts": ts, "phase": "run", "cpu_pct": 30.0 + (a + ts) % 20, "ops": ops}
            writer.add_interval(RUN_ID, line)
            writer.add_agent_sample(RUN_ID, ts, line["agent"], host, line["cpu_pct"],
                                    float(sum(o["ops"] for o in ops.values())), "running")
        for n in range(NODES):
            writer.add_node_sample(RUN_ID, ts, f"db{n}", 40.0 + rng.random() * 20,
                                   8_000_000_000 + n * 10_000_000, 24_000_000_000,
                                   1e6, 5e7, 2e5, 1.8e5)
        writer.log(RUN_ID, ts, f"db{ts % NODES}", "stdout", f"compaction of table t{ts} done")
        if ts % 10 == 0:
            writer.event(RUN_ID, ts, "warning", f"simulated event at {ts}", host="db0")
        ts += 1
        time.sleep(max(0.0, ts - time.time()))
    writer.end_run(RUN_ID, "completed", None)
    writer.close()


def idle_heartbeat(seconds: float, out: Any) -> None:
    """The same heartbeat in a process doing nothing else: the machine's own noise."""

    async def beat() -> list[float]:
        loop = asyncio.get_running_loop()
        lags, end = [], loop.time() + seconds
        while loop.time() < end:
            before = loop.time()
            await asyncio.sleep(HEARTBEAT_S)
            lags.append(loop.time() - before - HEARTBEAT_S)
        return lags

    out.put(percentiles(asyncio.run(beat())))


def percentiles(lags: list[float]) -> dict[str, float]:
    lags = sorted(lags)
    return {"p50": 1000 * statistics.median(lags), "p95": 1000 * lags[int(0.95 * (len(lags) - 1))],
            "max": 1000 * lags[-1], "beats": len(lags)}


def cpu_seconds(who: int = resource.RUSAGE_SELF) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


async def measure(store: Path, seconds: float, size: tuple[int, int],
                  on_start: Any = None) -> dict[str, Any]:
    from loadtower.tui.app import LoadtowerApp
    from loadtower.tui.screens.dashboard import RunDashboard, SnapshotReady

    seen: list[Any] = [0, None]  # count, last snapshot (a message bubbles: count it once)

    def hook(message: object) -> None:
        if isinstance(message, SnapshotReady) and message.snap is not seen[1]:
            seen[:] = [seen[0] + 1, message.snap]

    app = LoadtowerApp(store, open_run=RUN_ID, live=True)
    lags: list[float] = []
    async with app.run_test(size=size, message_hook=hook) as pilot:
        loop = asyncio.get_running_loop()
        warm_until = loop.time() + WARMUP_S
        while loop.time() < warm_until or not isinstance(app.screen, RunDashboard):
            await pilot.pause(0.1)
        seen[0] = 0
        if on_start is not None:
            on_start()
        wall0, cpu0 = time.monotonic(), cpu_seconds()
        end = loop.time() + seconds
        while loop.time() < end:
            before = loop.time()
            await asyncio.sleep(HEARTBEAT_S)
            lags.append(loop.time() - before - HEARTBEAT_S)
        wall, cpu = time.monotonic() - wall0, cpu_seconds() - cpu0
        drawn = seen[0]
        screen = app.screen
        assert isinstance(screen, RunDashboard) and screen.snap is not None
        snap = screen.snap
        chart = screen.query_one("#cpu")
        band = getattr(chart, "band", None)
        shown = {"agents": len(snap.agents), "ops": len(snap.ops), "nodes": len(snap.nodes),
                 "ops_per_s": snap.last_second()[0],
                 "cpu_chart": f"{len(chart.series)} lines"
                              + (f" over a band of {band.name}" if band is not None else "")}
    lag = percentiles(lags)
    return {
        "lag_p50_ms": lag["p50"],
        "lag_p95_ms": lag["p95"],
        "lag_max_ms": lag["max"],
        "beats": lag["beats"],
        "cpu_share": cpu / wall,
        "snapshots": drawn,
        "wall_s": wall,
        "shown": shown,
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--seconds", type=float, default=60.0, help="measured time (default 60)")
    p.add_argument("--size", default="160x50", help="terminal columns x rows (default 160x50)")
    p.add_argument("--dir", default=None, help="where the store goes (default: a temp dir)")
    args = p.parse_args()
    cols, rows = (int(v) for v in args.size.lower().split("x"))
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        store = Path(tmp) / "lag.duckdb"
        ctx = mp.get_context("spawn")
        ready, done = ctx.Event(), ctx.Event()
        total = args.seconds + WARMUP_S + 10
        writer = ctx.Process(target=write_stream, args=(str(store), total, ready, done))
        writer.start()
        try:
            if not ready.wait(60):
                raise SystemExit("the writer process did not start within 60 s")
            noise_out = ctx.Queue()
            noise = ctx.Process(target=idle_heartbeat, args=(args.seconds, noise_out))
            result = asyncio.run(measure(store, args.seconds, (cols, rows), noise.start))
            floor = noise_out.get(timeout=60)
            noise.join(30)
        finally:
            done.set()
            writer.join(60)
            if writer.is_alive():
                writer.terminate()
                writer.join(10)
        writer_cpu = cpu_seconds(resource.RUSAGE_CHILDREN)
    shown = result["shown"]
    print(f"live dashboard {cols}x{rows}, {AGENTS} agents x {len(OPS)} ops + {NODES} nodes "
          f"at 1 Hz, measured {result['wall_s']:.0f} s")
    print(f"event-loop lag (heartbeat {HEARTBEAT_S * 1000:.0f} ms, {result['beats']} beats): "
          f"p50 {result['lag_p50_ms']:.1f} ms  p95 {result['lag_p95_ms']:.1f} ms  "
          f"max {result['lag_max_ms']:.1f} ms   (goal p95 < 50 ms)")
    print(f"the same heartbeat in an idle process meanwhile (the machine's noise): "
          f"p50 {floor['p50']:.1f} ms  p95 {floor['p95']:.1f} ms  max {floor['max']:.1f} ms")
    print(f"app CPU: {100 * result['cpu_share']:.1f}% of one core   (goal < 30%)")
    per_draw = result["cpu_share"] * result["wall_s"] / max(1, result["snapshots"])
    print(f"snapshots drawn: {result['snapshots']} "
          f"({result['snapshots'] / result['wall_s']:.2f}/s: the live screen reads the store "
          f"each time the writer commits; {1000 * per_draw:.0f} ms of app CPU each, idle "
          f"time included); the last one showed "
          f"{shown['agents']} agents, {shown['ops']} ops, {shown['nodes']} nodes, "
          f"{shown['ops_per_s']:,.0f} ops/s; the node CPU chart drew {shown['cpu_chart']}")
    print(f"writer process CPU (not counted above): {writer_cpu:.1f} s "
          f"({100 * writer_cpu / (result['wall_s'] + WARMUP_S):.0f}% of one core)")


if __name__ == "__main__":
    main()
