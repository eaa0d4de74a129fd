"""Node metrics from /proc, for hosts without node_exporter: parse one reading, and
turn two successive readings into per-second rates.

A host with a ``cgroup`` (cgroup v1, e.g. ``loadtower/db1``) is one of several hosts
sharing a kernel: its CPU is its cgroup's ``cpuacct.usage`` (nanoseconds of CPU time)
as a percentage of all the machine's cores over the same interval (the /proc/stat total
read in the same command), the host-wide figure's unit; its RAM used is the cgroup's
``memory.usage_in_bytes`` and its RAM total ``memory.limit_in_bytes`` capped at
MemTotal. A host with a ``net_device`` counts only that interface of /proc/net/dev (the
SSH session runs in the host's network namespace, so it sees the host's interfaces).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import Any

SECTOR = 512
# one command, one round trip: CPU, memory, disks (whole disks only), network
PROC_CMD = "cat /proc/stat /proc/meminfo /proc/diskstats /proc/net/dev; echo '#blocks'; ls /sys/block"
SKIP_DISKS = ("loop", "ram", "zram", "sr", "fd", "dm-")
CGROUP_ROOT = "/sys/fs/cgroup"  # the v1 controllers: cpuacct/ and memory/ under it
CGROUP_MARK = "#cgroup"
# /proc/stat counts in USER_HZ, which Linux fixes at 100 for user space on every arch
NS_PER_JIFFY = 10_000_000


def proc_command(cgroup: str | None = None) -> str:
    """PROC_CMD, plus the cgroup's CPU time and memory when the host has one (a missing
    cgroup makes cat, and so the command, fail: the sampler warns naming the file)."""
    if not cgroup:
        return PROC_CMD
    cpu = shlex.quote(f"{CGROUP_ROOT}/cpuacct/{cgroup}/cpuacct.usage")
    mem = f"{CGROUP_ROOT}/memory/{cgroup}"
    usage = shlex.quote(f"{mem}/memory.usage_in_bytes")
    limit = shlex.quote(f"{mem}/memory.limit_in_bytes")
    return f"{PROC_CMD}; echo '{CGROUP_MARK}'; cat {cpu} {usage} {limit}"


@dataclass
class ProcReading:
    ts: float
    cpu_total: int = 0
    cpu_idle: int = 0
    mem_total: int = 0
    mem_available: int = 0
    disk_read: int = 0
    disk_write: int = 0
    net_rx: int = 0
    net_tx: int = 0
    disks: list[str] = field(default_factory=list)
    # the cgroup's (None: the host has no cgroup): CPU time (ns), memory used and limit
    cgroup_cpu_ns: int | None = None
    cgroup_mem: int = 0
    cgroup_mem_limit: int = 0


def parse_cgroup(text: str) -> tuple[int, int, int]:
    """cpuacct.usage, memory.usage_in_bytes, memory.limit_in_bytes (one number a line)."""
    values = text.split()
    if len(values) != 3 or not all(v.isdigit() for v in values):
        raise ValueError(f"unexpected cgroup figures {text.strip()[:80]!r}")
    cpu, used, limit = (int(v) for v in values)
    return cpu, used, limit


def parse_proc(
    text: str, ts: float, include_loopback: bool = False, net_device: str | None = None
) -> ProcReading:
    """Parse the output of proc_command(). Raises ValueError if the CPU line is missing,
    or when `net_device` is given and /proc/net/dev has no such interface."""
    text, marked, cgroup = text.partition(CGROUP_MARK)
    body, _, blocks = text.partition("#blocks")
    whole_disks = {b for b in blocks.split() if not b.startswith(SKIP_DISKS)}
    reading = ProcReading(ts=ts, disks=sorted(whole_disks))
    seen_cpu = seen_device = False
    for line in body.splitlines():
        parts = line.split()
        if not parts:
            continue
        if parts[0] == "cpu":
            values = [int(v) for v in parts[1:9]]
            reading.cpu_total = sum(values)
            reading.cpu_idle = values[3] + (values[4] if len(values) > 4 else 0)
            seen_cpu = True
        elif parts[0] == "MemTotal:":
            reading.mem_total = int(parts[1]) * 1024
        elif parts[0] == "MemAvailable:":
            reading.mem_available = int(parts[1]) * 1024
        elif len(parts) >= 14 and parts[2] in whole_disks and parts[0].isdigit():
            reading.disk_read += int(parts[5]) * SECTOR
            reading.disk_write += int(parts[9]) * SECTOR
        elif ":" in parts[0] and len(line.split(":", 1)[1].split()) >= 16:
            device = line.split(":", 1)[0].strip()
            counters = line.split(":", 1)[1].split()
            if net_device is not None:
                if device != net_device:
                    continue
                seen_device = True
            elif device == "lo" and not include_loopback:
                continue
            reading.net_rx += int(counters[0])
            reading.net_tx += int(counters[8])
    if not seen_cpu:
        raise ValueError("no 'cpu' line in /proc/stat output")
    if net_device is not None and not seen_device:
        raise ValueError(f"no network device {net_device} in /proc/net/dev")
    if marked:
        reading.cgroup_cpu_ns, reading.cgroup_mem, reading.cgroup_mem_limit = parse_cgroup(cgroup)
    return reading


def rates(a: ProcReading, b: ProcReading) -> dict[str, Any]:
    """Per-second figures between readings a and b (b later), stamped at b's second."""
    span = max(b.ts - a.ts, 1e-3)
    busy_total = b.cpu_total - a.cpu_total
    idle = b.cpu_idle - a.cpu_idle
    cpu = 100.0 * (1.0 - idle / busy_total) if busy_total > 0 else 0.0
    mem_used, mem_total, source = b.mem_total - b.mem_available, b.mem_total, "host"
    if a.cgroup_cpu_ns is not None and b.cgroup_cpu_ns is not None:
        # the cgroup's CPU time over all cores' time in the same interval
        used_ns = max(0, b.cgroup_cpu_ns - a.cgroup_cpu_ns)
        cpu = 100.0 * used_ns / (busy_total * NS_PER_JIFFY) if busy_total > 0 else 0.0
        mem_total = min(b.cgroup_mem_limit, b.mem_total) if b.mem_total else b.cgroup_mem_limit
        mem_used, source = b.cgroup_mem, "cgroup"

    def per_s(x: int, y: int) -> float:
        return round(max(0, y - x) / span, 1)

    return {
        "ts": float(int(b.ts)),
        "cpu_pct": round(max(0.0, min(100.0, cpu)), 2),
        "mem_used_bytes": mem_used,
        "mem_total_bytes": mem_total,
        "disk_read_bps": per_s(a.disk_read, b.disk_read),
        "disk_write_bps": per_s(a.disk_write, b.disk_write),
        "net_rx_bps": per_s(a.net_rx, b.net_rx),
        "net_tx_bps": per_s(a.net_tx, b.net_tx),
        "source": source,
    }
