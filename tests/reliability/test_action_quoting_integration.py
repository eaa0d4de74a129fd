"""A hostile placeholder value through the real run_action over the sandbox's real sshd:
the remote shell gets it as one argument and creates no file."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from loadtower.fleet.ssh_pool import HostPool
from loadtower.scenarios.loader import load_inventory

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]


def test_a_hostile_keyspace_is_one_argument_over_ssh(sandbox: dict, tmp_path: Path) -> None:
    inv, _text = load_inventory(Path(sandbox["dir"]) / "inventory.toml")
    db1 = inv.hosts["db1"]
    actions = {**db1.actions, "status": "printf '%s|' {keyspace} {table} {host}"}
    hosts = {**inv.hosts, "db1": db1.model_copy(update={"actions": actions})}
    inv = inv.model_copy(update={"hosts": hosts})
    marker = tmp_path / "PWNED"  # sshd runs on this machine: the file would appear here
    hostile = f"ks; touch {marker} #$(touch {marker})`touch {marker}`"

    async def go() -> tuple[int, str, str]:
        pool = HostPool(inv)
        try:
            await pool.connect_all()
            return await pool.run_action("db1", "status", timeout=30, keyspace=hostile,
                                         table="", host="db1", address="127.0.0.1")
        finally:
            await pool.close()

    status, out, err = asyncio.run(go())
    assert status == 0, err
    assert out == f"{hostile}|db1|"
    assert not marker.exists()


def test_a_timed_out_action_does_not_name_its_password(sandbox: dict) -> None:
    from loadtower.fleet.ssh_pool import CommandTimeout

    inv, _text = load_inventory(Path(sandbox["dir"]) / "inventory.toml")
    db1 = inv.hosts["db1"]
    actions = {**db1.actions, "status": "sleep 3; nodetool -u bench -pw Tmo-s3cret-4 status"}
    inv = inv.model_copy(update={"hosts": {**inv.hosts, "db1": db1.model_copy(
        update={"actions": actions})}})

    async def go() -> None:
        pool = HostPool(inv)
        try:
            await pool.connect_all()
            await pool.run_action("db1", "status", timeout=1, keyspace="k", table="",
                                  host="db1", address="127.0.0.1")
        finally:
            await pool.close()

    with pytest.raises(CommandTimeout) as info:
        asyncio.run(go())
    # the remote `sleep 3` (its session closed) ends by itself within seconds
    assert str(info.value) == (
        "host db1: `sleep 3; nodetool -u bench -pw ***** status` did not finish within 1 s"
    )
