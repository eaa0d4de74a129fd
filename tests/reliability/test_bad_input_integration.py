"""Bad input against the real sandbox: wrong Cassandra credentials, a Cassandra that is
down when the run starts, an SSH key the host does not accept, a store whose disk fills
up during the run. Each run ends `failed` with the reason in the store (or, when the
store's disk is full, `interrupted` at the next start) and one line on stderr (exit 2),
never a traceback."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import asyncssh
import pytest

from loadtower.store import StoreReader
from tests.reliability.helpers import cli, fill, one_error_line, tmpfs

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

SHORT = ["--set", "dataset.records=1000", "--set", "phases[1].duration=5s"]


def _variant(sandbox: dict, tmp_path: Path, pattern: str, replacement: str) -> Path:
    text = (Path(sandbox["dir"]) / "inventory.toml").read_text()
    changed = re.sub(pattern, replacement, text, flags=re.MULTILINE)
    assert changed != text, pattern
    path = tmp_path / "inventory.toml"
    path.write_text(changed)
    return path


def _failed_run(inventory: Path, store: Path) -> tuple[str, dict]:
    done = cli("run", "quickstart", "--inventory", inventory, "--headless", "--store", store,
               *SHORT, timeout=400)  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    line = one_error_line(done)
    runs = StoreReader(store).runs()
    assert len(runs) == 1 and runs[0]["status"] == "failed"
    assert runs[0]["reason"] in line
    return line, runs[0]


def test_wrong_cassandra_credentials(sandbox: dict, tmp_path: Path) -> None:
    inventory = _variant(sandbox, tmp_path, r"^password_file = .*$", 'password = "not-it-1234"')
    line, _ = _failed_run(inventory, tmp_path / "s.duckdb")
    assert "BadCredentials" in line and "password are incorrect" in line
    assert "not-it-1234" not in line


def test_an_ssh_key_the_host_refuses(sandbox: dict, tmp_path: Path) -> None:
    key = tmp_path / "other_key"
    asyncssh.generate_private_key("ssh-ed25519").write_private_key(str(key))
    inventory = _variant(sandbox, tmp_path, r'^key = ".*"$', f'key = "{key}"')
    line, _ = _failed_run(inventory, tmp_path / "s.duckdb")
    assert re.search(r"host (db1|agent1) \(127\.0\.0\.1:\d+\): SSH login as root refused", line)


def _node(sandbox: dict, action: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "loadtower", "sandbox", "node", action, "--dir", sandbox["dir"]]
    return subprocess.run(argv + ["1"], capture_output=True, text=True, timeout=300)


def test_cassandra_down_when_the_run_starts(sandbox: dict, tmp_path: Path) -> None:
    stopped = _node(sandbox, "stop")
    assert stopped.returncode == 0, stopped.stderr
    try:
        line, run = _failed_run(Path(sandbox["dir"]) / "inventory.toml", tmp_path / "s.duckdb")
        assert "connection refused" in line.lower() or "no hosts available" in line.lower()
        assert "1-load" in run["reason"]
    finally:
        started = _node(sandbox, "start")
        assert started.returncode == 0, started.stderr


def test_the_store_disk_fills_up_during_a_run(sandbox: dict, tmp_path: Path) -> None:
    inventory = Path(sandbox["dir"]) / "inventory.toml"
    with tmpfs(tmp_path / "disk", "size=24m") as disk:
        store = disk / "s.duckdb"
        argv = [sys.executable, "-m", "loadtower", "run", "quickstart", "--inventory"]
        argv += [str(inventory), "--headless", "--store", str(store), "--set"]
        argv += ["dataset.records=1000", "--set", "phases[1].duration=25s"]
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        filler = None
        try:
            deadline = time.monotonic() + 300
            while time.monotonic() < deadline and proc.poll() is None:  # the run phase began
                time.sleep(0.5)
                try:
                    _, rows = StoreReader(store, wait_s=5).sql(
                        "SELECT count(*) FROM op_seconds WHERE phase = 'ycsb-a'"
                    )
                except Exception:  # noqa: BLE001 - the writer may be creating the file
                    continue
                if rows[0][0] >= 6:
                    break
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            filler = fill(disk)
            out, err = proc.communicate(timeout=300)  # full until the run ends
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=30)
        done = subprocess.CompletedProcess(argv, proc.returncode, out, err)
        assert done.returncode == 2
        line = one_error_line(done)
        assert "cannot write store" in line and "No space left on device" in line
        assert "loadtower store: write failed, will retry" in done.stdout
        reader = StoreReader(store)  # a valid store with what it held before
        run = reader.runs()[0]
        assert run["status"] == "running"
        _, rows = reader.sql("SELECT count(*) FROM op_seconds WHERE phase = 'ycsb-a'")
        assert rows[0][0] >= 6
        assert filler is not None
        filler.unlink()
        named = cli("runs", "--store", store, "--json")  # a read names it, never writes
        assert named.returncode == 0 and '"running"' in named.stdout
        assert "loadtower repair" in named.stderr
        assert cli("repair", "--store", store).returncode == 0  # the explicit write
        again = cli("runs", "--store", store, "--json")
        assert again.returncode == 0 and '"interrupted"' in again.stdout
