"""What `sandbox up --lean` saves and costs (issue 29): a 1-node sandbox (no other engine
host) brought up as it is and lean, one after the other, each from nothing in a
temporary directory; for each, the Cassandra JVM's CPU-seconds to come up, then over
--runs tiny quickstart runs (1,000 records, a 2 s YCSB-A phase: what most tests run),
then the top rate of a closed-loop load phase (--records rows at 64 concurrent
requests, the quickstart's load phase: ops/s from the store's phase_summary). The
JVM's CPU is read from /proc/PID/stat (its threads, the JIT's compilers among them).
Prints both rows and the ratios lean / as is.

The machine is shared and noisy: run it on a quiet machine, and read the CPU-seconds
(which a busy machine moves less) before the wall times.

usage: python bench/lean_node.py [--runs 4] [--records 30000]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import fleet  # noqa: E402 - bench/fleet.py, a sibling script: proc_cpu_s (a process's CPU)

LOADTOWER = [sys.executable, "-m", "loadtower"]
TINY = ["--set", "dataset.records=1000", "--set", "phases[1].duration=2s"]


def node_pid(directory: Path) -> int:
    state = json.loads((directory / "state.json").read_text())
    return int(state["nodes"]["1"]["process"]["pid"])


def run(inventory: Path, store: Path, extra: list[str]) -> float:
    argv = [*LOADTOWER, "run", "quickstart", "-i", str(inventory), "--headless",
            "--store", str(store), *extra]
    start = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}: {done.stderr[-1500:]}")
    return time.monotonic() - start


def top_rate(store: Path) -> float:
    query = "SELECT sum(ops_per_s) FROM phase_summary WHERE phase IN (SELECT name FROM phases WHERE type = 'load')"
    done = subprocess.run([*LOADTOWER, "sql", "--store", str(store), "--format", "json", query],
                          capture_output=True, text=True, timeout=120, check=True)
    rows = json.loads(done.stdout)
    return float(next(iter(rows[0].values())))


def measure(lean: bool, runs: int, records: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="lt-lean-") as tmp:
        box = Path(tmp) / "sandbox"
        up = [*LOADTOWER, "sandbox", "up", "--dir", str(box), "--cassandra-nodes", "1",
              "--standby", "0", "--no-clickhouse", "--no-mongodb", "--no-redis", "--json",
              "--lean" if lean else "--no-lean"]
        start = time.monotonic()
        subprocess.run(up, capture_output=True, text=True, timeout=600, check=True)
        try:
            out: dict[str, float] = {"up_wall_s": time.monotonic() - start}
            pid = node_pid(box)
            out["up_cpu_s"] = fleet.proc_cpu_s(pid)
            inventory = box / "inventory.toml"
            walls, cpus = [], []
            for index in range(runs):
                before = fleet.proc_cpu_s(pid)
                walls.append(run(inventory, Path(tmp) / f"tiny-{index}.duckdb", TINY))
                cpus.append(fleet.proc_cpu_s(pid) - before)
            out["run_wall_s"] = statistics.median(walls)
            out["run_cpu_s"] = statistics.median(cpus)
            store = Path(tmp) / "load.duckdb"
            before = fleet.proc_cpu_s(pid)
            run(inventory, store, ["--set", f"dataset.records={records}",
                                   "--set", "phases[1].duration=1s"])
            out["load_cpu_s"] = fleet.proc_cpu_s(pid) - before
            out["load_ops_per_s"] = top_rate(store)
            return out
        finally:
            subprocess.run([*LOADTOWER, "sandbox", "down", "--dir", str(box)],
                           capture_output=True, timeout=300, check=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=4)
    parser.add_argument("--records", type=int, default=30000)
    args = parser.parse_args()
    os.environ.pop("LOADTOWER_SANDBOX_LEAN", None)  # each row says which it is
    rows = {name: measure(name == "lean", args.runs, args.records) for name in ("as is", "lean")}
    keys = ["up_wall_s", "up_cpu_s", "run_wall_s", "run_cpu_s", "load_cpu_s", "load_ops_per_s"]
    print("| sandbox | " + " | ".join(keys) + " |")
    print("|---" * (len(keys) + 1) + "|")
    for name, row in rows.items():
        print(f"| {name} | " + " | ".join(f"{row[k]:.1f}" for k in keys) + " |")
    ratios = [rows["lean"][k] / rows["as is"][k] if rows["as is"][k] else float("nan") for k in keys]
    print("| lean / as is | " + " | ".join(f"{r:.2f}" for r in ratios) + " |")
    print(f"(runs: median of {args.runs} tiny quickstart runs; load: {args.records:,} rows, "
          "64 concurrent; CPU: the Cassandra JVM's)")


if __name__ == "__main__":
    main()
