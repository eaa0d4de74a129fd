"""A real long run on a sandbox with the orchestrator's memory sampled (issue 28).

Runs the built-in quickstart (a load, then YCSB-A at a fixed rate) with its run phase
stretched to `--minutes`, through the real CLI (`loadtower run --headless`, SSH, the Locust
master and workers, the load core, the store writer), and every `--every` seconds reads the
resident memory (VmRSS) of the orchestrator (the `loadtower run` process) and of the Locust
master it started (`loadtower agent master`, its child). Prints one line per sample, then
each process's first, lowest, highest and last figure, its spread after the first
`--settle` minutes (the goal: flat, within 50 MB) and its least-squares slope in MB per
hour over the same samples.

usage: python bench/soak.py --inventory SANDBOX/inventory.toml [--minutes 60] [--rate 500]
       [--every 60] [--settle 5] [--store FILE]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def rss_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def master_of(pid: int) -> int | None:
    """The Locust master among `pid`'s descendants (`loadtower agent master`)."""
    todo = [pid]
    while todo:
        parent = todo.pop()
        try:
            children = Path(f"/proc/{parent}/task/{parent}/children").read_text().split()
        except OSError:
            continue
        for child in map(int, children):
            try:
                argv = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"agent" in argv and b"master" in argv:
                return child
            todo.append(child)
    return None


def slope_mb_per_h(points: list[tuple[float, float]]) -> float:
    if len(points) < 2:
        return 0.0
    n = len(points)
    mt = sum(t for t, _ in points) / n
    mv = sum(v for _, v in points) / n
    den = sum((t - mt) ** 2 for t, _ in points)
    return sum((t - mt) * (v - mv) for t, v in points) / den * 3600 if den else 0.0


def summary(name: str, points: list[tuple[float, float]], settle_s: float) -> str:
    if not points:
        return f"{name}: no samples"
    values = [v for _, v in points]
    kept = [(t, v) for t, v in points if t >= settle_s] or points
    spread = max(v for _, v in kept) - min(v for _, v in kept)
    return (f"{name}: first {values[0]:.0f} MB, lowest {min(values):.0f}, highest "
            f"{max(values):.0f}, last {values[-1]:.0f}; after {settle_s / 60:g} min: spread "
            f"{spread:.0f} MB, slope {slope_mb_per_h(kept):+.1f} MB/h ({len(kept)} samples)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inventory", type=Path, required=True)
    parser.add_argument("--minutes", type=float, default=60.0)
    parser.add_argument("--rate", type=int, default=500)
    parser.add_argument("--every", type=float, default=60.0)
    parser.add_argument("--settle", type=float, default=5.0, help="minutes left out of the spread")
    parser.add_argument("--store", type=Path, default=None)
    args = parser.parse_args()
    store = args.store or Path(tempfile.mkdtemp(prefix="soak-")) / "soak.duckdb"
    argv = [sys.executable, "-m", "loadtower", "run", "quickstart", "--inventory",
            str(args.inventory), "--headless", "--store", str(store),
            "--set", f"phases[1].duration={int(args.minutes * 60)}s",
            "--set", f"phases[1].rate={args.rate}"]  # fmt: skip
    store.parent.mkdir(parents=True, exist_ok=True)
    log = store.with_suffix(".log")
    print(f"soak: {' '.join(argv[1:])}\n  store {store}, run's output in {log}", flush=True)
    began = time.monotonic()
    series: dict[str, list[tuple[float, float]]] = {"orchestrator": [], "master": []}
    with log.open("w") as out:
        run = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT)
        try:
            due = began + args.every  # the first sample once the run has started
            while run.poll() is None:
                now = time.monotonic()
                if now >= due:
                    due += args.every
                    t = now - began
                    master = master_of(run.pid)
                    figures = {"orchestrator": rss_mb(run.pid),
                               "master": rss_mb(master) if master else None}
                    for name, value in figures.items():
                        if value is not None:
                            series[name].append((t, value))
                    shown = ", ".join(f"{k} {v:.0f} MB" for k, v in figures.items() if v)
                    print(f"  {t / 60:6.1f} min: {shown}", flush=True)
                time.sleep(min(1.0, max(0.0, due - time.monotonic())))
        finally:
            if run.poll() is None:
                run.terminate()
                run.wait(timeout=60)
    print(f"run exited {run.returncode} after {(time.monotonic() - began) / 60:.1f} min")
    for name, points in series.items():
        print(summary(name, points, args.settle * 60))
    sys.exit(0 if run.returncode == 0 else 1)


if __name__ == "__main__":
    main()
