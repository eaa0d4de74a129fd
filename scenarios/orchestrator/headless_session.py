"""A run without the TUI: signals, live status, result table, exit status."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from pathlib import Path

from rich.console import Console
from rich.text import Text

from loadtower.scenarios.orchestrator.benchmark import Orchestrator, RunOptions
from loadtower.scenarios.orchestrator.headless_display import (
    phase_notes,
    ramp_tables,
    result_table,
    show_progress,
)
from loadtower.scenarios.plan import Plan

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
    console = Console(stderr=False)
    loop = asyncio.get_running_loop()
    task = asyncio.create_task(orch.run())
    signals = 0

    def on_signal(signame: str) -> None:
        nonlocal signals
        signals += 1
        if signals == 1:
            orch.control.stop(f"interrupted by {signame}")
        else:
            task.cancel()

    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, on_signal, sig.name)
    done = asyncio.Event()
    progress = asyncio.create_task(show_progress(orch, console, done))
    try:
        state = await task
    finally:
        done.set()
        await progress
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
    if state.run_id:
        _print_results(console, store, state.run_id, state.results)
    if state.status != "completed" and orch.thresholds.aborted is None:
        print(f"loadtower run: run {state.run_id} {state.status}: {state.reason}", file=sys.stderr)
    for line in state.breaches:  # [[thresholds]]: one line per breach, then exit 1
        print(f"loadtower run: threshold breached: {line}", file=sys.stderr)
    if state.breaches and (state.status == "completed" or orch.thresholds.aborted is not None):
        return THRESHOLD_BREACHED
    return EXIT.get(state.status, 2)


def _print_results(console: Console, store: Path, run_id: str, results: dict) -> None:
    from loadtower.store import StoreReader
    from loadtower.store.terminal_text import print_table, table_console

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
