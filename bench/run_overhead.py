"""What a run costs besides its load: a tiny quickstart (1,000 records, a 2 s YCSB-A
phase) run N times through the real CLI against an inventory (the sandbox's), each into
a fresh store; prints each run's wall time and the machine's CPU-seconds over it (all
processes: the orchestrator, the agents' SSH commands and Locust processes, the
database), then the median of each.

Most integration tests run a few such runs, each paying this fixed cost on top of its
phases (docs/testing.md: A run's fixed cost). To compare two trees, run it from each
against a fresh sandbox that each tree's own `sandbox up` made.

Usage: python bench/run_overhead.py --inventory SANDBOX/inventory.toml [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ARGS = ["--set", "dataset.records=1000", "--set", "phases[1].duration=2s"]


def busy_ticks() -> int:
    """The machine's busy CPU time so far, in clock ticks (/proc/stat's first line, less
    idle and iowait)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:9]]
    return sum(fields) - fields[3] - fields[4]


def one_run(inventory: Path, folder: Path, index: int) -> tuple[float, float]:
    store = folder / f"run-{index}.duckdb"
    argv = [sys.executable, "-m", "loadtower", "run", "quickstart", "-i", str(inventory),
            "--headless", "--store", str(store), *ARGS]
    ticks, start = busy_ticks(), time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    wall = time.monotonic() - start
    cpu = (busy_ticks() - ticks) / 100  # USER_HZ
    if done.returncode != 0:
        raise SystemExit(f"run {index} exited {done.returncode}: {done.stderr[-2000:]}")
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inventory", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    walls, cpus = [], []
    with tempfile.TemporaryDirectory(prefix="lt-overhead-") as tmp:
        for index in range(args.runs):
            wall, cpu = one_run(args.inventory, Path(tmp), index)
            walls.append(wall)
            cpus.append(cpu)
            print(f"run {index + 1}: {wall:.2f} s wall, {cpu:.2f} CPU-s (machine)")
    print(f"median of {args.runs}: {statistics.median(walls):.2f} s wall, "
          f"{statistics.median(cpus):.2f} CPU-s")


if __name__ == "__main__":
    main()
