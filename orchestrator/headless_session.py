"""A run without the TUI: signals, live status, result table, exit status."""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
from pathlib import Path

from rich.console import Console
from rich.text import Text

from loadtower.orchestrator.benchmark import Orchestrator, RunOptions
from loadtower.orchestrator.headless_display import (
    phase_notes,
    ramp_tables,
    result_table,
    show_progress,
)
from loadtower.orchestrator.metrics_endpoint import (
    MetricsEndpoint,
    ServeError,
    serve_run,
)
from loadtower.orchestrator.where_it_waits import install, uninstall
from loadtower.scenarios.plan import Plan
from loadtower.scenarios.serve_address import chosen_address
from loadtower.store import StoreReader
from loadtower.store.terminal_text import print_table, table_console

EXIT = {"completed": 0, "failed": 2, "interrupted": 3}
THRESHOLD_BREACHED = 1  # the run ran, and a [[thresholds]] target was not met


async def run_headless(plan: Plan, store: Path, args: argparse.Namespace) -> int:
    options = RunOptions(
        store=store,
        accept_new_host_keys=args.accept_new_host_keys,
        control_path=args.control,
        name=args.name,
        bootstrap_agents=getattr(args, "bootstrap_agents", False),
    )
    orch = Orchestrator(plan, options)
    loop = asyncio.get_running_loop()
    endpoint = serve_metrics(plan, args, orch, loop)  # before the run: a taken port ends it
    if endpoint is not None:
        options.metrics_url = endpoint.url
    console = Console(stderr=False)
    task = asyncio.create_task(orch.run())
    signals = SignalCount()

    def on_signal(signum: int) -> None:
        if signals.first(signum):  # the load stops now; the run ends within seconds
            orch.control.stop(f"interrupted by {signal.Signals(signum).name}")
            print(f"loadtower run: {signal.Signals(signum).name}: stopping the load and "
                  "ending the run (again to exit at once)", file=sys.stderr, flush=True)
            return
        line = orch.abandon(f"interrupted by {signals.names()}")
        print(f"loadtower run: second {signal.Signals(signum).name}: exiting now; {line}",
              file=sys.stderr, flush=True)
        sys.stdout.flush()
        os._exit(signals.exit_code())  # at once: no wait for the agents, the SSH links

    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, on_signal, int(sig))
    install(loop)  # SIGUSR1: where the run waits, on its stderr
    done = asyncio.Event()
    progress = asyncio.create_task(show_progress(orch, console, done))
    try:
        state = await task
    finally:
        done.set()
        await progress
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
        uninstall(loop)
        if endpoint is not None:
            await asyncio.to_thread(endpoint.close)
    if state.run_id and not signals.count:  # stopped by a signal: leave now, no table
        _print_results(console, store, state.run_id, state.results)
    if state.status != "completed" and orch.thresholds.aborted is None:
        print(f"loadtower run: run {state.run_id} {state.status}: {state.reason}", file=sys.stderr)
    for line in state.breaches:  # [[thresholds]]: one line per breach, then exit 1
        print(f"loadtower run: threshold breached: {line}", file=sys.stderr)
    if state.status == "interrupted" and signals.count:
        if state.run_id:
            print(f"loadtower run: its figures: loadtower report {state.run_id} --out "
                  "FILE.html (or loadtower tui)", file=sys.stderr)
        sys.stdout.flush()
        sys.stderr.flush()
        # the store is closed and every child process gone: skip the interpreter's
        # teardown (seconds on a loaded machine); 128 + the signal, as a shell says it
        os._exit(signals.exit_code())
    if state.breaches and (state.status == "completed" or orch.thresholds.aborted is not None):
        return THRESHOLD_BREACHED
    return EXIT.get(state.status, 2)


def serve_metrics(plan: Plan, args: argparse.Namespace, orch: Orchestrator,
                  loop: asyncio.AbstractEventLoop) -> MetricsEndpoint | None:
    """The run's live figures served for Prometheus (``--metrics-address``, else the
    inventory's ``[metrics] serve``; docs/prometheus.md), or None."""
    address = chosen_address(getattr(args, "metrics_address", None),
                             getattr(args, "no_metrics", False),
                             plan.inventory.metrics.serve, str(plan.inventory_path))
    if address is None:
        return None
    try:
        return serve_run(address, lambda: orch.sinks, loop)
    except ServeError as exc:
        if getattr(args, "metrics_address", None):  # asked for by name: no run without it
            raise
        # the inventory's default (every run on a sandbox has one): a second run at the
        # same time runs too, without serving; the first keeps the port
        print(f"loadtower run: warning: {exc.problem}; the run goes on without serving them",
              file=sys.stderr)
        return None


class SignalCount:
    """The signals a run got (SIGINT, SIGTERM): the first stops the run, a second exits
    at once; the exit status is 128 + the first one's number (130 for Ctrl-C)."""

    def __init__(self) -> None:
        self.received: list[int] = []

    @property
    def count(self) -> int:
        return len(self.received)

    def first(self, signum: int) -> bool:
        """Count `signum`; True when it is the first signal."""
        self.received.append(signum)
        return len(self.received) == 1

    def names(self) -> str:
        """'SIGINT', 'SIGINT, then SIGINT', ..."""
        return ", then ".join(signal.Signals(s).name for s in self.received)

    def exit_code(self) -> int:
        return 128 + self.received[0] if self.received else EXIT["interrupted"]


def _print_results(console: Console, store: Path, run_id: str, results: dict) -> None:
    tables = table_console()  # piped: as wide as the table needs, no name is cut
    try:
        summary = StoreReader(store).phase_summary(run_id)
    except Exception as exc:  # noqa: BLE001 - the run is stored; the table is a courtesy
        console.print(Text(f"(no result table: {exc})"))
        return
    if summary:  # a run that failed before any load has no table to show
        print_table(result_table(summary, f"Run {run_id}: results per phase and op"), tables)
    for table in ramp_tables(results):
        print_table(table, tables)
    for note in phase_notes(results):
        console.print(Text(note), soft_wrap=True)
