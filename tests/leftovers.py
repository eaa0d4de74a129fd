"""Find processes a sandbox left behind: its recorded processes, their descendants
(e.g. sshd's per-connection session processes, which live in sessions of their own),
and any process whose command line or working directory names the sandbox directory.
``cluster_leftovers`` names what the multi-host cluster sandbox left.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import psutil


def _running(proc: psutil.Process) -> bool:
    """Alive and the same process (psutil checks the start time), not a zombie."""
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def describe(proc: psutil.Process) -> str:
    try:
        return f"pid {proc.pid}: {' '.join(proc.cmdline())[:200]}"
    except psutil.Error:
        return f"pid {proc.pid}"


def recorded(directory: Path) -> list[psutil.Process]:
    """The live processes the sandbox's state file records (nodes and services)."""
    from loadtower.sandbox import state as st
    from loadtower.sandbox.processes import is_alive

    state = st.load(directory)
    if state is None:
        return []
    records = [n.process for n in state.nodes.values()] + list(state.services.values())
    found = []
    for record in records:
        if record is not None and is_alive(record):
            try:
                found.append(psutil.Process(record.pid))
            except psutil.NoSuchProcess:
                pass
    return found


def descendants(procs: list[psutil.Process]) -> list[psutil.Process]:
    found = []
    for proc in procs:
        try:
            found += proc.children(recursive=True)
        except psutil.NoSuchProcess:
            pass
    return found


def mentioning(directory: Path) -> list[psutil.Process]:
    """Processes (not this one) whose cmdline or cwd is in or names ``directory``."""
    root = str(directory.resolve())
    in_root = re.compile(re.escape(root) + r"(/|$)")
    found = []
    for proc in psutil.process_iter(["pid", "cmdline", "cwd"]):
        if proc.pid == psutil.Process().pid:
            continue
        cmdline = proc.info["cmdline"] or []
        cwd = proc.info["cwd"] or ""
        if in_root.match(cwd) or any(in_root.search(arg) for arg in cmdline):
            found.append(proc)
    return found


class Leftovers:
    """Take a snapshot before stopping the sandbox; ask what still runs afterwards."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        top = recorded(directory)
        self.known = {p.pid: p for p in [*top, *descendants(top), *mentioning(directory)]}

    def still_running(self, wait: float = 20.0) -> list[str]:
        """What still runs after ``wait`` seconds at most (processes may take a moment)."""
        deadline = time.monotonic() + wait
        while True:
            left = {p.pid: p for p in self.known.values() if _running(p)}
            left.update({p.pid: p for p in mentioning(self.directory) if _running(p)})
            if not left or time.monotonic() >= deadline:
                return [describe(p) for p in left.values()]
            time.sleep(0.5)


def cluster_leftovers() -> list[str]:
    """What the cluster sandbox left, found by name: processes in ``ltc-*`` namespaces
    or ``loadtower/*`` cgroups, those namespaces, the ``ltcd-*`` / ``ltcm-*`` veths and
    ``ltc-*`` bridges, the cgroup directories, the user ``ltsandbox``, its processes and
    home, /etc/sudoers.d/loadtower-sandbox and /run/loadtower-cluster."""
    from loadtower.sandbox.host_teardown import leftovers

    return leftovers()
