"""Short SSH commands through the run's SSH pool, many at once on one connection: how
long each takes, and whether any hangs or fails. The node sampler reads /proc or a
cgroup on every database host each second, the agent guard reads spools, a run's end
removes files: commands that end in milliseconds once the host's shell reads no rc file
(the sandbox's sshd sets SHLVL=1; docs/testing.md, "Hangs, and what a hang now says").

Runs TASKS loops for SECONDS against the inventory's first database host, half of them
the node sampler's /proc reading, half `true`, each command bounded at 5 s; prints the
count, the p50/p99/max time and every error (a time-out included).

Usage: python bench/ssh_commands.py --inventory SANDBOX/inventory.toml [--seconds 60]
[--tasks 4]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from pathlib import Path

from loadtower.fleet.proc_stats import proc_command
from loadtower.fleet.ssh_pool import HostPool
from loadtower.scenarios.loader import load_inventory

COMMAND_TIMEOUT_S = 5.0


async def measure(inventory: Path, seconds: float, tasks: int) -> tuple[list[float], list[str]]:
    inv, _text = load_inventory(inventory)
    host = next(iter(inv.with_role("db")))
    pool = HostPool(inv)
    times: list[float] = []
    errors: list[str] = []
    end = time.monotonic() + seconds

    async def loop(index: int) -> None:
        command = proc_command(None) if index % 2 == 0 else "true"
        while time.monotonic() < end:
            started = time.monotonic()
            try:
                status, _out, err = await pool.run(host, command, timeout=COMMAND_TIMEOUT_S)
            except Exception as exc:  # noqa: BLE001 - counted and printed
                errors.append(f"{type(exc).__name__}: {exc}")
                continue
            times.append(time.monotonic() - started)
            if status != 0:
                errors.append(f"exit status {status}: {err.strip()[:200]}")

    try:
        await asyncio.gather(*(loop(i) for i in range(tasks)))
    finally:
        await pool.close()
    return times, errors


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--inventory", type=Path, required=True)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--tasks", type=int, default=4)
    args = parser.parse_args()
    times, errors = asyncio.run(measure(args.inventory, args.seconds, args.tasks))
    times.sort()
    if not times:
        print(f"no command ended; {len(errors)} errors")
    else:
        n = len(times)
        print(f"{n} commands on {args.tasks} tasks in {args.seconds:g} s: p50 "
              f"{times[n // 2] * 1000:.1f} ms, p99 {times[min(n - 1, int(n * 0.99))] * 1000:.1f} "
              f"ms, max {times[-1] * 1000:.1f} ms; {len(errors)} errors")
    for line in errors[:20]:
        print(f"  {line}")
    return 1 if errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
