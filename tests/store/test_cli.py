"""The store's commands, run as a user would (a subprocess with a timeout)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow.csv as pa_csv
import pyarrow.parquet as pq
import pytest

from loadtower.store import StoreReader


def cli(*args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "loadtower", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def test_sql_refuses_writes(written: dict) -> None:
    store = str(written["path"])
    for query in ("DELETE FROM runs", "DROP VIEW op_seconds", "INSERT INTO logs VALUES (1)",
                  "ATTACH 'x.db'", "COPY runs TO 'x.csv'"):  # fmt: skip
        done = cli("sql", "--store", store, query)
        assert done.returncode == 2, done
        assert "read-only" in done.stderr and "Traceback" not in done.stderr
    assert len(StoreReader(written["path"]).runs()) == 1


def test_sql_formats_and_runs(written: dict) -> None:
    store = str(written["path"])
    done = cli("sql", "--store", store, "SELECT op, ops FROM phase_summary", "--format", "json")
    assert done.returncode == 0, done.stderr
    assert {r["op"] for r in json.loads(done.stdout)} == {"read", "update", "insert"}
    done = cli("sql", "--store", store, "SELECT count(*) AS n FROM op_seconds", "--format", "csv")
    assert done.stdout.splitlines() == ["n", str(len(written["raw"]))]
    done = cli("runs", "--store", store, "--json")
    assert json.loads(done.stdout)[0]["id"] == written["run_id"]


def test_errors_are_one_clear_line(tmp_path: Path, written: dict) -> None:
    done = cli("runs", "--store", str(tmp_path / "missing.duckdb"))
    assert done.returncode == 2 and "no store at" in done.stderr
    done = cli("report", "--store", str(written["path"]), "nope", "--out", str(tmp_path / "x"))
    assert done.returncode == 2 and "no run 'nope'" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_export_round_trips_row_counts(written: dict, tmp_path: Path, fmt: str) -> None:
    out = tmp_path / fmt
    done = cli("export", "--store", str(written["path"]), written["run_id"], "--format", fmt,
               "--out", str(out))  # fmt: skip
    assert done.returncode == 0, done.stderr
    read = pq.read_table if fmt == "parquet" else pa_csv.read_csv
    reader = StoreReader(written["path"])
    assert read(out / f"op_seconds.{fmt}").num_rows == len(reader.op_seconds(written["run_id"]))
    assert read(out / f"node_seconds.{fmt}").num_rows == len(reader.node_seconds(written["run_id"]))
    assert read(out / f"op_intervals.{fmt}").num_rows == len(written["lines"]) * 3
    assert read(out / f"phase_summary.{fmt}").num_rows == 3


def test_report_has_charts_and_table(written: dict, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    done = cli("report", "--store", str(written["path"]), written["run_id"], "--out", str(out))
    assert done.returncode == 0, done.stderr
    html = out.read_text()
    # one chart per phase (throughput and p99), one per node (CPU and RAM), drawn by the
    # plotly.js bundle inlined once
    assert html.count("Plotly.newPlot(") == 1 + 3 and html.count("<script>") == 1 + 4
    for title in ("Each phase on its own scale", "CPU and RAM used", "Summary"):
        assert title in html
    assert "<table class='results'>" in html and "<th>Throughput (ops/s)</th>" in html
