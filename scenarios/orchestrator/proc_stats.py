"""Node metrics from /proc, for hosts without node_exporter: parse one reading, and
turn two successive readings into per-second rates."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

SECTOR = 512
# one command, one round trip: CPU, memory, disks (whole disks only), network
PROC_CMD = "cat /proc/stat /proc/meminfo /proc/diskstats /proc/net/dev; echo '#blocks'; ls /sys/block"
SKIP_DISKS = ("loop", "ram", "zram", "sr", "fd", "dm-")


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


def parse_proc(text: str, ts: float, include_loopback: bool = False) -> ProcReading:
    """Parse the output of PROC_CMD. Raises ValueError if the CPU line is missing."""
    body, _, blocks = text.partition("#blocks")
    whole_disks = {b for b in blocks.split() if not b.startswith(SKIP_DISKS)}
    reading = ProcReading(ts=ts, disks=sorted(whole_disks))
    seen_cpu = False
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
            if device == "lo" and not include_loopback:
                continue
            reading.net_rx += int(counters[0])
            reading.net_tx += int(counters[8])
    if not seen_cpu:
        raise ValueError("no 'cpu' line in /proc/stat output")
    return reading


def rates(a: ProcReading, b: ProcReading) -> dict[str, Any]:
    """Per-second figures between readings a and b (b later), stamped at b's second."""
    span = max(b.ts - a.ts, 1e-3)
    busy_total = b.cpu_total - a.cpu_total
    idle = b.cpu_idle - a.cpu_idle
    cpu = 100.0 * (1.0 - idle / busy_total) if busy_total > 0 else 0.0

    def per_s(x: int, y: int) -> float:
        return round(max(0, y - x) / span, 1)

    return {
        "ts": float(int(b.ts)),
        "cpu_pct": round(max(0.0, min(100.0, cpu)), 2),
        "mem_used_bytes": b.mem_total - b.mem_available,
        "mem_total_bytes": b.mem_total,
        "disk_read_bps": per_s(a.disk_read, b.disk_read),
        "disk_write_bps": per_s(a.disk_write, b.disk_write),
        "net_rx_bps": per_s(a.net_rx, b.net_rx),
        "net_tx_bps": per_s(a.net_tx, b.net_tx),
    }
