"""Printing a command's table so that no cell is ever cut short."""

from __future__ import annotations

from typing import Any

from loadtower.store.terminal_text import print_table, table_console


def print_whole(table: Any, console: Any = None) -> None:
    """Print `table` with nothing cut: piped, as wide as it needs (table_console); on a
    terminal narrower than the table's minimum (numbers whole, text columns folded), at
    that minimum width: the terminal wraps the lines, no cell loses characters."""
    from rich.measure import Measurement

    console = console or table_console()
    if console.is_terminal:
        unbounded = console.options.update_width(1 << 20)
        console.width = max(console.width, Measurement.get(console, unbounded, table).minimum)
    print_table(table, console)
