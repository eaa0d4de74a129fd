"""`loadtower cleanup --inventory INV`: stop loadtower processes left behind by a dead run."""

from __future__ import annotations

import argparse
from pathlib import Path

HELP = "Find and stop leftover loadtower processes on every inventory host."
DESCRIPTION = """Connect over SSH to every inventory host (host keys verified as for `run`), list
the loadtower processes there (load workers, Locust master: every process a run
started carries LOADTOWER_RUN and LOADTOWER_ORCHESTRATOR in its environment) and
stop those whose orchestrator is gone: SIGTERM, then SIGKILL after --timeout.
Processes of a run whose orchestrator is still running are left alone; those
whose orchestrator ran on a machine that cannot be checked from here (neither
this machine nor the host itself) are stopped only with --all. This machine is
checked too (the Locust master runs here). Hosts sharing one machine are listed
once. Safe to run when nothing is left. With --datasets it also removes the data
set copies runs put on the agent hosts (<bootstrap_dir>/datasets/, a cache a later
run of the same file would reuse).

examples:
  loadtower cleanup --inventory .sandbox/inventory.toml --dry-run
  loadtower cleanup -i inv.toml
  loadtower cleanup -i inv.toml --run 20261123-090446-8e64 --timeout 5
  loadtower cleanup -i inv.toml --datasets

exit status: 0 every host checked and every leftover stopped; 2 a host could not be
checked, a process survived SIGKILL or data set copies could not be removed (one line
per host says which)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--inventory", "-i", type=Path, required=True, help="inventory TOML file")
    parser.add_argument(
        "--dry-run", action="store_true", help="list what would be stopped, stop nothing"
    )
    parser.add_argument("--run", default=None, help="only processes of this run id")
    parser.add_argument(
        "--all",
        dest="stop_all",
        action="store_true",
        help="also stop processes whose orchestrator is alive or cannot be checked",
    )
    parser.add_argument(
        "--timeout", type=float, default=10.0, help="seconds between SIGTERM and SIGKILL"
    )
    parser.add_argument(
        "--datasets", action="store_true",
        help="also remove the data set copies on the agent hosts (<bootstrap_dir>/datasets)",
    )
    parser.add_argument(
        "--accept-new-host-keys",
        action="store_true",
        help="trust hosts not yet in known_hosts (never a changed key)",
    )


def run(args: argparse.Namespace) -> int:
    import asyncio

    from loadtower.fleet.cleanup_hosts import CleanupOptions, cleanup

    # deferred: these load pydantic (the inventory's models); `loadtower --help` imports this
    # command module
    from loadtower.scenarios.loader import load_inventory

    inventory, _ = load_inventory(args.inventory)
    options = CleanupOptions(
        dry_run=args.dry_run,
        run_id=args.run,
        stop_all=args.stop_all,
        timeout_s=max(args.timeout, 0.2),
        accept_new_host_keys=args.accept_new_host_keys,
        datasets=args.datasets,
    )
    return asyncio.run(cleanup(inventory, options))
