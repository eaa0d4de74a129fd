"""`loadtower demo`: bring up the sandbox and run the quick-start scenario against it."""

from __future__ import annotations

import argparse
from pathlib import Path

from loadtower.cli import main as cli_main  # the CLI room composes sandbox and run
from loadtower.defaults import add_store_argument, default_sandbox_dir, store_path
from loadtower.sandbox import Sandbox, engine_services
from loadtower.sandbox.ring_engine import ring_engine

HELP = "Bring up the sandbox and run the quick-start scenario against it."
DESCRIPTION = """Bring up the local sandbox (the ring's real database nodes, Prometheus,
node_exporter and sshd on loopback, and a host for each engine whose sandbox part can run
here, some of them stand-ins whose timings mean nothing), then check the 'quickstart'
scenario against its inventory and run it (in the live TUI when the terminal allows,
else with a status line and result table).
The sandbox stays up afterwards: stop it with `loadtower sandbox down --dir DIR`.

example:
  loadtower demo --dir .sandbox"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--dir",
        type=Path,
        default=None,
        help="sandbox directory (default: $LOADTOWER_SANDBOX or ./.sandbox)",
    )
    ring = ring_engine()  # the option is named for the ring's engine: --NAME-nodes
    parser.add_argument(
        f"--{ring.name}-nodes", dest="nodes", metavar=f"{ring.name.upper()}_NODES", type=int,
        default=1, help=f"{ring.title} nodes (default 1)"
    )
    parser.add_argument(
        "--scenario", default="quickstart", help="scenario to run (default quickstart)"
    )
    parser.add_argument(
        "--headless", action="store_true", help="no TUI: status line and result table"
    )
    add_store_argument(parser)


def run(args: argparse.Namespace) -> int:
    directory = args.dir or default_sandbox_dir()
    info = Sandbox(directory, nodes=args.nodes).up()  # the ring's running nodes
    inventory = info["inventory"]
    print(f"sandbox up in {info['dir']}; inventory {inventory}")
    for service in engine_services.services():  # what each stand-in's timings mean
        host = info.get(service.name) or {}
        if host.get("enabled"):
            print(f"WARNING: {host['warning']}.")
    status = cli_main(["check", args.scenario, "--inventory", str(inventory), "--brief"])
    if status != 0:
        return status
    argv = ["run", args.scenario, "--inventory", str(inventory), "--store", str(store_path(args))]
    if args.headless:
        argv.append("--headless")
    return cli_main(argv)
