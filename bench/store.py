"""Benchmark of the store: a simulated long run (default 24 h x 8 ops x 16 agents + 16 nodes).

Prints the writer's ingest rate against a plain DuckDB Arrow append of the same input
rows (the overhead ratio), the file size, and how long a whole-run phase_summary and a
one-minute window percentile take. Usage: python bench/store.py [--hours 2] [--dir DIR]
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

import duckdb
import pyarrow as pa
from hdrh.histogram import HdrHistogram

from loadtower.protocol.hdr_encoding import encode
from loadtower.store import StoreReader, StoreWriter

OPS = [f"op{i}" for i in range(8)]
AGENTS, NODES, CHUNK_S, T0 = 16, 16, 60, 1_763_812_800


def hist_pool(n: int = 64, per_second: int = 500) -> list[str]:
    rng, pool = random.Random(7), []
    for i in range(n):
        h = HdrHistogram(1, 60_000_000, 3)
        for _ in range(per_second):
            h.record_value(min(int(rng.lognormvariate(6.9 + 0.05 * (i % 8), 0.5)), 60_000_000))
        pool.append(encode(h))  # what the agents send
    return pool


def chunk_lines(start: int, seconds: int, pool: list[str], phase: str) -> list[dict]:
    lines = []
    for ts in range(start, start + seconds):
        for a in range(AGENTS):
            ops = {}
            for k, op in enumerate(OPS):
                h = pool[(ts * 7 + a * 3 + k) % len(pool)]
                s = pool[(ts * 5 + a + k) % len(pool)]
                ops[op] = {
                    "ops": 500,
                    "errors": {},
                    "late": 0,
                    "service_hist": s,
                    "response_hist": h,
                }
            lines.append(
                {"agent": f"a{a}/0", "host": f"a{a}", "ts": ts, "phase": phase, "ops": ops}
            )
    return lines


def baseline_tables(lines: list[dict], nodes: list[tuple]) -> list[tuple[str, pa.Table]]:
    cols: dict[str, list] = {c: [] for c in ("ts", "agent", "host", "phase", "op", "ops")}
    cols.update(errors=[], late=[], service_hist=[], response_hist=[])
    for ln in lines:
        for op, s in ln["ops"].items():
            for c, v in (("ts", ln["ts"]), ("agent", ln["agent"]), ("host", ln["host"]),
                         ("phase", ln["phase"]), ("op", op), ("ops", s["ops"]),
                         ("errors", len(s["errors"])), ("late", s["late"]),
                         ("service_hist", s["service_hist"]), ("response_hist", s["response_hist"])):  # fmt: skip
                cols[c].append(v)
    names = ["ts", "host", "cpu", "used", "total", "dr", "dw", "rx", "tx"]
    node_cols = {n: list(c) for n, c in zip(names, zip(*nodes, strict=True), strict=True)}
    return [("intervals", pa.table(cols)), ("nodes", pa.table(node_cols))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hours", type=float, default=24.0)
    parser.add_argument("--dir", type=Path, default=None)
    args = parser.parse_args()
    seconds = int(args.hours * 3600)
    work = args.dir or Path(tempfile.mkdtemp(prefix="store-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    store, plain = work / "bench.duckdb", work / "plain.duckdb"
    for p in (store, plain):
        p.unlink(missing_ok=True)
    pool = hist_pool()
    writer = StoreWriter(store, flush_every_s=1e9)  # flushed explicitly once per chunk below
    run_id = writer.start_run("bench", "bench", "", "", {}, {}, {})
    base = duckdb.connect(str(plain))
    t_writer = t_base = 0.0
    phases = [("warmup", 0.1), ("run", 0.9), ("cooldown", 1.0)]
    rows = 0
    for start in range(0, seconds, CHUNK_S):
        n = min(CHUNK_S, seconds - start)
        phase = next(name for name, end in phases if start < end * seconds)
        lines = chunk_lines(T0 + start, n, pool, phase)
        nodes = [(float(T0 + start + s), f"n{h}", 50.0, 6 << 30, 16 << 30, 1e6, 2e6, 3e6, 4e6)
                 for s in range(n) for h in range(NODES)]  # fmt: skip
        rows += len(lines) * len(OPS) + len(nodes)
        t = time.perf_counter()
        for line in lines:
            writer.add_interval(run_id, line)
        for node in nodes:
            writer.add_node_sample(run_id, *node)
        writer.flush()
        t_writer += time.perf_counter() - t
        t = time.perf_counter()
        for name, table in baseline_tables(lines, nodes):
            base.register("t", table)
            if start == 0:
                base.execute(f"CREATE TABLE {name} AS SELECT * FROM t")
            else:
                base.execute(f"INSERT INTO {name} SELECT * FROM t")
            base.unregister("t")
        t_base += time.perf_counter() - t
        done = start + n
        if done % 3600 == 0 or done == seconds:
            print(f"  {done / 3600:5.2f} h simulated: {rows:,} rows, writer {t_writer:.0f} s, "
                  f"plain {t_base:.0f} s", flush=True)  # fmt: skip
    t = time.perf_counter()
    writer.end_run(run_id, "completed", None)
    writer.close()
    t_writer += time.perf_counter() - t
    t = time.perf_counter()
    base.close()  # its last checkpoint: both sides end with every row in the file
    t_base += time.perf_counter() - t
    reader = StoreReader(store)
    t = time.perf_counter()
    summary = reader.phase_summary(run_id)
    t_summary = time.perf_counter() - t
    mid = T0 + seconds // 2
    t = time.perf_counter()
    reader.window_percentiles(run_id, mid + 30, mid + 90)
    t_window = time.perf_counter() - t
    t = time.perf_counter()
    reader.window_percentiles(run_id, T0, T0 + seconds)
    t_whole = time.perf_counter() - t
    print(f"simulated {args.hours:g} h: {seconds:,} s x {len(OPS)} ops x {AGENTS} agents "
          f"+ {NODES} nodes = {rows:,} rows")  # fmt: skip
    print(f"writer ingest:    {rows / t_writer:12,.0f} rows/s ({t_writer:.1f} s)")
    print(f"plain Arrow append:{rows / t_base:11,.0f} rows/s ({t_base:.1f} s)")
    print(f"overhead ratio:   {t_writer / t_base:12.2f} (goal <= 1.5)")
    print(f"file size:        {store.stat().st_size / 2**20:12,.1f} MiB (plain: "
          f"{plain.stat().st_size / 2**20:,.1f} MiB; goal < 2 GB at 24 h)")  # fmt: skip
    print(f"phase_summary:    {t_summary * 1000:12.1f} ms ({len(summary)} rows; goal < 2 s)")
    print(f"1-min window pct: {t_window * 1000:12.1f} ms (unaligned: 60 s of second rows)")
    print(f"whole-run window: {t_whole * 1000:12.1f} ms (minute rollups)")


if __name__ == "__main__":
    main()
