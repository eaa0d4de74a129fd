"""Per-host node metrics on one kernel: two "hosts" reached through the sandbox's real
sshd, each with a cgroup the test makes (cgroup v1 cpuacct and memory), one with a busy
process in it: the busy one's CPU is higher. A host whose cgroup is missing is a warning
naming the file. The cgroups and processes go in `finally`."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from loadtower.fleet.node_metrics import NodeMetricsSampler, NodeSample
from loadtower.fleet.ssh_pool import HostPool
from loadtower.scenarios.models import Inventory
from tests.fleet.test_ssh_pool_integration import inventory

pytestmark = [pytest.mark.integration, pytest.mark.alone,  # a cgroup's measured CPU
              pytest.mark.timeout(120)]

ROOT = Path("/sys/fs/cgroup")
CONTROLLERS = ("cpuacct", "memory")
SAMPLES_PER_HOST = 3


def _kill(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)


@pytest.fixture
def cgroups() -> Iterator[str]:
    """PARENT/busy (a process spinning on one core) and PARENT/idle (a sleeping one)."""
    if not all((ROOT / c).is_dir() for c in CONTROLLERS) or os.geteuid() != 0:
        pytest.skip("needs root and the cgroup v1 cpuacct and memory controllers")
    parent = f"lt-metrics-test-{os.getpid()}"
    made: list[Path] = []
    procs: list[subprocess.Popen] = []
    try:
        for controller in CONTROLLERS:
            for path in (ROOT / controller / parent, ROOT / controller / parent / "busy",
                         ROOT / controller / parent / "idle"):
                path.mkdir()
                made.append(path)
        for name, code in (("busy", "while True: pass"), ("idle", "import time; time.sleep(600)")):
            proc = subprocess.Popen([sys.executable, "-c", code])
            procs.append(proc)
            for controller in CONTROLLERS:
                (ROOT / controller / parent / name / "cgroup.procs").write_text(f"{proc.pid}\n")
        yield parent
    finally:
        for proc in procs:
            _kill(proc)
        for path in reversed(made):  # children before their parent
            path.rmdir()


async def _collect(inv: Inventory, hosts: list[str]) -> tuple[list[NodeSample], list, list]:
    pool = HostPool(inv)
    warnings: list = []
    notes: list = []
    sampler = NodeMetricsSampler(inv, pool, hosts=lambda: hosts,
                                 on_warning=lambda h, m: warnings.append((h, m)),
                                 on_note=lambda h, m: notes.append((h, m)))
    got: list[NodeSample] = []
    try:
        async with asyncio.timeout(40):
            async for sample in sampler.samples():
                got.append(sample)
                counts = [sum(1 for s in got if s.host == h) for h in ("busy", "idle")]
                if min(counts) >= SAMPLES_PER_HOST and warnings:
                    break
    finally:
        await sampler.close()
        await pool.close()
    return got, warnings, notes


def test_a_busy_cgroup_shows_more_cpu_than_an_idle_one(sandbox: dict, cgroups: str) -> None:
    inv = inventory(sandbox)
    db1 = inv.hosts["db1"]
    hosts = {
        "busy": db1.model_copy(update={"cgroup": f"{cgroups}/busy", "net_device": "lo"}),
        "idle": db1.model_copy(update={"cgroup": f"{cgroups}/idle", "net_device": "lo"}),
        "gone": db1.model_copy(update={"cgroup": f"{cgroups}/missing"}),
    }
    # Prometheus stays configured: a host with a cgroup is still read over SSH
    assert inv.metrics.prometheus_url and db1.node_exporter
    inv = inv.model_copy(update={"hosts": hosts})
    samples, warnings, notes = asyncio.run(_collect(inv, list(hosts)))
    busy = [s for s in samples if s.host == "busy"]
    idle = [s for s in samples if s.host == "idle"]
    print("cpu % busy:", [s.cpu_pct for s in busy], "idle:", [s.cpu_pct for s in idle],
          "MB busy:", [s.mem_used_bytes >> 20 for s in busy])  # the figures, with -s
    assert all(s.source == "cgroup" for s in busy + idle)
    assert min(s.cpu_pct for s in busy) > max(s.cpu_pct for s in idle), (busy, idle)
    mem_total = int(Path("/proc/meminfo").read_text().split()[1]) * 1024
    assert all(0 < s.mem_used_bytes <= s.mem_total_bytes <= mem_total for s in busy)
    assert not [s for s in samples if s.host == "gone"]
    assert [h for h, _m in warnings] == ["gone"]
    assert f"{cgroups}/missing" in warnings[0][1]
    assert ("busy", f"node metrics of busy over SSH: CPU and RAM of cgroup {cgroups}/busy, "
            "the machine's disks, network of lo only (Prometheus is configured: the "
            "cgroup's figures win)") in notes
