"""Data set files copied to an agent host over the sandbox's real sshd (SFTP): the
copy is byte for byte, a second upload of the same contents copies nothing, new
contents get a new name; `loadtower cleanup --datasets` removes the copies."""

from __future__ import annotations

import asyncio
import hashlib
import shutil
from pathlib import Path

import pytest

from loadtower.fleet.dataset_upload import ship_datasets, uploads
from loadtower.fleet.ssh_pool import HostPool
from loadtower.scenarios.loader import load_inventory
from tests.reliability.helpers import cli

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]


def test_data_sets_reach_the_agent_once(sandbox: dict, tmp_path: Path) -> None:
    inventory, _text = load_inventory(Path(sandbox["dir"]) / "inventory.toml")
    local = tmp_path / "people.csv"
    local.write_bytes(b"id,name\n" + b"".join(b"%d,n%d\n" % (i, i) for i in range(50_000)))
    spec = {"model": {"datasets": {"people": {"file": str(local), "format": "csv",
                                              "columns": {"id": "bigint"}}}}}
    base = tmp_path / "agent-home" / ".loadtower"  # the sandbox's agent host is this machine
    events: list[tuple[str, dict]] = []

    async def go() -> tuple[dict, dict, dict]:
        pool = HostPool(inventory)
        try:
            await pool.connect_all()
            first = await ship_datasets(pool, "agent1", str(base), uploads(spec),  # type: ignore[arg-type]
                                        lambda m, d: events.append((m, d)))
            again = await ship_datasets(pool, "agent1", str(base), uploads(spec),  # type: ignore[arg-type]
                                        lambda m, d: events.append((m, d)))
            local.write_bytes(local.read_bytes() + b"50000,n50000\n")
            changed = await ship_datasets(pool, "agent1", str(base), uploads(spec))  # type: ignore[arg-type]
            return first, again, changed
        finally:
            await pool.close()

    try:
        first, again, changed = asyncio.run(go())
        remote = Path(first["people"])
        assert remote.parent == (base / "datasets").resolve() and remote.name.endswith(
            "-people.csv")
        assert again == first
        assert [d["files"] for _m, d in events] == [1, 0], events
        assert "were there already" in events[1][0]
        copies = sorted(p.name for p in remote.parent.iterdir())
        assert copies == sorted([remote.name, Path(changed["people"]).name])  # no .part left
        assert hashlib.sha256(Path(changed["people"]).read_bytes()).hexdigest() == \
            hashlib.sha256(local.read_bytes()).hexdigest()
    finally:
        shutil.rmtree(tmp_path / "agent-home", ignore_errors=True)


def test_cleanup_removes_the_copies_a_run_left_on_the_agent_host(sandbox: dict,
                                                                  tmp_path: Path) -> None:
    """`loadtower cleanup --datasets` over the sandbox's sshd: a dry run lists the copies
    in the agent host's bootstrap_dir and keeps them, a real one removes them. The agent
    host gets a bootstrap_dir of this test's own (a copy of the sandbox's inventory)."""
    base = tmp_path / "agent-home" / ".loadtower"
    text = (Path(sandbox["dir"]) / "inventory.toml").read_text()
    assert "[hosts.agent1]\n" in text
    inventory_path = tmp_path / "inventory.toml"
    inventory_path.write_text(text.replace(
        "[hosts.agent1]\n", f'[hosts.agent1]\nbootstrap_dir = "{base}"\n', 1))
    inventory, _text = load_inventory(inventory_path)
    assert str(inventory.hosts["agent1"].bootstrap_dir) == str(base)
    local = tmp_path / "cities.csv"
    local.write_bytes(b"id,city\n" + b"".join(b"%d,c%d\n" % (i, i) for i in range(1000)))
    spec = {"model": {"datasets": {"cities": {"file": str(local), "format": "csv",
                                              "columns": {"id": "bigint"}}}}}

    async def ship() -> dict:
        pool = HostPool(inventory)
        try:
            await pool.connect_all()
            return await ship_datasets(pool, "agent1", str(base), uploads(spec))  # type: ignore[arg-type]
        finally:
            await pool.close()

    try:
        remote = Path(asyncio.run(ship())["cities"])
        assert remote.is_file() and remote.parent == (base / "datasets").resolve()
        dry = cli("cleanup", "--inventory", inventory_path, "--datasets", "--dry-run")
        assert dry.returncode == 0, dry.stdout + dry.stderr
        assert f"would remove 1 data set file(s), 0.0 MB, in {base}/datasets" in dry.stdout
        assert remote.is_file()
        done = cli("cleanup", "--inventory", inventory_path, "--datasets")
        assert done.returncode == 0, done.stdout + done.stderr
        assert f"removed 1 data set file(s), 0.0 MB, in {base}/datasets" in done.stdout
        assert not (base / "datasets").exists() and base.is_dir()
    finally:
        shutil.rmtree(tmp_path / "agent-home", ignore_errors=True)


def test_a_private_data_set_stays_private_on_the_agent(sandbox: dict, tmp_path: Path) -> None:
    """Issue 26 case 2: a 0600 data set is a 0600 copy in a 0700 folder (it was 0644);
    a copy an older loadtower left world-readable is set too."""
    import stat

    inventory, _text = load_inventory(Path(sandbox["dir"]) / "inventory.toml")
    local = tmp_path / "private.csv"
    local.write_bytes(b"id,name\n1,ann\n")
    local.chmod(0o600)
    shared = tmp_path / "shared.csv"
    shared.write_bytes(b"id,name\n2,bob\n")
    shared.chmod(0o644)
    spec = {"model": {"datasets": {
        name: {"file": str(path), "format": "csv", "columns": {"id": "bigint"}}
        for name, path in (("private", local), ("shared", shared))}}}
    base = tmp_path / "agent-home" / ".loadtower"

    async def ship() -> dict:
        pool = HostPool(inventory)
        try:
            await pool.connect_all()
            return await ship_datasets(pool, "agent1", str(base), uploads(spec))  # type: ignore[arg-type]
        finally:
            await pool.close()

    try:
        (base / "datasets").mkdir(parents=True, mode=0o755)
        got = asyncio.run(ship())
        mode = {name: stat.S_IMODE(Path(path).stat().st_mode) for name, path in got.items()}
        assert mode == {"private": 0o600, "shared": 0o644}
        assert stat.S_IMODE((base / "datasets").stat().st_mode) == 0o700
        Path(got["private"]).chmod(0o644)  # as an older loadtower left it
        asyncio.run(ship())
        assert stat.S_IMODE(Path(got["private"]).stat().st_mode) == 0o600
    finally:
        shutil.rmtree(tmp_path / "agent-home", ignore_errors=True)
