"""The store's node_stats table: the database's own figures per node (an engine's
node_stats hook, e.g. MongoDB's serverStatus), written by the one writer, read by
StoreReader, deleted with its run, and added to an older store by the migration."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from loadtower.errors import LoadtowerError
from loadtower.store import StoreReader, StoreWriter, delete_run
from loadtower.store.export import export_run
from loadtower.store.schema import (
    LATENESS_COLUMNS,
    SCHEMA_VERSION,
    VIEWS,
    current_version,
    migrate,
)
from tests.store.synth import make_lines, write_run


def _tables(path: Path) -> set[str]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
    finally:
        con.close()


def test_writer_and_reader_node_stats(tmp_path: Path) -> None:
    path = tmp_path / "s.duckdb"
    with StoreWriter(path) as writer:
        lines, _ = make_lines(seconds=3, agents=1, ops=("read",))
        run_id = write_run(writer, lines, 3)
        t0 = float(lines[0]["ts"])
        writer.node_stats(run_id, t0 + 0.4, "db1", "mongodb",
                          {"ops_per_s": 120.5, "connections_current": 7, "uptime_s": None})
        writer.node_stats(run_id, t0 + 1.4, "db2", "mongodb", {"ops_per_s": 99.0})
    reader = StoreReader(path)
    rows = reader.node_stats(run_id)
    assert [(r["host"], r["name"], r["value"]) for r in rows] == [
        ("db1", "connections_current", 7.0),
        ("db1", "ops_per_s", 120.5),
        ("db1", "uptime_s", None),
        ("db2", "ops_per_s", 99.0),
    ]
    assert {r["engine"] for r in rows} == {"mongodb"}
    assert [r["ts"] for r in reader.node_stats(run_id, host="db2")] == [t0 + 1.4]
    # beside the node samples: joined by host and second (docs/store.md's example)
    _, joined = reader.sql(
        "SELECT n.host, n.cpu_pct, s.value FROM node_seconds n JOIN node_stats s "
        "ON s.run_id = n.run_id AND s.host = n.host AND floor(s.ts) = n.ts "
        f"WHERE n.run_id = '{run_id}' AND s.name = 'ops_per_s' ORDER BY n.host"
    )
    assert [row[0] for row in joined] == ["db1", "db2"]
    with pytest.raises(LoadtowerError, match="no run"):
        reader.node_stats("20990101-000000-none")
    counts = export_run(path, run_id, "csv", tmp_path / "out")
    assert counts["node_stats"] == 4
    assert (tmp_path / "out" / "node_stats.csv").read_text().count("mongodb") == 4
    delete_run(path, run_id)
    _, left = StoreReader(path).sql("SELECT count(*) FROM node_stats")
    assert left == [(0,)]


def test_a_schema_4_store_upgrades_and_keeps_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "old.duckdb"
    con = duckdb.connect(str(path))
    migrate(con, target=4)
    for name, body in VIEWS.items():  # as a schema-4 writer left them (no view reads node_stats)
        body = body.replace(f", {LATENESS_COLUMNS}", "")  # schema 6's columns
        con.execute(f"CREATE VIEW {name} AS {body}")
    con.execute("INSERT INTO runs (id, name, status) VALUES ('20250101-000000-aaaa', 'old', "
                "'completed')")
    con.execute("INSERT INTO events VALUES ('20250101-000000-aaaa', 1.0, 'node_stats', "
                "'db1 serverStatus', 'db1', NULL, '{\"ops\": 3}')")
    con.execute("INSERT INTO node_samples VALUES ('20250101-000000-aaaa', 1.0, 'db1', 12.5, "
                "1, 2, 0, 0, 0, 0)")
    con.close()
    assert "node_stats" not in _tables(path)
    # a reader of the old store, before any writer migrated it: no figures, no error
    old = StoreReader(path)
    assert old.node_stats("20250101-000000-aaaa") == []
    with pytest.raises(LoadtowerError, match="no run"):
        old.node_stats("20990101-000000-none")
    counts = export_run(path, "20250101-000000-aaaa", "csv", tmp_path / "old-out")
    assert "node_stats" not in counts and counts["node_seconds"] == 1
    assert not (tmp_path / "old-out" / "node_stats.csv").exists()
    with StoreWriter(path) as writer:
        run_id = writer.start_run("new", "scn", "", "", {}, {}, {})
        writer.node_stats(run_id, 5.0, "db1", "mongodb", {"ops_per_s": 1.0})
        writer.end_run(run_id, "completed", None)
    con = duckdb.connect(str(path), read_only=True)
    assert current_version(con) == SCHEMA_VERSION == 7
    con.close()
    reader = StoreReader(path)
    assert [r["id"] for r in reader.runs()] == ["20250101-000000-aaaa", run_id]
    assert [e["kind"] for e in reader.events("20250101-000000-aaaa")] == ["node_stats"]
    assert [r["cpu_pct"] for r in reader.node_seconds("20250101-000000-aaaa")] == [12.5]
    assert reader.node_stats("20250101-000000-aaaa") == []
    assert [(r["host"], r["value"]) for r in reader.node_stats(run_id)] == [("db1", 1.0)]


def test_a_bad_figure_name_is_repaired_and_reported(tmp_path: Path) -> None:
    path = tmp_path / "b.duckdb"
    with StoreWriter(path) as writer:
        run_id = writer.start_run("b", "scn", "", "", {}, {}, {})
        writer.node_stats(run_id, 5.0, "db1", "mongodb", {"bad \udcff": 2.0, "ok": 1.0})
        writer.end_run(run_id, "completed", None)
    reader = StoreReader(path)
    assert sorted(r["name"] for r in reader.node_stats(run_id)) == ["bad \\udcff", "ok"]
    bad = [e for e in reader.events(run_id) if e["kind"] == "bad_sample"]
    assert len(bad) == 1 and "node_stats.name" in bad[0]["message"]
