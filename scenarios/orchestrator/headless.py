"""The headless display: a rich live status line while running, a result table at the end."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from loadtower.scenarios.durations import format_duration
from loadtower.scenarios.orchestrator.plan_duration import clock, expected_total
from loadtower.scenarios.orchestrator.runner import Orchestrator


def _status(orch: Orchestrator) -> Group:
    state = orch.state
    now = time.time()
    total = len(orch.plan.scenario.phases)
    line = Text()
    line.append(f"run {state.run_id or '...'}  ", style="bold")
    if state.phase:
        line.append(f"phase {state.phase_index + 1}/{total} {state.phase}  ", style="cyan")
        line.append(f"{format_duration(now - state.phase_started)} in phase  ")
    total, open_ended = expected_total(
        orch.plan.scenario, state.started, now, state.step, state.phase_started
    )
    line.append(f"elapsed {clock(now - state.started)}/{clock(total)}{'+' if open_ended else ''}  ")
    if orch.sinks is not None:
        last = orch.sinks.stats.latest(now, span=3)
        line.append(f"{last.ops_per_s:,.0f} ops/s  ", style="green")
        line.append(f"p99 {last.p99_ms:.2f} ms  ", style="yellow")
        style = "red" if last.errors else ""
        line.append(f"errors {last.errors}/3s", style=style)
    return Group(line)


async def show_progress(orch: Orchestrator, console: Console, done: asyncio.Event) -> None:
    printed_id = False
    with Live(_status(orch), console=console, refresh_per_second=2, transient=True) as live:
        while not done.is_set():
            if state_id := orch.state.run_id:
                if not printed_id:
                    live.console.print(f"run_id: {state_id}")
                    printed_id = True
            live.update(_status(orch))
            try:
                await asyncio.wait_for(done.wait(), timeout=0.5)
            except TimeoutError:
                pass
    if not printed_id and orch.state.run_id:
        console.print(f"run_id: {orch.state.run_id}")


def result_table(summary: list[dict[str, Any]], title: str) -> Table:
    table = Table(title=title, title_justify="left")
    for column in ("phase", "op", "ops/s", "p50 ms", "p90 ms", "p99 ms", "max ms", "errors"):
        table.add_column(column, justify="left" if column in ("phase", "op") else "right")
    for row in summary:
        table.add_row(
            str(row["phase"]),
            str(row["op"]),
            f"{row['ops_per_s']:,.1f}",
            f"{row['p50_ms']:.2f}",
            f"{row['p90_ms']:.2f}",
            f"{row['p99_ms']:.2f}",
            f"{row['max_ms']:.2f}",
            f"{row['errors']:,}",
        )
    return table


def phase_notes(results: dict[str, dict[str, Any]]) -> list[str]:
    """One line for the phases whose result is more than a table row."""
    notes = []
    for phase, result in results.items():
        if "highest_passing_level" in result:
            if result["highest_passing_ops_per_s"] is not None:
                failing = result["first_failing_level"]
                notes.append(
                    f"{phase}: highest throughput with p99 <= {result['target_p99_ms']:g} ms: "
                    f"{result['highest_passing_ops_per_s']:,.1f} ops/s "
                    f"(step {result['best_step']} at {result['best_level']:g} "
                    f"{result.get('unit', '')}); first failing step: "
                    + (
                        f"{failing:g} ({result.get('stop_reason')})"
                        if failing is not None
                        else "none"
                    )
                )
            else:
                notes.append(f"{phase}: no step met p99 <= {result['target_p99_ms']:g} ms")
        if "joined" in result:
            if result["joined"]:
                notes.append(
                    f"{phase}: {result['host']} joined (UN) in {result['join_duration_s']} s"
                    + (
                        f", streaming {result['streaming_duration_s']} s"
                        if "streaming_duration_s" in result
                        else ""
                    )
                )
            else:
                notes.append(f"{phase}: {result['host']} did not join")
        if "hosts" in result and isinstance(result["hosts"], dict):
            for host, entry in result["hosts"].items():
                notes.append(
                    f"{phase}: compaction on {host} took {entry.get('compaction_s')} s; "
                    f"p99 {result['p99_ms_before']:.2f} ms before, "
                    f"{result['p99_ms_during']:.2f} ms during"
                )
        if "insert_rate" in result:
            notes.append(
                f"{phase}: inserted {result['inserted_ops']:,} ops at "
                f"{result['insert_rate']:,.0f} ops/s ({result['errors']} errors)"
            )
    return notes
