"""Node metrics of hosts sharing one kernel: a host's cgroup (CPU time, memory) and one
network interface, parsed from the output of proc_command()."""

from __future__ import annotations

import pytest

from loadtower.fleet.proc_stats import (
    CGROUP_MARK,
    PROC_CMD,
    parse_cgroup,
    parse_proc,
    proc_command,
    rates,
)
from tests.fleet.test_node_metrics_units import PROC_A, PROC_B

NET = """Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo: 1000 10 0 0 0 0 0 0 1000 10 0 0 0 0 0 0
 data0: 4000 40 0 0 0 0 0 0 9000 90 0 0 0 0 0 0
 mgmt0: 300 3 0 0 0 0 0 0 500 5 0 0 0 0 0 0
"""
GIB = 1 << 30


def with_cgroup(proc: str, cpu_ns: int, used: int, limit: int) -> str:
    return f"{proc}{CGROUP_MARK}\n{cpu_ns}\n{used}\n{limit}\n"


def test_the_command_reads_the_cgroup_files_only_when_asked() -> None:
    assert proc_command(None) == PROC_CMD
    command = proc_command("loadtower/db1")
    assert command.startswith(PROC_CMD) and f"echo '{CGROUP_MARK}'" in command
    for path in ("/sys/fs/cgroup/cpuacct/loadtower/db1/cpuacct.usage",
                 "/sys/fs/cgroup/memory/loadtower/db1/memory.usage_in_bytes",
                 "/sys/fs/cgroup/memory/loadtower/db1/memory.limit_in_bytes"):
        assert path in command


def test_cgroup_cpu_is_a_share_of_all_cores_and_ram_is_the_cgroups() -> None:
    # /proc/stat: 200 jiffies of all cores pass (2 s); the cgroup used 0.5 s of CPU
    a = parse_proc(with_cgroup(PROC_A, 1_000_000_000, GIB, 4 * GIB), 10.2)
    b = parse_proc(with_cgroup(PROC_B, 1_500_000_000, 2 * GIB, 4 * GIB), 12.2)
    assert (b.cgroup_cpu_ns, b.cgroup_mem, b.cgroup_mem_limit) == (1_500_000_000, 2 * GIB, 4 * GIB)
    r = rates(a, b)
    assert r["source"] == "cgroup"
    assert r["cpu_pct"] == 25.0  # 0.5 s of the 2 s that all cores had
    assert (r["mem_used_bytes"], r["mem_total_bytes"]) == (2 * GIB, 4 * GIB)
    # the host's own figures for the same readings differ
    host = rates(parse_proc(PROC_A, 10.2), parse_proc(PROC_B, 12.2))
    assert host["source"] == "host" and host["cpu_pct"] == 50.0


def test_an_unlimited_cgroup_has_the_machines_ram_as_total() -> None:
    no_limit = 9223372036854771712  # memory.limit_in_bytes when none is set
    a = parse_proc(with_cgroup(PROC_A, 0, GIB, no_limit), 1.0)
    b = parse_proc(with_cgroup(PROC_B, 0, GIB, no_limit), 2.0)
    r = rates(a, b)
    assert r["mem_total_bytes"] == 16000000 * 1024 and r["cpu_pct"] == 0.0


def test_a_reading_without_the_cgroup_is_the_hosts() -> None:
    a = parse_proc(PROC_A, 1.0)
    b = parse_proc(with_cgroup(PROC_B, 5, 1, 2), 2.0)
    assert rates(a, b)["source"] == "host"


@pytest.mark.parametrize("text", ["", "12\n34\n", "12\nx\n56\n", "1\n2\n3\n4\n"])
def test_bad_cgroup_figures_are_an_error(text: str) -> None:
    with pytest.raises(ValueError, match="cgroup figures"):
        parse_cgroup(text)


def test_net_device_counts_only_that_interface() -> None:
    proc = PROC_A.split("Inter-|")[0] + NET + "#blocks\nsda\n"
    assert (parse_proc(proc, 1.0).net_rx, parse_proc(proc, 1.0).net_tx) == (4300, 9500)
    only = parse_proc(proc, 1.0, net_device="data0")
    assert (only.net_rx, only.net_tx) == (4000, 9000)
    assert parse_proc(proc, 1.0, include_loopback=False, net_device="lo").net_rx == 1000


def test_a_missing_net_device_is_an_error_naming_it() -> None:
    with pytest.raises(ValueError, match="no network device data9 in /proc/net/dev"):
        parse_proc(PROC_A, 1.0, net_device="data9")
