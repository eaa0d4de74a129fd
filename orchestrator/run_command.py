"""`loadtower run SCENARIO --inventory INV`: drive a whole benchmark and record everything."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from loadtower.defaults import add_store_argument, store_path
from loadtower.scenarios.private_dir import check_socket_folder
from loadtower.scenarios.serve_address import chosen_address
from loadtower.store.terminal_text import visible

if TYPE_CHECKING:
    from loadtower.scenarios.plan import Plan

HELP = "Run a scenario against an inventory and store every sample."
DESCRIPTION = """Run a scenario (a file or a built-in name) against an inventory: connect to every
host over SSH, start the load agents, run the phases in order, sample node metrics,
and store every sample. Without --headless the live TUI shows the run.

examples:
  loadtower run quickstart --inventory .sandbox/inventory.toml --headless
  loadtower run ycsb-a -i inv.toml --headless --set phases[1].rate=5000 --scale 10
  loadtower run workloada -i inv.toml --headless   # a YCSB property file as it is
  loadtower run quickstart -i inv.toml --headless --metrics-address 9464   # for Prometheus

exit status: 0 completed; 1 completed (or stopped by an abort threshold) with a
[[thresholds]] target breached (one line per breach on stderr); 2 bad input or failed
run (one-line reason on stderr); 3 stopped from the TUI or the control socket; 130 Ctrl-C
(SIGINT: the load stops at once, the run ends within seconds; a second Ctrl-C exits at
once), 143 SIGTERM. Samples stay in the store either way."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "scenario",
        help="scenario TOML file, built-in scenario name, or a YCSB property file / workload "
        "file run as it is (YCSB's client defaults: docs/workloads.md)",
    )
    parser.add_argument("--inventory", "-i", type=Path, required=True, help="inventory TOML file")
    parser.add_argument(
        "--headless", action="store_true", help="no TUI: a live status line, then the result table"
    )
    add_store_argument(parser)
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a scenario value (repeatable)",
    )
    parser.add_argument("--scale", type=float, default=None, help="multiply the dataset size")
    parser.add_argument(
        "--name", default=None, help="a name for this run (default: the scenario's)"
    )
    parser.add_argument(
        "--accept-new-host-keys",
        action="store_true",
        help="trust hosts not yet in known_hosts (never a changed key)",
    )
    parser.add_argument(
        "--bootstrap-agents",
        action="store_true",
        help="install this loadtower into a venv on agent hosts that run another version",
    )
    served = parser.add_mutually_exclusive_group()
    served.add_argument(
        "--metrics-address",
        metavar="[HOST:]PORT",
        default=None,
        help="serve the run's live figures for Prometheus at http://HOST:PORT/metrics "
        "(HOST 127.0.0.1 if left out; default: the inventory's [metrics] serve, else not "
        "served; docs/prometheus.md)",
    )
    served.add_argument(
        "--no-metrics",
        action="store_true",
        help="do not serve them, whatever the inventory's [metrics] serve says",
    )
    parser.add_argument(
        "--control",
        type=Path,
        default=None,
        help="UNIX socket for run control (default: STORE.d/control/RUN_ID.sock)",
    )


LiveRun = Callable[["Plan", Path, argparse.Namespace], "int | None"]


def run(args: argparse.Namespace, live: LiveRun | None = None) -> int:
    """Run headless, or through `live` (the TUI's launcher, which the CLI room passes in:
    this room does not import the TUI) unless --headless; `live` returning None (no
    terminal for it) falls back to headless."""
    import asyncio

    # deferred: these load pydantic, rich, duckdb, pyarrow and numpy; `loadtower --help` imports
    # this command module
    from loadtower.orchestrator.headless_session import run_headless
    from loadtower.scenarios.plan import load_plan

    plan = load_plan(args.scenario, args.inventory, args.overrides, args.scale)
    chosen_address(getattr(args, "metrics_address", None), False, None, "")  # bad: one line now
    for note in plan.notes:  # a YCSB property file or workload file run as it is
        print(f"loadtower run: default: {visible(note, keep_newlines=False)}", file=sys.stderr)
    # deferred: target_spec loads pydantic and duckdb; `loadtower --help` imports this command
    # module
    from loadtower.scenarios.workloads.target_spec import check_runnable

    check_runnable(plan)  # a workload file on an engine that cannot run it: one line now
    # deferred: environment_checks loads pydantic, rich and duckdb; `loadtower --help` imports
    # this command module
    from loadtower.scenarios.environment_checks import check_tls_files

    check_tls_files(plan)  # read now and sent to the agents: a missing one is refused now
    if args.control is None:
        check_socket_folder()  # a /tmp/loadtower-UID made by someone else is refused
    if not args.headless and live is not None:
        code = live(plan, store_path(args), args)
        if code is not None:
            return int(code)
    return asyncio.run(run_headless(plan, store_path(args), args))
