"""The headless display: on a terminal, a rich live status line while running; piped
(``> run.log``), plain lines a log can keep: one per phase start and end and a progress
line every PROGRESS_EVERY_S. At the end, the result table (names never cut: a piped
table is as wide as it needs, ``loadtower.store.terminal_text``) and a table of each
ramp's steps.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from loadtower.orchestrator.benchmark import Orchestrator
from loadtower.orchestrator.phases.impact import p99_text
from loadtower.orchestrator.phases.search import within_text
from loadtower.orchestrator.plan_duration import clock, expected_total
from loadtower.scenarios.durations import format_duration
from loadtower.store.terminal_text import cell, visible

PROGRESS_EVERY_S = 10.0  # piped output: a progress line this often
POLL_S = 0.5


def _elapsed(orch: Orchestrator, now: float) -> str:
    state = orch.state
    total, open_ended = expected_total(
        orch.plan.scenario, state.started, now, state.step, state.phase_started
    )
    return f"{clock(now - state.started)}/{clock(total)}{'+' if open_ended else ''}"


def _status(orch: Orchestrator) -> Group:
    state = orch.state
    now = time.time()
    total = len(orch.plan.scenario.phases)
    line = Text()
    line.append(f"run {state.run_id or '...'}  ", style="bold")
    if state.phase:
        line.append(f"phase {state.phase_index + 1}/{total} ", style="cyan")
        line.append(visible(state.phase), style="cyan")
        line.append(f"  {format_duration(now - state.phase_started)} in phase  ")
    line.append(f"elapsed {_elapsed(orch, now)}  ")
    if orch.sinks is not None:
        last = orch.sinks.stats.latest(now, span=3, phase=state.phase or None)
        line.append(f"{last.ops_per_s:,.0f} ops/s  ", style="green")
        line.append(f"p99 {last.p99_ms:.2f} ms  ", style="yellow")
        style = "red" if last.errors else ""
        line.append(f"errors {last.errors}/3s", style=style)
    return Group(line)


def progress_line(orch: Orchestrator, now: float, span: int = int(PROGRESS_EVERY_S)) -> str:
    """One plain line: elapsed/total, the phase, ops/s, p99 and errors of the last
    `span` whole seconds."""
    state = orch.state
    where = (
        f"phase {state.phase_index + 1}/{len(orch.plan.scenario.phases)} {visible(state.phase)}"
        if state.phase
        else "between phases"
    )
    figures = ""
    if orch.sinks is not None:
        last = orch.sinks.stats.latest(now, span=span, phase=state.phase or None)
        figures = (
            f": {last.ops_per_s:,.1f} ops/s, p99 {last.p99_ms:.2f} ms, "
            f"errors {last.errors:,} (last {span} s)"
        )
    return f"[{_elapsed(orch, now)}] {where}{figures}"


def _rate(result: dict[str, Any]) -> str:
    ops = result.get("ops", result.get("inserted_ops"))
    rate = result.get("ops_per_s", result.get("insert_rate"))
    if ops is None or rate is None:
        return ""
    errors = result.get("errors")
    return f": {ops:,} ops, {rate:,.1f} ops/s" + (
        f", {errors:,} errors" if isinstance(errors, int) else ""
    )


def phase_end_lines(label: str, result: dict[str, Any], took: float) -> list[str]:
    """The lines a log gets when a phase ends (a ramp: one more per step)."""
    skipped = " (skipped)" if result.get("skipped") else ""
    notes = result.get("notes") or []
    lines = [
        f"phase {visible(label)} ended{skipped} after {took:.1f} s{_rate(result)}"
        + (f" ({'; '.join(visible(n) for n in notes)})" if notes else "")
    ]
    for step in result.get("steps") or []:
        if isinstance(step, dict) and "label" in step:
            lines.append("  " + step_text(step))
    return lines


def step_text(step: dict[str, Any]) -> str:
    verdict = "passed" if step.get("passed") else f"FAILED ({step.get('why')})"
    return (
        f"step {visible(step['label'])} asked {step['asked']:g} {step.get('unit', '')}: "
        f"{step['achieved_ops_per_s']:,.1f} ops/s, p99 {step['p99_ms']:.2f} ms, "
        f"{step['errors']:,} errors: {verdict}"
    )


async def _log_progress(orch: Orchestrator, console: Console, done: asyncio.Event) -> None:
    """Piped output: plain lines, never a live (redrawn) status line."""
    printed_id = False
    seen_step: tuple[int, str] | None = None
    ended: set[str] = set()
    started_at: dict[str, float] = {}
    next_progress = time.time() + PROGRESS_EVERY_S

    def say(text: str) -> None:
        console.print(Text(text), soft_wrap=True)  # plain: no markup, never wrapped

    while True:
        finished = done.is_set()
        state = orch.state
        now = time.time()
        if state.run_id and not printed_id:
            say(f"run_id: {state.run_id}")
            printed_id = True
        for label, result in list(state.results.items()):
            if label not in ended:
                ended.add(label)
                took = now - started_at.get(label, now)
                for line in phase_end_lines(label, result, took):
                    say(line)
        current = (state.step, state.phase)
        if state.phase and current != seen_step and state.phase not in ended:
            seen_step = current
            started_at[state.phase] = state.phase_started
            phase = orch.plan.scenario.phases[state.phase_index]
            say(
                f"[{_elapsed(orch, now)}] phase {state.phase_index + 1}/"
                f"{len(orch.plan.scenario.phases)} {visible(state.phase)} ({phase.type}) started"
            )
        if finished:
            break
        if now >= next_progress and state.phase:
            say(progress_line(orch, now))
            next_progress = now + PROGRESS_EVERY_S
        elif now >= next_progress:
            next_progress = now + PROGRESS_EVERY_S
        try:
            await asyncio.wait_for(done.wait(), timeout=POLL_S)
        except TimeoutError:
            pass
    if not printed_id and orch.state.run_id:
        say(f"run_id: {orch.state.run_id}")


async def show_progress(orch: Orchestrator, console: Console, done: asyncio.Event) -> None:
    if not console.is_terminal:
        await _log_progress(orch, console, done)
        return
    printed_id = False
    with Live(_status(orch), console=console, refresh_per_second=2, transient=True) as live:
        while not done.is_set():
            if state_id := orch.state.run_id:
                if not printed_id:
                    live.console.print(f"run_id: {state_id}")
                    printed_id = True
            live.update(_status(orch))
            try:
                await asyncio.wait_for(done.wait(), timeout=POLL_S)
            except TimeoutError:
                pass
    if not printed_id and orch.state.run_id:
        console.print(f"run_id: {orch.state.run_id}")


def result_table(summary: list[dict[str, Any]], title: str) -> Table:
    """One row per phase (each ramp step is a phase of its own) and op; every rate is
    phase_summary's (loadtower.store.phase_rate). Where the engine's tombstones per read
    were sampled (store.table_reads), the table each phase read and its tombstones
    scanned per read (p50 / p99) stand beside the p99."""
    table = Table(title=cell(title), title_justify="left")
    tombstones = any(row.get("tombstones_p99") is not None for row in summary)
    columns = ["phase", "op", "ops", "ops/s", "p50 ms", "p90 ms", "p99 ms", "max ms", "errors"]
    if tombstones:
        columns += ["table", "tombstones/read p50", "p99"]
    for column in columns:
        table.add_column(column, justify="left" if column in ("phase", "op", "table") else "right")
    for row in summary:
        more = (cell(row.get("tombstones_table") or ""), _figure(row.get("tombstones_p50")),
                _figure(row.get("tombstones_p99")))
        table.add_row(
            cell(row["phase"]),
            cell(row["op"]),
            f"{row['ops']:,}",
            f"{row['ops_per_s']:,.1f}",
            f"{row['p50_ms'] or 0.0:.2f}",
            f"{row['p90_ms'] or 0.0:.2f}",
            f"{row['p99_ms'] or 0.0:.2f}",
            f"{row['max_ms'] or 0.0:.2f}",
            f"{row['errors']:,}",
            *(more if tombstones else ()),
        )
    return table


def _figure(value: float | None) -> str:
    """A tombstones-per-read figure; the nodes report 0 and 1 alike as 1 (table_reads.py)."""
    if value is None:
        return ""
    return "<=1" if value <= 1 else f"{value:,.1f}"


def ramp_tables(results: dict[str, dict[str, Any]]) -> list[Table]:
    """One table per ramp: a row per step (its label, what it asked, what it achieved)."""
    tables = []
    for phase, result in results.items():
        steps = [s for s in result.get("steps") or [] if isinstance(s, dict) and "label" in s]
        if not steps:
            continue
        kind = "Search" if "bracket" in result else "Ramp"
        table = Table(title=cell(f"{kind} {phase}: one row per step"), title_justify="left")
        for column in ("step", "asked", "ops/s", "p50 ms", "p90 ms", "p99 ms", "errors", "verdict"):
            table.add_column(column, justify="left" if column in ("step", "verdict") else "right")
        for s in steps:
            table.add_row(
                cell(s["label"]),
                f"{s['asked']:g} {s.get('unit', '')}",
                f"{s['achieved_ops_per_s']:,.1f}",
                f"{s['p50_ms']:.2f}",
                f"{s['p90_ms']:.2f}",
                f"{s['p99_ms']:.2f}",
                f"{s['errors']:,}",
                cell("passed" if s["passed"] else f"failed: {s.get('why')}"),
            )
        tables.append(table)
    return tables


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
        if "bracket" in result and "found" in result:  # a search
            low, high = result["bracket"]
            found = result["found"]
            notes.append(
                f"{phase}: " + (
                    f"no rate met {result.get('target')} ({result.get('stop_reason')})"
                    if found is None else
                    f"highest rate meeting {result.get('target')}: {found:,.1f} ops/s, "
                    f"bracket [{low:,.1f}, {'-' if high is None else f'{high:,.1f}'}] "
                    f"{within_text(result)} {result.get('resolution')}, "
                    + ("confirmed" if result.get("confirmed")
                       else f"NOT confirmed ({result.get('stop_reason')})")
                )
            )  # fmt: skip
        if "joined" in result:
            if result["joined"]:
                notes.append(
                    f"{phase}: {result['host']} joined (UN) in {result['join_duration_s']} s"
                    + (
                        f", streaming {result['streaming_duration_s']} s"
                        if "streaming_duration_s" in result
                        else ""
                    )
                    + f"; {p99_text(result, 'before')}, {p99_text(result, 'during')}"
                )
            else:
                notes.append(f"{phase}: {result['host']} did not join")
        if "hosts" in result and isinstance(result["hosts"], dict):
            for host, entry in result["hosts"].items():
                if "flush_s" in entry and "compaction_s" not in entry:  # a flush phase
                    notes.append(f"{phase}: flush on {host} took {entry['flush_s']} s" + (
                        "" if entry.get("exit_status") == 0 else
                        f" and failed (exit status {entry.get('exit_status')}): "
                        f"{entry.get('error', '')}"))
                    continue
                notes.append(
                    f"{phase}: compaction on {host} took {entry.get('compaction_s')} s; "
                    f"{p99_text(result, 'before')}, {p99_text(result, 'during')}"
                )
        if "action" in result and "load_ran" in result:
            notes.append(
                f"{phase}: fault '{result['action']}' on {result.get('host')}; "
                f"{p99_text(result, 'before')}, {p99_text(result, 'after')}"
            )
        if "insert_rate" in result:
            notes.append(
                f"{phase}: inserted {result['inserted_ops']:,} ops at "
                f"{result['insert_rate']:,.1f} ops/s in {result['duration_s']:.1f} s "
                f"({result['errors']} errors)"
            )
    return [visible(note) for note in notes]
