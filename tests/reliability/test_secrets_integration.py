"""Nobody let in, nothing leaked, on the sandbox through real SSH.

- A known_hosts file holding a WRONG key for the SSH host: `loadtower run` (also with
  --accept-new-host-keys) and `loadtower cleanup` refuse with one line naming the host.
- Quickstart runs (password from a file, and inline in the inventory with a comment
  repeating it): the sandbox's Cassandra password and the SSH private key appear
  nowhere: not in the store (raw bytes of the file, and every text and blob column read
  back through SQL, since DuckDB may compress strings on disk), the command's
  stdout/stderr, an export as CSV and as Parquet (read back), the HTML report, nor in
  the argv of any process of the run while it runs.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import asyncssh
import duckdb
import pytest

from loadtower.store import StoreReader
from tests.reliability.helpers import cli, one_error_line

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

SHORT = ["--set", "dataset.records=1000", "--set", "phases[1].duration=5s"]


def _inventory(sandbox: dict) -> Path:
    return Path(sandbox["dir"]) / "inventory.toml"


def _ssh_port(inventory: Path) -> int:
    match = re.search(r"^port = (\d+)$", inventory.read_text(), re.MULTILINE)
    assert match, "no [ssh] port in the sandbox inventory"
    return int(match.group(1))


def test_a_wrong_host_key_is_refused_naming_the_host(sandbox: dict, tmp_path: Path) -> None:
    inventory = _inventory(sandbox)
    port = _ssh_port(inventory)
    wrong = asyncssh.generate_private_key("ssh-ed25519").export_public_key().decode().strip()
    known = tmp_path / "known_hosts"
    known.write_text(f"[127.0.0.1]:{port} {wrong}\n")
    text = re.sub(r'^known_hosts = ".*"$', f'known_hosts = "{known}"', inventory.read_text(),
                  flags=re.MULTILINE)  # fmt: skip
    bad = tmp_path / "inventory.toml"
    bad.write_text(text)
    store = tmp_path / "s.duckdb"
    for extra in ([], ["--accept-new-host-keys"]):
        done = cli("run", "quickstart", "--inventory", bad, "--headless", "--store", store, *extra)
        assert done.returncode == 2
        line = one_error_line(done)
        assert f"(127.0.0.1:{port}): the SSH host key CHANGED" in line
        assert re.search(r"host (db1|agent1) \(127\.0\.0\.1", line), line
    assert known.read_text() == f"[127.0.0.1]:{port} {wrong}\n"  # never "fixed" for us
    assert {r["status"] for r in StoreReader(store).runs()} == {"failed"}
    done = cli("cleanup", "--inventory", bad, "--dry-run")
    assert done.returncode == 2 and "Traceback" not in done.stdout + done.stderr
    assert "NOT CHECKED" in done.stdout and "SSH host key CHANGED" in done.stdout


def _private_key_pieces(sandbox: dict) -> list[bytes]:
    """The private key file, and each line of its base64 body."""
    key = Path(sandbox["dir"]) / "ssh" / "id_ed25519"
    raw = key.read_bytes()
    lines = [ln.strip() for ln in raw.splitlines() if ln.strip() and not ln.startswith(b"-----")]
    assert lines
    return [raw, *lines]


def _text_of_every_column(path: Path) -> str:
    """Every VARCHAR, JSON and BLOB value in every table of the store, as one text."""
    con = duckdb.connect(str(path), read_only=True)
    try:
        parts = []
        columns = con.execute(
            "SELECT table_name, column_name FROM duckdb_columns() WHERE NOT internal "
            "AND database_name = current_database() AND data_type IN ('VARCHAR', 'BLOB', 'JSON')"
        ).fetchall()
        assert len(columns) > 10
        for table, column in columns:
            for (value,) in con.execute(f'SELECT "{column}" FROM "{table}"').fetchall():
                if isinstance(value, bytes | bytearray):
                    parts.append(bytes(value).decode("latin-1"))
                elif value is not None:
                    parts.append(str(value))
        return "\n".join(parts)
    finally:
        con.close()


def _argv_of_run(run_id: str) -> list[str]:
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if run_id in cmdline or f"LOADTOWER_RUN={run_id}".encode() in environ:
            out.append(cmdline)
    return out


def _run_watching_argv(argv: list[str], store: Path) -> tuple[subprocess.CompletedProcess, list]:
    """Run `loadtower run`, collecting the argv of the run's processes while it runs."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen: list[str] = []
    run_id = ""
    deadline = time.monotonic() + 400
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.5)
            if not run_id and store.exists():
                try:
                    runs = StoreReader(store, wait_s=5).runs()
                    run_id = next((r["id"] for r in runs if r["status"] == "running"), "")
                except Exception:  # noqa: BLE001 - the writer may be creating the file
                    pass
            if run_id:
                seen += _argv_of_run(run_id)
        out, err = proc.communicate(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
    return subprocess.CompletedProcess(argv, proc.returncode, out, err), seen


def test_no_password_or_key_in_store_logs_exports_report_or_argv(
    sandbox: dict, tmp_path: Path
) -> None:
    inventory = _inventory(sandbox)
    password = (Path(sandbox["dir"]) / "secrets" / "cassandra.password").read_text().strip()
    assert len(password) >= 8
    inline = tmp_path / "inline.toml"
    text = re.sub(r"^password_file = .*$", f'password = "{password}"\n# (it is {password})',
                  inventory.read_text(), flags=re.MULTILINE)  # fmt: skip
    assert password in text
    inline.write_text(text)
    store = tmp_path / "runs.duckdb"
    outputs = []
    argvs: list[str] = []
    for inv in (inventory, inline):
        argv = [sys.executable, "-m", "loadtower", "run", "quickstart", "--inventory", str(inv)]
        done, seen = _run_watching_argv(argv + ["--headless", "--store", str(store), *SHORT], store)
        assert done.returncode == 0, done.stderr
        outputs += [done.stdout, done.stderr]
        argvs += seen
    assert any("agent worker" in a for a in argvs)  # the watch did see the run's processes
    runs = StoreReader(store).runs()
    assert [r["status"] for r in runs] == ["completed", "completed"]

    texts: dict[str, bytes] = {"stdout/stderr": "\n".join(outputs).encode()}
    texts["argv"] = "\n".join(argvs).encode()
    texts["store file"] = store.read_bytes() + (
        Path(f"{store}.wal").read_bytes() if Path(f"{store}.wal").exists() else b""
    )
    texts["store columns"] = _text_of_every_column(store).encode("utf-8", "replace")
    for run in runs:
        for fmt in ("csv", "parquet"):
            out = tmp_path / f"export-{run['id']}-{fmt}"
            done = cli("export", "--store", store, run["id"], "--format", fmt, "--out", out)
            assert done.returncode == 0, done.stderr
            files = sorted(out.iterdir())
            assert files
            for file in files:
                texts[f"{fmt} {file.name}"] = file.read_bytes()
                if fmt == "parquet":  # compressed on disk: read it back as text too
                    rows = duckdb.sql(f"SELECT * FROM read_parquet('{file}')").fetchall()
                    texts[f"{fmt} {file.name} rows"] = repr(rows).encode()
        report = tmp_path / f"report-{run['id']}.html"
        done = cli("report", "--store", store, run["id"], "--out", report)
        assert done.returncode == 0, done.stderr
        texts[f"report {run['id']}"] = report.read_bytes()

    # the search works: what the store does hold is found where it should be
    assert b"SSH reverse forward" in texts["store columns"]
    assert b"lt_quickstart" in texts["store columns"] and b"loadtower" in texts["argv"]
    assert any(b"ycsb-a" in v for k, v in texts.items() if k.startswith("report"))
    assert b"*****" in texts["store columns"]  # the inline password was there, masked

    secrets = [password.encode(), *_private_key_pieces(sandbox)]
    leaks = [(where, s[:6]) for where, blob in texts.items() for s in secrets if s in blob]
    assert leaks == [], f"secrets found in: {leaks}"
