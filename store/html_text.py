"""Text that reaches an HTML page (the report): the one escaping helper of every stored
or configured string put in the page. HTML-escaped (``<``, ``&``, quotes) and, like the
terminal's ``visible`` (terminal_text.py), every control, format or separator character
spelled out (ESC as ``\\x1b``, BEL as ``\\x07``, a bidi override as ``\\u202e``): a name or
reason holding raw ESC/BEL bytes is seen in the page, never passed on raw."""

from __future__ import annotations

from html import escape as _html_escape
from typing import Any

from loadtower.store.terminal_text import visible


def escape(text: Any, quote: bool = True) -> str:
    """`text` safe for HTML element text and quoted attributes, control characters
    visible (newlines kept: HTML shows them as spaces)."""
    return _html_escape(visible(text), quote=quote)
