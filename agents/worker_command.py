"""`loadtower agent worker`: the Locust worker processes that run the load engine on a
load host (the one part of `loadtower agent` an agent install set must have)."""

from __future__ import annotations

import argparse
import os

# light: it starts the workers; only a worker (`--index`) loads Locust and the engine
from loadtower.agents.worker_supervisor import DEFAULT_GRACE_S, run_workers

HELP = "Locust worker processes running the load engine"


def add_arguments(worker: argparse.ArgumentParser) -> None:
    worker.add_argument("--master", required=True, help="HOST:PORT of the master")
    worker.add_argument("--processes", type=int, default=1, help="worker processes (0 = per core)")
    worker.add_argument("--host-name", default=os.uname().nodename, help="inventory host name")
    worker.add_argument("--index", type=int, help=argparse.SUPPRESS)
    worker.add_argument("--lt-run", default="", help="run id (for process listings)")
    worker.add_argument(
        "--secret-dir",
        required=True,
        help="the run's private directory on this host (its link key, its secrets: 0700, "
        "written over SSH by the orchestrator)",
    )
    worker.add_argument("--spool-dir", help="write every interval line to DIR/INDEX.jsonl first")
    worker.add_argument(
        "--merge",
        action="store_true",
        help="one interval line per second for the host: worker 0 merges the others' "
        "(needs --spool-dir)",
    )
    worker.add_argument(
        "--grace",
        type=float,
        default=DEFAULT_GRACE_S,
        help="stop the load after this many seconds without the master",
    )


def run(args: argparse.Namespace) -> int:
    return run_workers(
        args.master, args.host_name, args.processes, args.index, args.spool_dir, args.grace,
        args.secret_dir, args.merge,
    )
