"""`compare`'s curve tables: latency against achieved throughput per step of every ramp
and search (store/curves.py), each system's curve beside the others, and the rate each
system holds at its latency target."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from loadtower.errors import LoadtowerError
from loadtower.store.commands.tables import print_whole
from loadtower.store.curves import curves_of
from loadtower.store.terminal_text import cell

CURVE_COLUMNS = (
    "system", "phase", "step", "asked ops/s", "achieved ops/s", "p50 ms", "p90 ms", "p99 ms",
    "verdict",
)  # fmt: skip
AT_TARGET_COLUMNS = (
    "system", "phase", "target", "rate at target (ops/s)", "bracket", "confirmed", "from",
)  # fmt: skip
TEXT_COLUMNS = ("system", "phase", "step", "verdict", "target", "bracket", "confirmed", "from")


def _num(value: Any, fmt: str) -> str:
    return "" if value is None else fmt.format(value)


def _table(title: str, columns: tuple[str, ...]) -> Any:
    from rich.table import Table

    table = Table(title=cell(title), title_justify="left")
    for column in columns:
        if column in TEXT_COLUMNS:
            table.add_column(column, justify="left", overflow="fold")
        else:
            table.add_column(column, justify="right", no_wrap=True)
    return table


def _rate_text(value: Any) -> str:
    return _num(value, "{:,.1f}")


def print_curves(store: Path, runs: list[str], as_json: bool, only_if_any: bool) -> int:
    """Print the curve table and the rates at target (or their JSON); with
    `only_if_any`, print nothing for runs without a ramp or search."""
    found = curves_of(store, runs)
    if not found["curves"] and not found["at_target"]:
        if only_if_any:
            return 0
        raise LoadtowerError(
            f"run(s) {', '.join(runs)} have no ramp or search phase: no curve to show"
        )
    if as_json:
        print(json.dumps(found, indent=2))
        return 0
    curve = _table(
        "Latency against throughput: every ramp and search step per system, by achieved "
        "ops/s (response time, ms)",
        CURVE_COLUMNS,
    )
    systems = list(dict.fromkeys(p["system"] for p in found["curves"]))
    for system in systems:
        curve.add_section()
        points = sorted(
            (p for p in found["curves"] if p["system"] == system),
            key=lambda p: (p["phase"], p["ops_per_s"] or 0.0),
        )
        for p in points:
            verdict = {True: "passed", False: "FAILED", None: ""}[p["passed"]]
            if p.get("stage"):
                verdict = f"{verdict} ({p['stage']})"
            curve.add_row(
                cell(system), cell(p["phase"]), cell(p["label"]), _num(p["level"], "{:g}"),
                _rate_text(p["ops_per_s"]), _num(p["p50_ms"], "{:.2f}"),
                _num(p["p90_ms"], "{:.2f}"), _num(p["p99_ms"], "{:.2f}"), verdict,
            )  # fmt: skip
    print_whole(curve)
    answers = _table("Rate each system holds at its latency target", AT_TARGET_COLUMNS)
    for row in found["at_target"]:
        low, high = ([*(row.get("bracket") or [])] + [None, None])[:2]
        bracket = f"[{_rate_text(low) or '-'}, {_rate_text(high) or '-'}]"
        confirmed = {True: "yes", False: "NO", None: ""}[row.get("confirmed")]
        answers.add_row(
            cell(row["system"]), cell(row["phase"]), cell(row.get("target_text") or ""),
            _rate_text(row.get("rate")) or "none passed", bracket, confirmed,
            cell(row["source"]),
        )  # fmt: skip
    print_whole(answers)
    return 0
