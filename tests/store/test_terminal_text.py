"""store/terminal_text.py: the one function that makes text safe for a terminal."""

from __future__ import annotations

import io

from rich.table import Table

from loadtower.store.terminal_text import cell, markup_safe, print_table, table_console, visible


def test_control_format_and_surrogate_characters_are_spelled_out() -> None:
    text = "a\x1b]0;PWNED\x07b\r\x00\x7f\x9b\u202e\u200b\u2028\udcff"
    out = visible(text)
    assert out == "a\\x1b]0;PWNED\\x07b\\x0d\\x00\\x7f\\x9b\\u202e\\u200b\\u2028\\udcff"
    assert all(ch.isprintable() for ch in out)


def test_tabs_and_newlines_stay_unless_asked() -> None:
    assert visible("a\tb\nc") == "a\tb\nc"
    assert visible("a\nb", keep_newlines=False) == "a\\x0ab"
    assert visible(None) == ""
    assert visible(12) == "12"


def test_markup_is_never_read() -> None:
    assert cell("x[/]").plain == "x[/]"
    assert cell("[link=http://x]y[/link]").plain == "[link=http://x]y[/link]"
    assert markup_safe("[bold]x") == "\\[bold]x"


def test_piped_tables_are_never_cut() -> None:
    buf = io.StringIO()
    console = table_console(file=buf)
    table = Table()
    table.add_column("phase")
    name = "cassandra-mix-" * 12
    table.add_row(cell(name))
    print_table(table, console)
    assert name in buf.getvalue()
    assert "\x1b" not in buf.getvalue()
