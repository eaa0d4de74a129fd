"""`loadtower agent master`: the Locust master the orchestrator commands over stdin
(orchestrator/locust_master.py). Registered by the CLI room beside the
agents' own `worker` (loadtower/cli.py)."""

from __future__ import annotations

import argparse

HELP = "the Locust master; JSON commands on stdin, the run's link key in $LOADTOWER_LINK_KEY"


def add_arguments(master: argparse.ArgumentParser) -> None:
    master.add_argument("--bind", required=True, help="HOST:PORT to listen on")
    master.add_argument("--expect-workers", type=int, default=1)
    master.add_argument("--lt-run", default="", help="run id (for process listings)")
    master.add_argument(
        "--grace", type=float, default=30.0, help="seconds a silent worker is still counted"
    )


def run(args: argparse.Namespace) -> int:
    # deferred: the master loads locust, gevent and zmq; `loadtower --help` imports this command
    # module
    from loadtower.orchestrator.locust_master import Master, link_key_from_env

    return Master(args.bind, args.expect_workers, args.grace, link_key_from_env()).serve()
