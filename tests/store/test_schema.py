"""Schema migrations, secret removal, deleting runs, runs left behind by a dead orchestrator."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from loadtower.errors import LoadtowerError
from loadtower.store import StoreReader, StoreWriter, delete_run, mark_interrupted_runs
from loadtower.store.redact import redact
from loadtower.store.schema import SCHEMA_VERSION, current_version, migrate
from tests.store.synth import make_lines, write_run


def test_migrates_an_older_store(tmp_path: Path) -> None:
    path = tmp_path / "old.duckdb"
    con = duckdb.connect(str(path))
    migrate(con, target=1)
    con.execute(
        "INSERT INTO runs (id, name, status) VALUES ('20250101-000000-aaaa', 'old', 'completed')"
    )
    con.close()
    with StoreWriter(path) as writer:
        lines, _ = make_lines(seconds=3, agents=1, ops=("read",))
        run_id = write_run(writer, lines, 3, nodes=False)
    con = duckdb.connect(str(path), read_only=True)
    assert current_version(con) == SCHEMA_VERSION
    con.close()
    reader = StoreReader(path)
    assert [r["id"] for r in reader.runs()] == ["20250101-000000-aaaa", run_id]
    assert len(reader.phase_summary(run_id)) == 1


def test_secrets_are_removed() -> None:
    text = "db:\n  password: hunter2\n  api_token = 'abc'\nuser: bob\n- secret: x # c\nkey: |\n"
    assert redact(text) == (
        "db:\n  password: *****\n  api_token = *****\nuser: bob\n- secret: *****\nkey: |\n"
    )


def test_delete_run_and_unknown_run(tmp_path: Path) -> None:
    path = tmp_path / "d.duckdb"
    with StoreWriter(path) as writer:
        lines, _ = make_lines(seconds=3, agents=1, ops=("read",))
        keep = write_run(writer, lines, 3)
        gone = write_run(writer, lines, 3)
    delete_run(path, gone)
    reader = StoreReader(path)
    assert [r["id"] for r in reader.runs()] == [keep]
    _, rows = reader.sql(f"SELECT count(*) FROM op_intervals WHERE run_id = '{gone}'")
    assert rows == [(0,)]
    with pytest.raises(LoadtowerError, match="no run"):
        reader.phase_summary(gone)
    with pytest.raises(LoadtowerError, match="no run"):
        delete_run(path, gone)


def test_killed_orchestrator_run_becomes_interrupted(tmp_path: Path) -> None:
    path = tmp_path / "k.duckdb"
    code = (
        "import os\nfrom loadtower.store import StoreWriter\n"
        f"w = StoreWriter({str(path)!r})\n"
        "print(w.start_run('k', 's', '', '', {}, {}, {}), flush=True)\nos._exit(9)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    run_id = done.stdout.strip()
    assert StoreReader(path).run(run_id)["status"] == "running"
    assert mark_interrupted_runs(path) == [run_id]
    assert StoreReader(path).run(run_id)["status"] == "interrupted"
