"""HostPool and NodeMetricsSampler against the sandbox's real sshd, Prometheus and /proc."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest

from loadtower.errors import LoadtowerError
from loadtower.fleet.node_metrics import NodeMetricsSampler
from loadtower.fleet.ssh_pool import HostPool
from loadtower.scenarios.loader import load_inventory
from loadtower.scenarios.models import Inventory
from tests.sandbox.engine_hosts import engine_hosts

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


def inventory(sandbox: dict, **ssh: object) -> Inventory:
    inv, _text = load_inventory(Path(sandbox["dir"]) / "inventory.toml")
    if ssh:
        inv = inv.model_copy(update={"ssh": inv.ssh.model_copy(update=ssh)})
    return inv


def test_run_and_declared_action(sandbox: dict) -> None:
    async def go() -> tuple:
        pool = HostPool(inventory(sandbox))
        try:
            await pool.connect_all()
            echo = await pool.run("db1", "echo hello; echo oops >&2; exit 3", timeout=15)
            status = await pool.run_action(
                "db1", "status", address="x", host="db1", keyspace="k", table=""
            )
            with pytest.raises(LoadtowerError, match="has no 'drop_everything' action"):
                await pool.run_action("db1", "drop_everything")  # type: ignore[arg-type]
            return echo, status
        finally:
            await pool.close()

    echo, status = asyncio.run(go())
    assert echo == (3, "hello\n", "oops\n")
    assert status[0] == 0 and "UN" in status[1]


def test_stream_forwards_lines_and_terminate_kills_the_process_group(sandbox: dict) -> None:
    marker = "31337.25"

    async def go() -> tuple[list[str], list[str], int | None]:
        pool = HostPool(inventory(sandbox))
        out: list[str] = []
        err: list[str] = []
        try:
            proc = await pool.stream(
                "agent1",
                f"echo one; echo two >&2; sleep {marker} & sleep {marker}",
                out.append,
                err.append,
            )
            for _ in range(50):
                if out and err:
                    break
                await asyncio.sleep(0.1)
            assert proc.pid is not None
            await proc.terminate()
            code = await asyncio.wait_for(proc.wait(), 15)
            return out, err, code
        finally:
            await pool.close()

    out, err, code = asyncio.run(go())
    assert out == ["one"] and err == ["two"]
    assert code is not None
    left = subprocess.run(["pgrep", "-f", f"sleep {marker}"], capture_output=True, text=True)
    assert left.stdout.strip() == "", "a streamed process outlived terminate()"


def test_unknown_host_key_refused_unless_accept_new(sandbox: dict, tmp_path: Path) -> None:
    empty = tmp_path / "known_hosts"
    empty.write_text("")

    async def connect(accept: bool) -> None:
        pool = HostPool(inventory(sandbox, known_hosts=str(empty)), accept_new_host_keys=accept)
        try:
            await pool.run("db1", "true", timeout=15)
        finally:
            await pool.close()

    with pytest.raises(LoadtowerError, match="unknown SSH host key") as refused:
        asyncio.run(connect(False))
    assert "--accept-new-host-keys" in str(refused.value)
    asyncio.run(connect(True))
    assert "ssh-ed25519" in empty.read_text() or "ssh-" in empty.read_text()
    asyncio.run(connect(False))  # now known


def test_changed_host_key_always_refused(sandbox: dict, tmp_path: Path) -> None:
    real = Path(sandbox["ssh"]["known_hosts"]).read_text().split()
    other = tmp_path / "other_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other)], check=True)
    forged = tmp_path / "known_hosts"
    forged.write_text(f"{real[0]} {(other.with_suffix('.pub')).read_text().strip()}\n")

    async def connect() -> None:
        pool = HostPool(inventory(sandbox, known_hosts=str(forged)), accept_new_host_keys=True)
        try:
            await pool.run("db1", "true", timeout=15)
        finally:
            await pool.close()

    with pytest.raises(LoadtowerError, match="host key CHANGED"):
        asyncio.run(connect())


def test_reconnects_after_the_connection_drops(sandbox: dict) -> None:
    states: list[tuple[str, str]] = []

    async def go() -> tuple[int, str, str]:
        pool = HostPool(inventory(sandbox), on_state=lambda h, s, d: states.append((h, s)))
        try:
            await pool.run("db1", "true", timeout=15)
            for conn in pool.conns.values():
                conn.abort()
            await asyncio.sleep(0.2)
            return await pool.run("db1", "echo back", timeout=15)
        finally:
            await pool.close()

    assert asyncio.run(go()) == (0, "back\n", "")
    assert ("db1", "reconnected") in states


async def _samples(inv: Inventory, count: int) -> tuple[list, list]:
    pool = HostPool(inv)
    warnings: list = []
    sampler = NodeMetricsSampler(inv, pool, on_warning=lambda h, m: warnings.append((h, m)))
    got = []
    try:
        async with asyncio.timeout(30):
            async for sample in sampler.samples():
                got.append(sample)
                if len(got) >= count:
                    break
    finally:
        await sampler.close()
        await pool.close()
    return got, warnings


@pytest.mark.parametrize("source", ["prometheus", "proc"])
def test_node_metrics_one_sample_per_second(sandbox: dict, source: str) -> None:
    inv = inventory(sandbox)
    # db1 alone (the sandbox may also run engine hosts: ch1, mongo1, ...)
    hosts = {n: h for n, h in inv.hosts.items() if n not in engine_hosts()}
    inv = inv.model_copy(update={"hosts": hosts})
    if source == "proc":
        inv = inv.model_copy(
            update={"metrics": inv.metrics.model_copy(update={"prometheus_url": None})}
        )
    samples, warnings = asyncio.run(_samples(inv, 4))
    assert {s.host for s in samples} == {"db1"}
    stamps = [s.ts for s in samples]
    assert stamps == sorted(set(stamps)), f"one sample per second, got {stamps}"
    assert stamps[-1] - stamps[0] <= 5
    for s in samples:
        assert 0 <= s.cpu_pct <= 100
        assert 0 < s.mem_used_bytes < s.mem_total_bytes
        assert s.disk_read_bps >= 0 and s.disk_write_bps >= 0
    # Cassandra, Prometheus and sshd all talk over loopback: traffic is visible
    assert any(s.net_rx_bps > 0 for s in samples)
    assert warnings == []
