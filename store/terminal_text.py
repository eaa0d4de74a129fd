"""Text that reaches a terminal: the one place that makes stored and configured text safe.

Everything loadtower prints or shows (CLI tables, CSV, plans, logs, TUI widgets) may
come from a scenario file, an inventory, an agent, a database or a user's SQL. Such
text must never drive the terminal: an ESC sequence could retitle the window, clear
the screen or print a link; a CR could overwrite a line; a bidi override could
reorder what is shown. And it must never be read as Rich markup (`[/]`, `[link=...]`).

- ``visible(text)``: control characters (C0 except tab/newline, DEL, C1), format
  characters (bidi overrides, zero-width), line/paragraph separators and lone
  surrogates are replaced by their escape spelling (``\\x1b``, ``\\u202e``, ``\\udcff``),
  so they can be seen and nothing reaches the terminal raw.
- ``cell(value)``: a Rich ``Text`` of ``visible(str(value))``: never markup.
- ``markup_safe(text)``: for the few places that build markup strings around text.
- ``table_console()`` / ``print_table()``: tables are never cut: piped (not a terminal),
  the console is as wide as the table needs.
"""

from __future__ import annotations

import sys
import unicodedata
from functools import lru_cache
from typing import IO, Any

NO_LIMIT_WIDTH = 1 << 16  # piped output: wide enough for any table we print


@lru_cache(maxsize=4096)
def _escape_char(ch: str) -> str:
    code = ord(ch)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


@lru_cache(maxsize=65536)
def _unsafe(ch: str) -> bool:
    if ch in "\t\n":
        return False
    return unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp")


def visible(text: Any, keep_newlines: bool = True) -> str:
    """`text` with every character that could drive a terminal spelled out."""
    if text is None:
        return ""
    s = text if isinstance(text, str) else str(text)
    if s.isascii() and s.isprintable():
        return s
    out = []
    for ch in s:
        if (ch == "\n" and not keep_newlines) or _unsafe(ch):
            out.append(_escape_char(ch))
        else:
            out.append(ch)
    return "".join(out)


def cell(value: Any, keep_newlines: bool = True) -> Any:
    """A table cell or label: plain text (never Rich markup), control characters visible."""
    from rich.text import Text

    return Text("" if value is None else visible(value, keep_newlines))


def markup_safe(text: Any) -> str:
    """`text` for insertion into a Rich markup string: visible and with markup escaped."""
    from rich.markup import escape

    return escape(visible(text))


def table_console(file: IO[str] | None = None, stderr: bool = False) -> Any:
    """A Rich console for tables: on a terminal its width; piped, as wide as needed."""
    from rich.console import Console

    stream = file or (sys.stderr if stderr else sys.stdout)
    probe = Console(file=stream)
    if probe.is_terminal:
        return probe
    return Console(file=stream, width=NO_LIMIT_WIDTH, soft_wrap=False)


def print_table(table: Any, console: Any = None) -> None:
    """Print a Rich table so that no cell is cut (see table_console)."""
    (console or table_console()).print(table)
