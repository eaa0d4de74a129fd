"""Is a process (an orchestrator writing a run, say) still alive?

A process is named by its host name, pid, start time (clock ticks since boot, field 22
of /proc/PID/stat) and the kernel's boot id, so a pid reused after the process died,
or a machine rebooted since, is not taken for the original process. Only processes on
this machine can be checked; for others the answer is "unknown".
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from functools import cache
from typing import Literal

Verdict = Literal["alive", "dead", "unknown"]


@dataclass(frozen=True)
class ProcessId:
    hostname: str
    pid: int
    started: int | None = None  # clock ticks after boot; None where /proc is missing
    boot_id: str | None = None

    def encode(self) -> str:
        """`host:pid:started:boot_id` (for environment variables and listings)."""
        started = "" if self.started is None else self.started
        return f"{self.hostname}:{self.pid}:{started}:{self.boot_id or ''}"

    @staticmethod
    def decode(text: str) -> ProcessId | None:
        parts = text.strip().split(":")
        if len(parts) != 4 or not parts[0] or not parts[1].isdigit():
            return None
        started = int(parts[2]) if parts[2].isdigit() else None
        return ProcessId(parts[0], int(parts[1]), started, parts[3] or None)


@cache
def boot_id() -> str | None:
    try:
        with open("/proc/sys/kernel/random/boot_id") as handle:
            return handle.read().strip() or None
    except OSError:
        return None


def _stat_fields(pid: int) -> list[str] | None:
    """/proc/PID/stat from field 3 (state) on, or None (no such process, or no /proc)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read().decode(errors="replace")
    except OSError:
        return None
    return stat[stat.rfind(")") + 2 :].split()  # after "pid (comm) "; comm may hold spaces


def start_ticks(pid: int) -> int | None:
    """Field 22 of /proc/PID/stat, or None (no such process, or no /proc)."""
    fields = _stat_fields(pid)
    try:
        return int(fields[19]) if fields else None
    except (IndexError, ValueError):
        return None


def pid_alive(pid: int) -> bool:
    """True while the process runs (a zombie, dead but not yet reaped, is not alive)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    fields = _stat_fields(pid)
    return not (fields and fields[0] in ("Z", "X"))


def this_process() -> ProcessId:
    pid = os.getpid()
    return ProcessId(socket.gethostname(), pid, start_ticks(pid), boot_id())


def verdict(proc: ProcessId) -> Verdict:
    """"alive", "dead", or "unknown" (a process on another machine)."""
    if proc.hostname != socket.gethostname():
        return "unknown"
    here = boot_id()
    if proc.boot_id and here and proc.boot_id != here:
        return "dead"  # this machine rebooted since
    if not pid_alive(proc.pid):
        return "dead"
    if proc.started is not None:
        now = start_ticks(proc.pid)
        if now is not None and now != proc.started:
            return "dead"  # the pid belongs to another process now
    return "alive"
