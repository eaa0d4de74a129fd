"""Who holds a store file: the process named in DuckDB's lock error, as a user can act on it.

DuckDB's error for a store another process has open reads: `Could not set lock on file
"x.duckdb": Conflicting lock is held in /usr/bin/python3.11 (PID 12345) by user root`.
The pid is taken from it; on this machine, /proc/PID/cmdline tells which command that is
(`loadtower sql SELECT ...`, a TUI, an orchestrator), so a user knows what to stop.
"""

from __future__ import annotations

import re

from loadtower.store.terminal_text import visible

_PID = re.compile(r"\(PID (\d+)\)")
CMDLINE_MAX = 200  # characters of the holder's command line shown


def holder_pid(error_text: str) -> int | None:
    """The pid in DuckDB's lock error text, or None."""
    found = _PID.search(error_text)
    return int(found.group(1)) if found else None


def command_line(pid: int) -> str | None:
    """The command line of a local process, arguments joined by spaces, or None."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            raw = handle.read()
    except OSError:
        return None
    words = [w.decode("utf-8", "backslashreplace") for w in raw.split(b"\0") if w]
    return " ".join(words) or None


def describe_holder(error_text: str) -> str:
    """`pid 12345 (python -m loadtower sql ...)`, `pid 12345`, or `another process`."""
    pid = holder_pid(error_text)
    if pid is None:
        return "another process"
    line = command_line(pid)
    if line is None:
        return f"pid {pid} (not on this machine, or gone since)"
    if len(line) > CMDLINE_MAX:
        line = line[: CMDLINE_MAX - 1] + "…"
    return f"pid {pid} ({visible(line, keep_newlines=False)})"
