"""Issue 26 case 5: read commands never write a store, and no view of a store runs with
file access. A real store (StoreWriter) holds a 'running' run whose orchestrator is dead
(a real process that ended) and a planted view over read_text of a private file standing
in for the events table: `loadtower runs` leaves the file's bytes as they were, evaluates
no such view, and only names the dead run; `loadtower repair` (the explicit write)
refuses the crafted store in one line; on a clean store it marks the run."""

from __future__ import annotations

import json
import socket
import subprocess
from pathlib import Path

import duckdb
import pytest

from loadtower.errors import LoadtowerError
from loadtower.store import StoreReader, StoreWriter
from loadtower.store.admin import mark_interrupted_runs
from loadtower.store.connection import connect
from tests.reliability.helpers import cli

SECRET = "-----BEGIN OPENSSH PRIVATE KEY----- s3cr3t\n"


def _dead_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait(timeout=30)
    return child.pid


def _store_with_dead_run(path: Path, run_id: str = "dead-run") -> None:
    StoreWriter(path).close()
    con = duckdb.connect(str(path))
    try:
        con.execute("INSERT INTO runs (id, name, status, started, hostname, pid) "
                    "VALUES (?, ?, 'running', 1700000000, ?, ?)",
                    [run_id, run_id, socket.gethostname(), _dead_pid()])
    finally:
        con.close()


def _plant_view(path: Path, secret: Path) -> None:
    """`events` replaced by a view that reads `secret` (its first byte as the ts)."""
    con = duckdb.connect(str(path))
    try:
        con.execute("DROP TABLE events")
        quoted = str(secret).replace("'", "''")
        con.execute("CREATE VIEW events AS SELECT 'dead-run' AS run_id, "
                    "CAST(ascii(content) AS DOUBLE) AS ts, 'run' AS kind, "
                    f"content AS message FROM read_text('{quoted}')")
        con.execute("CREATE VIEW leak AS SELECT content FROM read_text('" + quoted + "')")
    finally:
        con.close()


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    path = tmp_path / "id_key"
    path.write_text(SECRET)
    path.chmod(0o600)
    return path


def test_runs_does_not_modify_a_store_with_a_dead_running_run(tmp_path: Path) -> None:
    store = tmp_path / "s.duckdb"
    _store_with_dead_run(store)
    before = store.read_bytes()
    done = cli("runs", "--store", store, "--json")
    assert done.returncode == 0, done.stderr
    assert store.read_bytes() == before and not Path(f"{store}.wal").exists()
    run = {r["id"]: r for r in json.loads(done.stdout)}["dead-run"]
    assert run["status"] == "running"
    assert "run dead-run is still 'running' but the orchestrator" in done.stderr
    for command in (["sql", "SELECT count(*) FROM runs"], ["compare", "dead-run", "dead-run"]):
        cli(*command, "--store", store)
        assert store.read_bytes() == before, command
    repaired = cli("repair", "--store", store)
    assert repaired.returncode == 0 and "run dead-run marked interrupted" in repaired.stdout
    assert StoreReader(store).run("dead-run")["status"] == "interrupted"


def test_a_planted_view_over_a_file_is_never_evaluated(tmp_path: Path, secret: Path) -> None:
    store = tmp_path / "crafted.duckdb"
    _store_with_dead_run(store)
    _plant_view(store, secret)
    before = store.read_bytes()
    done = cli("runs", "--store", store, "--json")
    assert done.returncode == 0, done.stderr
    assert store.read_bytes() == before and not Path(f"{store}.wal").exists()
    assert "s3cr3t" not in done.stdout + done.stderr and "BEGIN" not in done.stderr
    assert json.loads(done.stdout)[0]["reason"] is None  # nothing leaked into a reason
    # the read-only lockdown refuses the view in one line
    sql = cli("sql", "SELECT * FROM leak", "--store", store)
    assert sql.returncode == 2 and "s3cr3t" not in sql.stdout + sql.stderr
    assert "Traceback" not in sql.stderr
    # the explicit write refuses a store whose run tables are views
    repaired = cli("repair", "--store", store)
    assert repaired.returncode == 2, repaired.stdout + repaired.stderr
    assert repaired.stderr.strip().splitlines() == [
        f"loadtower repair: store {store}: events is a view, not a table: not a store "
        "loadtower wrote; refusing to write it"]
    assert store.read_bytes() == before
    with pytest.raises(LoadtowerError, match="events is a view"):
        mark_interrupted_runs(store)  # what a writer opening the store runs first
    # and a read-write connection has no file access either: the view cannot run
    with connect(store, read_only=False) as con, pytest.raises(duckdb.PermissionException):
        con.execute("SELECT * FROM leak").fetchall()


@pytest.mark.parametrize("command", [
    ["report", "dead-run", "--out", "{dir}/r.html"], ["export", "dead-run", "--out", "{dir}/e"],
    ["compare", "dead-run", "dead-run"], ["runs"]])
def test_a_refused_view_is_one_line_exit_2(tmp_path: Path, secret: Path,
                                           command: list[str]) -> None:
    """Case 6: `report` (and every read command) on a store whose view the lockdown
    refuses says so in one line, exit 2, never a traceback."""
    store = tmp_path / "crafted.duckdb"
    _store_with_dead_run(store)
    con = duckdb.connect(str(store))
    try:
        table = "runs" if command[0] == "runs" else "phases"
        columns = [r[0] for r in con.execute(
            "SELECT column_name FROM duckdb_columns() WHERE table_name = ?", [table]).fetchall()]
        con.execute(f"DROP TABLE {table}")
        quoted = str(secret).replace("'", "''")
        picked = ", ".join(f"'dead-run' AS {c}" if c in ("id", "run_id") else f"NULL AS {c}"
                           for c in columns)
        con.execute(f"CREATE VIEW {table} AS SELECT {picked}, content AS leak "
                    f"FROM read_text('{quoted}')")
    finally:
        con.close()
    done = cli(*(part.format(dir=tmp_path) for part in command), "--store", store)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert lines[0].startswith(f"loadtower {command[0]}: cannot read {store}: it asks for "
                               "file access")
    assert "s3cr3t" not in done.stdout + done.stderr
