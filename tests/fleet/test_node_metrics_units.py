"""Parsing /proc and building PromQL for node metrics."""

from __future__ import annotations

from loadtower.fleet.node_metrics import is_loopback, prometheus_queries
from loadtower.fleet.proc_stats import parse_proc, rates

PROC_A = """cpu  100 0 100 700 100 0 0 0 0 0
cpu0 50 0 50 350 50 0 0 0 0 0
MemTotal:       16000000 kB
MemAvailable:   12000000 kB
   8       0 sda 10 0 2000 0 5 0 4000 0 0 0 0 0 0 0 0 0 0
   8       1 sda1 10 0 2000 0 5 0 4000 0 0 0 0 0 0 0 0 0 0
   7       0 loop0 1 0 999 0 1 0 999 0 0 0 0 0 0 0 0 0 0
Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo: 1000 10 0 0 0 0 0 0 1000 10 0 0 0 0 0 0
  eth0: 5000 50 0 0 0 0 0 0 7000 70 0 0 0 0 0 0
#blocks
loop0 sda
"""

PROC_B = (
    PROC_A.replace("cpu  100 0 100 700 100", "cpu  150 0 150 800 100")
    .replace("sda 10 0 2000 0 5 0 4000", "sda 10 0 4000 0 5 0 8000")
    .replace("eth0: 5000", "eth0: 6000")
    .replace("lo: 1000", "lo: 3000")
)


def test_parse_counts_whole_disks_only_and_skips_lo() -> None:
    r = parse_proc(PROC_A, 10.0)
    assert (r.cpu_total, r.cpu_idle) == (1000, 800)
    assert (r.mem_total, r.mem_available) == (16000000 * 1024, 12000000 * 1024)
    assert (r.disk_read, r.disk_write) == (2000 * 512, 4000 * 512)
    assert (r.net_rx, r.net_tx) == (5000, 7000)
    assert parse_proc(PROC_A, 10.0, include_loopback=True).net_rx == 6000


def test_rates_between_two_readings() -> None:
    a, b = parse_proc(PROC_A, 10.2), parse_proc(PROC_B, 12.2)
    r = rates(a, b)
    assert r["ts"] == 12.0
    assert r["cpu_pct"] == 50.0  # 100 busy of 200 jiffies
    assert r["disk_read_bps"] == 2000 * 512 / 2
    assert r["disk_write_bps"] == 4000 * 512 / 2
    assert r["net_rx_bps"] == 500.0 and r["net_tx_bps"] == 0.0
    assert r["mem_used_bytes"] == 4000000 * 1024


def test_missing_cpu_line_is_an_error() -> None:
    import pytest

    with pytest.raises(ValueError, match="cpu"):
        parse_proc("MemTotal: 1 kB\n", 0.0)


def test_queries_escape_instances_and_keep_lo_only_for_loopback_hosts() -> None:
    q = prometheus_queries(["10.0.0.1:9100", "10.0.0.2:9100"], loopback=False)
    assert 'instance=~"10\\\\.0\\\\.0\\\\.1:9100|10\\\\.0\\\\.0\\\\.2:9100"' in q["cpu_pct"]
    assert 'device!="lo"' in q["net_rx_bps"]
    assert 'device!="lo"' not in prometheus_queries(["127.0.0.1:9100"], True)["net_rx_bps"]
    assert is_loopback("127.0.3.1") and not is_loopback("10.0.0.1")
