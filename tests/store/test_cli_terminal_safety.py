"""Nothing stored reaches the terminal raw, and no table cuts a name: `runs`, `sql` (table,
CSV, JSON), `compare` (both forms) and error lines, run as a user would (a subprocess)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from loadtower.store import StoreWriter
from loadtower.store.terminal_text import visible
from tests.store.hostile import HOSTILE, unsafe_in, write_hostile_run

ROOT = Path(__file__).resolve().parents[2]
PWN = "SELECT chr(27)||']0;PWNED'||chr(7)||'x' AS title, chr(27)||'[2J' AS clear, chr(155) AS c1"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    path = tmp_path_factory.mktemp("hostile") / "h.duckdb"
    other = dict(HOSTILE, phase="another phase")
    with StoreWriter(path) as writer:
        ids = [write_hostile_run(writer, HOSTILE, seed=1), write_hostile_run(writer, HOSTILE, seed=2),
               write_hostile_run(writer, other, seed=3)]  # fmt: skip
    return path, ids


def cli(*args: str) -> subprocess.CompletedProcess:
    env = {"PYTHONPATH": str(ROOT), "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
           "COLUMNS": "40", "TERM": "xterm"}  # fmt: skip
    cmd = [sys.executable, "-m", "loadtower", *args]
    return subprocess.run(cmd, capture_output=True, timeout=120, env=env)


def safe(done: subprocess.CompletedProcess, code: int = 0) -> str:
    assert done.returncode == code, done.stderr.decode(errors="replace")
    assert b"Traceback" not in done.stderr
    assert unsafe_in(done.stdout) == [] and unsafe_in(done.stderr) == []
    return done.stdout.decode()


def test_runs_table_and_json(runs: tuple[Path, list[str]]) -> None:
    path, ids = runs
    out = safe(cli("runs", "--store", str(path)))
    assert visible(HOSTILE["name"]) in out  # spelled out, whole, not read as markup
    assert out.count(ids[0]) == 1
    rows = json.loads(safe(cli("runs", "--store", str(path), "--json")))
    assert rows[0]["name"] == HOSTILE["name"]  # JSON's escapes give the stored text back


@pytest.mark.parametrize("fmt", ["table", "csv", "json"])
def test_sql_every_format(runs: tuple[Path, list[str]], fmt: str) -> None:
    path, _ = runs
    out = safe(cli("sql", "--store", str(path), "--format", fmt, PWN))
    if fmt != "json":
        assert "\\x1b]0;PWNED\\x07x" in out and "\\x1b[2J" in out and "\\x9b" in out
    else:
        assert json.loads(out) == [{"title": "\x1b]0;PWNED\x07x", "clear": "\x1b[2J",
                                    "c1": "\x9b"}]  # fmt: skip
    out = safe(cli("sql", "--store", str(path), "--format", fmt,
                   "SELECT message, host, phase FROM events WHERE kind = 'info'"))  # fmt: skip
    if fmt != "json":
        assert visible(HOSTILE["message"]) in out and HOSTILE["phase"].split("\x1b")[0] in out


def test_error_lines_quoting_stored_text(runs: tuple[Path, list[str]]) -> None:
    path, _ = runs
    done = cli("sql", "--store", str(path), "SELECT CAST(name AS INTEGER) FROM runs")
    safe(done, code=2)
    assert b"PWNED" in done.stderr  # DuckDB quoted the stored name: spelled out


@pytest.mark.parametrize("engines", [False, True])
def test_compare_both_forms_whole_names(runs: tuple[Path, list[str]], engines: bool) -> None:
    path, ids = runs
    out = safe(cli("compare", "--store", str(path), ids[0], ids[1],
                   *(["--engines"] if engines else [])))  # fmt: skip
    assert visible(HOSTILE["phase"]) in out  # whole, on one line, at COLUMNS=40
    assert visible(HOSTILE["op"]) in out
    assert "…" not in out


def test_compare_with_no_phase_in_common(runs: tuple[Path, list[str]]) -> None:
    path, ids = runs
    done = cli("compare", "--store", str(path), ids[0], ids[2])
    safe(done, code=2)
    err = done.stderr.decode()
    assert len(err.strip().splitlines()) == 1 and "no phase" in err and "another phase" in err
    assert done.stdout == b""  # no empty table


@pytest.mark.parametrize("command", ["sql", "compare"])
def test_on_a_narrow_terminal_nothing_is_cut(runs: tuple[Path, list[str]], command: str) -> None:
    from tests.store.test_cli_output import on_terminal

    path, ids = runs
    args = (["sql", "--store", str(path), "SELECT name, phase FROM events JOIN runs ON id = run_id"]
            if command == "sql" else ["compare", "--store", str(path), ids[0], ids[1]])  # fmt: skip
    out = on_terminal(*args, columns=30)
    assert "…" not in out, out  # text folded, numbers whole: no cell cut short
    if command == "compare":
        assert ids[0] in out.replace("\n", "") and ids[1] in out.replace("\n", "")
