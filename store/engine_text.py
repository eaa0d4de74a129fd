"""The engines table as text: the cells `loadtower compare` prints for
engine_compare.engine_table's rows, shared by the CLI and the TUI (pure: no store access,
so the TUI imports it without duckdb), so that the same quantity reads the same in both."""

from __future__ import annotations

from typing import Any


def codes_text(codes: dict[str, int]) -> str:
    """``OK 1,234, ReadTimeout 12``: a row's return codes as the CLI and report show them."""
    return ", ".join(f"{name} {count:,}" for name, count in codes.items())


ENGINE_COLUMNS = ("phase", "op", "engine", "ops", "ops/s", "avg", "min", "max", "median", "p90",
                  "p95", "p99", "return codes")
ENGINE_TEXT_COLUMNS = ("phase", "op", "engine", "return codes")


def _ms(value: float | None, fmt: str = "{:.2f}") -> str:
    return "" if value is None else fmt.format(value)


def side_label(row: dict[str, Any]) -> str:
    """``ENGINE``, or ``east (ENGINE)`` when the target is not named for its
    engine; a side named for its engine and run (two runs compared) stays as it is."""
    target, engine = row["target"], row["engine"]
    if target == engine or target.startswith(f"{engine} ("):
        return str(target)
    return f"{target} ({engine})"


def throughput_text(row: dict[str, Any]) -> str:
    """A row's throughput as printed: ``111.1``, or a block load's total
    ``111.1 (11,104.0 rows/s)`` (its ops/s, then its rows/s: engine_table gives
    ``rows_per_s`` on the total row of a load whose ops are blocks of rows)."""
    text = f"{row['ops_per_s']:,.1f}"
    if row.get("rows_per_s") is not None:
        text += f" ({row['rows_per_s']:,.1f} rows/s)"
    return text


def engine_cells(row: dict[str, Any]) -> tuple[str, ...]:
    """One engine_table row as the text of ENGINE_COLUMNS' cells (raw text: the caller
    makes the text columns visible): the figures `loadtower compare`, the report and the
    TUI print, so that the same quantity reads the same everywhere (a block load's total
    throughput as study 4's cell, with its rows/s)."""
    return (
        row["phase"], row["op"], side_label(row), f"{row['ops']:,}", throughput_text(row),
        _ms(row["avg_ms"]), _ms(row["min_ms"], "{:.3f}"), _ms(row["max_ms"]),
        _ms(row["median_ms"]), _ms(row["p90_ms"]), _ms(row["p95_ms"]), _ms(row["p99_ms"]),
        codes_text(row["return_codes"]),
    )  # fmt: skip


def engine_lines(rows: list[dict[str, Any]]) -> list[tuple[bool, tuple[str, ...]]]:
    """(starts a new phase, cells) per row, in engine_table's order: the phase and op are
    written on the first row of each (phase, op) and left blank below it, as printed."""
    out = []
    previous: tuple[str, str] | None = None
    for row in rows:
        key = (row["phase"], row["op"])
        cells = engine_cells(row)
        if key == previous:
            cells = ("", "", *cells[2:])
        out.append((previous is not None and key[0] != previous[0], cells))
        previous = key
    return out
