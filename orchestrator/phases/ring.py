"""Reading node states from `nodetool status`-like output."""

from __future__ import annotations

import re

_LINE = re.compile(r"^\s*([UD])([NJLM])\s+(\S+)", re.MULTILINE)


def node_states(status_text: str) -> dict[str, str]:
    """address -> two-letter state ('UN', 'UJ', 'DN', ...)."""
    return {m.group(3): m.group(1) + m.group(2) for m in _LINE.finditer(status_text)}
