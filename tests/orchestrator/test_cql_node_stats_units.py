"""Cassandra's tombstones per read as node_stats rows (engines/cassandra/orchestrator/node_stats.py): only the run's
keyspaces, only tables whose read count moved since the last reading (each once at the
start), named so that store/table_reads.py can take them apart."""

from __future__ import annotations

from pathlib import Path

from loadtower.engines.cassandra.orchestrator.node_stats import figures, keyspaces
from loadtower.scenarios.engine_hooks import hook
from loadtower.scenarios.plan import load_plan
from loadtower.store.table_reads import _split


def _row(ks: str, table: str, count: int, p99: float) -> dict:
    return {"keyspace_name": ks, "table_name": table, "count": count, "p50th": 0.0,
            "p99th": p99, "max": p99 + 1}


def test_only_the_runs_tables_whose_count_moved() -> None:
    last: dict[str, int] = {}
    first = figures([_row("lt", "t", 0, 0.0), _row("system", "local", 5, 0.0)], {"lt"}, last)
    assert first == {"tombstones_per_read/lt.t/reads": 0.0, "tombstones_per_read/lt.t/p50": 0.0,
                     "tombstones_per_read/lt.t/p99": 0.0, "tombstones_per_read/lt.t/max": 1.0}
    assert figures([_row("lt", "t", 0, 0.0)], {"lt"}, last) == {}  # nothing moved
    moved = figures([_row("lt", "t", 120, 2.0)], {"lt"}, last)
    assert moved["tombstones_per_read/lt.t/reads"] == 120.0
    assert moved["tombstones_per_read/lt.t/p99"] == 2.0
    assert all(_split(name) == ("lt.t", name.rsplit("/", 1)[1]) for name in moved)


def test_the_keyspaces_of_every_target_as_cql_folds_them(tmp_path: Path) -> None:
    (tmp_path / "sc.toml").write_text("""
name = "k"
[target]
keyspace = "Study3"
[targets.other]
engine = "cassandra"
keyspace = "second"
[[phases]]
type = "pause"
duration = "1s"
""")
    (tmp_path / "inv.toml").write_text("""
[hosts.db1]
address = "127.0.0.250"
roles = ["db"]
engine = "cassandra"
[hosts.agent1]
address = "127.0.0.1"
roles = ["agent"]
""")
    plan = load_plan(tmp_path / "sc.toml", tmp_path / "inv.toml")
    assert keyspaces(plan) == {"study3", "second"}
    assert hook("cassandra", "node_stats") is not None
    assert hook("scylla", "node_stats") is None  # Scylla has no tombstones_per_read
