"""Every built-in scenario at its default size on a sandbox: wall time, exit status, headline.

Runs `loadtower run NAME --inventory DIR/inventory.toml --headless` for each built-in
(scenarios/builtin/*.toml) one after the other, into one fresh store, and prints per
scenario its wall time, exit status and the headline of its result (each run/ramp/
scale-out/compaction phase's main figure, from the stored phase results). The figures
are what one run measured on this machine, not assertions; the last line says how many
finished within the 3 minutes a built-in's default size is meant for.

`scale-out-compaction` starts the sandbox's standby node; afterwards this script gives
the sandbox back as it found it (`loadtower sandbox node decommission`: the node's data
streams back, it stops and becomes a fresh standby again).

Usage: python bench/builtins.py --sandbox .sandbox [--only ttl-tombstones] [--store PATH]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from loadtower.scenarios.catalog import builtin_names
from loadtower.store import StoreReader

BUDGET_S = 180.0


def _result(phase: dict[str, Any]) -> dict[str, Any]:
    result = phase.get("result") or {}
    return json.loads(result) if isinstance(result, str) else result


def phase_headline(name: str, kind: str, result: dict[str, Any]) -> str | None:
    """One phase's main figure, or None for phases without one (load, pause)."""
    if kind == "run" and "ops_per_s" in result:
        return f"{name} {result['ops_per_s']:,.1f} ops/s p99 {result['p99_ms']:.1f} ms"
    if kind == "ramp":
        best = result.get("highest_passing_ops_per_s")
        if best is None:
            return f"{name}: no step met p99 <= {result.get('target_p99_ms', 0):g} ms"
        return f"{name}: {best:,.1f} ops/s at p99 <= {result['target_p99_ms']:g} ms"
    if kind == "search":
        found = result.get("found")
        if found is None:
            return f"{name}: no rate met {result.get('target')}"
        return f"{name}: {found:,.1f} ops/s at {result.get('target')}, bracket {result['bracket']}"
    if kind == "scale_out":
        if not result.get("joined"):
            return f"{name}: {result.get('host')} did not join"
        return f"{name}: {result['host']} UN in {result['join_duration_s']} s"
    if kind == "compaction" and isinstance(result.get("hosts"), dict):
        took = ", ".join(
            f"{host} {entry.get('compaction_s')} s" for host, entry in result["hosts"].items()
        )
        return f"{name}: {took}"
    return None


def headline(store: Path, run_id: str) -> str:
    reader = StoreReader(store)
    parts = []
    for phase in reader.phases(run_id):
        line = phase_headline(phase["name"], phase["type"], _result(phase))
        if line:
            parts.append(line)
    return "; ".join(parts) or "(no phase figures)"


def last_run_id(store: Path, before: set[str]) -> str | None:
    if not store.exists():
        return None
    new = [r["id"] for r in StoreReader(store).runs() if r["id"] not in before]
    return new[-1] if new else None


def standby_fresh(sandbox: Path) -> list[int]:
    """The sandbox's standby nodes that never ran (given back after a scale-out)."""
    from loadtower.sandbox import Sandbox

    nodes = Sandbox(sandbox).info().get("cassandra", {}).get("nodes", [])
    return [
        n["index"]
        for n in nodes
        if n["state"] == "standby" and not (sandbox / "cassandra" / f"node{n['index']}").exists()
    ]


def give_back(sandbox: Path, fresh: list[int]) -> None:
    for index in fresh:
        done = subprocess.run(
            [sys.executable, "-m", "loadtower", "sandbox", "node", "decommission"]
            + ["--dir", str(sandbox), str(index)],
            capture_output=True,
            text=True,
            timeout=900,
        )
        print(f"  gave back node {index}: {(done.stdout or done.stderr).strip()[-300:]}")


def run_one(name: str, sandbox: Path, store: Path, timeout: float) -> dict[str, Any]:
    before = {r["id"] for r in StoreReader(store).runs()} if store.exists() else set()
    fresh = standby_fresh(sandbox) if name == "scale-out-compaction" else []
    argv = [sys.executable, "-m", "loadtower", "run", name]
    argv += ["--inventory", str(sandbox / "inventory.toml"), "--headless", "--store", str(store)]
    start = time.monotonic()
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        status, err = done.returncode, done.stderr
    except subprocess.TimeoutExpired:
        status, err = -1, f"killed after {timeout:g} s"
    wall = time.monotonic() - start
    if fresh:
        give_back(sandbox, fresh)
    run_id = last_run_id(store, before)
    line = headline(store, run_id) if run_id else "(no run stored)"
    if status != 0:
        line = f"{err.strip().splitlines()[-1] if err.strip() else 'failed'} | {line}"
    return {"name": name, "wall_s": wall, "status": status, "run_id": run_id, "headline": line}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sandbox", type=Path, required=True, help="sandbox directory (up)")
    parser.add_argument("--only", action="append", default=[], help="this built-in only")
    parser.add_argument("--store", type=Path, default=None, help="store (default: a temp one)")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per scenario")
    args = parser.parse_args(argv)
    names = builtin_names()
    unknown = [n for n in args.only if n not in names]
    if unknown:
        parser.error(f"not a built-in: {', '.join(unknown)} (built-ins: {', '.join(names)})")
    sandbox = args.sandbox.resolve()
    if not (sandbox / "inventory.toml").exists():
        parser.error(f"{sandbox}/inventory.toml missing: `loadtower sandbox up --dir {sandbox}`")
    with tempfile.TemporaryDirectory(prefix="lt-builtins-") as tmp:
        store = args.store or Path(tmp) / "builtins.duckdb"
        rows = []
        for name in args.only or names:
            print(f"{name} ...", flush=True)
            row = run_one(name, sandbox, store, args.timeout)
            rows.append(row)
            print(
                f"  {row['wall_s']:6.1f} s  exit {row['status']}  run {row['run_id']}\n"
                f"  {row['headline']}",
                flush=True,
            )
    print()
    print(f"{'scenario':22} {'wall s':>7} {'exit':>4}  headline")
    for row in rows:
        print(f"{row['name']:22} {row['wall_s']:7.1f} {row['status']:>4}  {row['headline']}")
    within = sum(1 for r in rows if r["status"] == 0 and r["wall_s"] < BUDGET_S)
    print(f"{within} of {len(rows)} completed within {BUDGET_S:g} s")
    return 0 if all(r["status"] == 0 for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
