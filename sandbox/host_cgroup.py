"""One cgroup per cluster host, ``loadtower/NAME``, in the cgroup v1 cpu, cpuacct and
memory hierarchies: the host's CPU and memory, although every host shares one kernel.

The hierarchies are found in /proc/mounts: on this machine kind cpu and cpuacct are
mounted apart (/sys/fs/cgroup/cpu, /sys/fs/cgroup/cpuacct), elsewhere they share one
``cpu,cpuacct`` mount; either way the host's directory in each is
``<mount>/loadtower/NAME``. Every process of a host starts through ``wrap``: a shell
writes its own pid into each ``cgroup.procs`` and then execs ``nsenter --net=/run/netns/ltc-NAME
argv``, so the process and all it starts (sshd's sessions, the agents under them) are
in the host's namespace and cgroups.
"""

from __future__ import annotations

import os
import shlex
import signal
import time
from pathlib import Path

from loadtower.errors import LoadtowerError
from loadtower.sandbox import netns

CONTROLLERS = ("cpu", "cpuacct", "memory")
PARENT = "loadtower"
MOUNTS = Path("/proc/mounts")


def mounts(text: str | None = None) -> dict[str, Path]:
    """Controller -> mount point of its v1 hierarchy, from /proc/mounts (or ``text``)."""
    text = MOUNTS.read_text() if text is None else text
    found: dict[str, Path] = {}
    for line in text.splitlines():
        fields = line.split()
        if len(fields) < 4 or fields[2] != "cgroup":
            continue
        for option in fields[3].split(","):
            if option in CONTROLLERS and option not in found:
                found[option] = Path(fields[1])
    missing = [c for c in CONTROLLERS if c not in found]
    if missing:
        raise LoadtowerError(
            f"no cgroup v1 hierarchy for {', '.join(missing)} in /proc/mounts: "
            "the cluster sandbox needs the cpu, cpuacct and memory controllers"
        )
    return found


def parents(text: str | None = None) -> list[Path]:
    """The ``loadtower`` directory in each hierarchy (once when cpu,cpuacct share one)."""
    unique: list[Path] = []
    for mount in mounts(text).values():
        if mount / PARENT not in unique:
            unique.append(mount / PARENT)
    return unique


def directories(name: str, text: str | None = None) -> list[Path]:
    netns.check_name(name)
    return [parent / name for parent in parents(text)]


def controller_dir(name: str, controller: str) -> Path:
    netns.check_name(name)
    return mounts()[controller] / PARENT / name


def create(name: str) -> None:
    """The host's cgroup in every hierarchy. Idempotent."""
    for directory in directories(name):
        directory.mkdir(parents=True, exist_ok=True)


def wrap(name: str, argv: list[str], mounts_text: str | None = None) -> list[str]:
    """An argv that joins the host's cgroups, then runs ``argv`` in its namespace."""
    if not argv:
        raise LoadtowerError(f"nothing to run on cluster host {name!r}")
    joins = "; ".join(f"echo $$ > {shlex.quote(str(d / 'cgroup.procs'))}" for d in directories(name, mounts_text))
    # nsenter, not `ip netns exec`: that one remounts /sys for the namespace, and the
    # cgroup v1 hierarchies under /sys/fs/cgroup vanish for the host's processes (an SSH
    # session could no longer read its own host's cgroup for node metrics)
    nsenter = shlex.quote(netns.tool("nsenter"))
    target = shlex.quote(f"--net=/run/netns/{netns.namespace(name)}")
    script = f'set -e; {joins}; exec {nsenter} {target} "$@"'
    return ["/bin/sh", "-c", script, "sh", *argv]


def usage(name: str) -> tuple[int, int]:
    """(CPU time in ns from cpuacct.usage, memory bytes from memory.usage_in_bytes)."""
    cpu = controller_dir(name, "cpuacct") / "cpuacct.usage"
    memory = controller_dir(name, "memory") / "memory.usage_in_bytes"
    try:
        return int(cpu.read_text()), int(memory.read_text())
    except OSError as exc:
        raise LoadtowerError(f"cluster host {name!r} has no cgroup ({exc.filename})") from exc


def pids_in(directory: Path) -> set[int]:
    try:
        return {int(pid) for pid in (directory / "cgroup.procs").read_text().split()}
    except OSError:
        return set()


def pids(name: str) -> list[int]:
    """Every process in the host's cgroups (any hierarchy)."""
    found: set[int] = set()
    for directory in directories(name):
        found |= pids_in(directory)
    return sorted(found)


def alive(pid: int) -> bool:
    """Running and not a zombie (a zombie waits only for its parent to reap it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def kill_all(found: set[int], timeout: float) -> None:
    """SIGCONT (a paused process cannot exit), SIGTERM, SIGKILL after ``timeout``."""
    me = os.getpid()
    found = {pid for pid in found if pid != me}
    for sig in (signal.SIGCONT, signal.SIGTERM):
        for pid in found:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
    deadline = time.monotonic() + timeout
    while any(alive(p) for p in found) and time.monotonic() < deadline:
        time.sleep(0.1)
    for pid in found:
        if alive(pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    deadline = time.monotonic() + 10.0
    while any(alive(p) for p in found) and time.monotonic() < deadline:
        time.sleep(0.05)


def rmdir(directory: Path, timeout: float) -> bool:
    """Remove an emptied cgroup directory (EBUSY while its last tasks exit); True if
    there was one."""
    if not directory.exists():
        return False
    deadline = time.monotonic() + timeout
    while True:
        try:
            directory.rmdir()
            return True
        except FileNotFoundError:
            return True
        except OSError as exc:
            if time.monotonic() >= deadline:
                raise LoadtowerError(f"cannot remove cgroup {directory}: {exc.strerror}") from exc
            kill_all(pids_in(directory), 2.0)
            time.sleep(0.1)


def remove(name: str, timeout: float = 20.0) -> None:
    """Kill what is left in the host's cgroups, then remove them."""
    kill_all(set(pids(name)), timeout)
    for directory in directories(name):
        rmdir(directory, timeout)
