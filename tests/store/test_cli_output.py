"""What `loadtower runs`, `sql` and `export` print: whole ids, stored text as it is, no
warnings. Run as a user would: a subprocess, piped or on a (pseudo) terminal."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from loadtower.store import StoreWriter
from tests.store.synth import make_lines

ROOT = Path(__file__).resolve().parents[2]
# started in the same second; id order is not start order
RUNS = [
    ("20261124-093011-ffff", 1_795_512_611.10, "[cassandra]", "[/oops] lost [bold]db1[/bold]"),
    ("20261124-093011-0000", 1_795_512_611.60, "second run with a long name", None),
    ("20261124-093012-7777", 1_795_512_612.20, "third", "host db1: SSH connection lost"),
]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cli-output") / "runs.duckdb"
    lines, _ = make_lines(seconds=2, agents=1, ops=("read",), per_second=5)
    with StoreWriter(path) as writer:
        for run_id, started, name, reason in RUNS:
            writer.start_run(name, "[scn]", "", "", {}, {}, {}, run_id=run_id, started=started)
            for line in lines:
                writer.add_interval(run_id, line)
            writer.end_run(run_id, "failed" if reason else "completed", reason,
                           ended=started + 30)  # fmt: skip
    return path


def env(columns: int) -> dict[str, str]:
    return {"PYTHONPATH": str(ROOT), "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "COLUMNS": str(columns), "LINES": "50", "TERM": "xterm"}  # fmt: skip


def piped(*args: str, columns: int = 40) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "loadtower", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env(columns))


def on_terminal(*args: str, columns: int) -> str:
    """Output of the command on a pseudo terminal `columns` wide (escape codes removed)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    cmd = [sys.executable, "-m", "loadtower", *args]
    proc = subprocess.Popen(cmd, stdin=slave, stdout=slave, stderr=slave, env=env(columns))
    os.close(slave)
    out = b""
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 1.0)
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the terminal closed: the command ended
                break
            if not chunk:
                break
            out += chunk
        assert proc.wait(timeout=30) == 0, out
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
        os.close(master)
    return ANSI.sub("", out.decode("utf-8", "replace")).replace("\r", "")


def test_runs_piped_at_40_columns_whole_ids_in_start_order(store: Path) -> None:
    done = piped("runs", "--store", str(store), columns=40)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    for run_id, *_ in RUNS:
        assert sum(run_id in line for line in lines) == 1, done.stdout
    order = [next(i for i, line in enumerate(lines) if run_id in line) for run_id, *_ in RUNS]
    assert order == sorted(order)
    assert "[cassandra]" in done.stdout and "[/oops] lost [bold]db1[/bold]" in done.stdout
    assert "…" not in done.stdout  # nothing cut short


@pytest.mark.parametrize("columns", [24, 30, 60, 100])
def test_runs_on_a_narrow_terminal_keeps_ids_whole(store: Path, columns: int) -> None:
    out = on_terminal("runs", "--store", str(store), columns=columns)
    for run_id, *_ in RUNS:
        assert run_id in out, out
    order = [out.index(run_id) for run_id, *_ in RUNS]
    assert order == sorted(order)
    assert "…" not in out.split("left out at")[0]  # no cell is cut short
    assert f"reason left out at {columns} columns" in " ".join(out.split())  # said, not cut
    if columns >= 100:
        assert "[cassandra]" in out


def test_runs_json_is_in_start_order(store: Path) -> None:
    import json

    done = piped("runs", "--store", str(store), "--json")
    assert [r["id"] for r in json.loads(done.stdout)] == [r[0] for r in RUNS]


def test_sql_table_shows_stored_text_exactly(store: Path) -> None:
    done = piped("sql", "--store", str(store),
                 "SELECT name, reason, '[/x]' AS \"[col]\" FROM runs ORDER BY started",
                 columns=200)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "[cassandra]" in done.stdout
    assert "[/oops] lost [bold]db1[/bold]" in done.stdout
    assert "[/x]" in done.stdout and "[col]" in done.stdout


def test_export_prints_no_warning(store: Path, tmp_path: Path) -> None:
    cmd = [sys.executable, "-W", "always", "-m", "loadtower", "export", "--store", str(store),
           RUNS[0][0], "--format", "csv", "--out", str(tmp_path / "out")]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env(80))
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert "op_intervals.csv: 2 rows" in done.stdout
