"""Built-in scenarios that no other test runs (ycsb-b, ttl-tombstones, ttl-bloom-sweep), on the
sandbox through `loadtower run` as a user would, each made small with --set so that it
takes well under a minute: every phase completes and the stored phase_summary holds
the ops of each load and run phase. (quickstart: test_run_integration; recipes-mix:
tests/clickhouse/test_experiment1_integration; scale-out-compaction:
test_scale_out_integration; ycsb-suite, Cassandra and MongoDB:
tests/mongodb/test_mongodb_integration.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loadtower.store import StoreReader
from tests.orchestrator.run_helpers import only_run, run_scenario

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]


def _run(sandbox: dict, tmp_path: Path, name: str, *overrides: str) -> tuple[StoreReader, str]:
    store = tmp_path / "runs.duckdb"
    done = run_scenario(name, Path(sandbox["inventory"]), store, *overrides, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    (tmp_path / "stdout.txt").write_text(done.stdout)
    run = only_run(store)
    assert run["status"] == "completed"
    assert f"run_id: {run['id']}" in done.stdout and "p99 ms" in done.stdout  # the table
    return StoreReader(store), run["id"]


def reader_text(tmp_path: Path) -> str:
    """What `loadtower run` printed (its result table)."""
    return (tmp_path / "stdout.txt").read_text()


def _phases(reader: StoreReader, run_id: str) -> dict[str, dict]:
    out = {}
    for phase in reader.phases(run_id):
        result = phase["result"]
        phase["result"] = json.loads(result) if isinstance(result, str) else result
        out[phase["name"]] = phase
    return out


def _summary(reader: StoreReader, run_id: str) -> dict[tuple[str, str], dict]:
    return {(r["phase"], r["op"]): r for r in reader.phase_summary(run_id)}


def _cql(sandbox: dict):  # noqa: ANN202
    from cassandra.auth import PlainTextAuthProvider
    from cassandra.cluster import Cluster

    cass = sandbox["cassandra"]
    cluster = Cluster(
        cass["contact_points"],
        port=cass["port"],
        connect_timeout=10,
        auth_provider=PlainTextAuthProvider(cass["username"], cass["password"]),
    )
    return cluster, cluster.connect()


def test_ycsb_b(sandbox: dict, tmp_path: Path) -> None:
    reader, run_id = _run(
        sandbox,
        tmp_path,
        "ycsb-b",
        "target.keyspace=lt_test_ycsb_b",
        "dataset.records=2000",
        "phases[0].concurrency=16",
        "phases[1].duration=8s",
        "phases[1].rate=200",
    )
    phases = _phases(reader, run_id)
    assert list(phases) == ["1-load", "workload-b"]
    assert all(p["ended"] for p in phases.values())
    assert phases["1-load"]["result"]["completed"] is True
    summary = _summary(reader, run_id)
    assert summary[("1-load", "insert")]["ops"] == 2000
    read, update = summary[("workload-b", "read")], summary[("workload-b", "update")]
    assert read["errors"] == 0 and update["errors"] == 0
    # 95% read / 5% update of about 8 s x 200 ops/s
    assert 1000 <= read["ops"] + update["ops"] <= 2000
    assert read["ops"] > 10 * update["ops"] > 0


def test_ttl_tombstones_adds_rows_and_reads_both_tables_before_and_after(
    sandbox: dict, tmp_path: Path
) -> None:
    keyspace = "lt_test_ttl"
    cluster, session = _cql(sandbox)
    try:
        session.execute(f"DROP KEYSPACE IF EXISTS {keyspace}", timeout=60)
    finally:
        cluster.shutdown()
    # 1,000 rows per table, 500 more from key 1,000; a 12 s TTL, 3 s of reads: the TTL
    # table's rows outlive its first reads and have expired before its last ones
    reader, run_id = _run(
        sandbox,
        tmp_path,
        "ttl-tombstones",
        f"target.keyspace={keyspace}",
        "dataset.records=1000",
        "workloads.with-ttl.ttl=12s",
        "phases[3].records=500",
        "phases[3].start_key=1000",
        "phases[5].records=500",
        "phases[5].start_key=1000",
        *(f"phases[{i}].duration=3s" for i in (2, 4, 6, 9)),
        "phases[7].duration=9s",
    )
    phases = _phases(reader, run_id)
    assert list(phases) == [
        "load-without-ttl",
        "load-with-ttl",
        "reads-before-with-ttl",
        "10k-more-with-ttl",
        "reads-before-without-ttl",
        "10k-more-without-ttl",
        "reads-after-without-ttl",
        "let-ttl-expire",
        "flush",
        "reads-after-with-ttl",
    ]
    assert [h["exit_status"] for h in phases["flush"]["result"]["hosts"].values()] == [0]
    summary = _summary(reader, run_id)
    for table in ("with-ttl", "without-ttl"):
        assert summary[(f"load-{table}", "insert")]["ops"] == 1000
        more = phases[f"10k-more-{table}"]["result"]
        assert (more["start_key"], more["records"], more["inserted_ops"]) == (1000, 500, 500)
        for when in ("before", "after"):
            reads = summary[(f"reads-{when}-{table}", "read")]
            assert 200 <= reads["ops"] <= 400 and reads["errors"] == 0, (when, table, reads)
            assert reads["p99_ms"] > 0
    # tombstones scanned per read (Cassandra's system_views), beside each table's p99:
    # none while the rows live (Cassandra reports 0 as 1: table_reads.py); after they
    # expired and were flushed, reads scan more
    before, after = (summary[(f"reads-{w}-with-ttl", "read")] for w in ("before", "after"))
    assert before["tombstones_table"] == after["tombstones_table"] == f"{keyspace}.with_ttl"
    assert before["tombstones_p99"] <= 1 and before["table_reads"] > 0
    assert after["tombstones_p99"] > 1 and after["table_reads"] > 0, after
    plain = summary[("reads-after-without-ttl", "read")]
    assert plain["tombstones_table"] == f"{keyspace}.without_ttl"
    assert plain["tombstones_p99"] <= 1
    # a load phase reads nothing: no table, even where a read phase follows at once
    assert summary[("load-with-ttl", "insert")]["tombstones_table"] is None
    assert "tombstones/read p50" in reader_text(tmp_path)

    # the second loads ADDED keys 1000..1499; the TTL table's rows have all expired
    cluster, session = _cql(sandbox)
    try:
        plain = f"{keyspace}.without_ttl"
        assert session.execute(f"SELECT count(*) FROM {plain}", timeout=30).one()[0] == 1500
        found = session.execute(f"SELECT id FROM {plain} WHERE id IN (0, 999, 1000, 1499, 1500)")
        assert sorted(r.id for r in found) == [0, 999, 1000, 1499]
        ttl = session.execute(
            "SELECT default_time_to_live FROM system_schema.tables "
            f"WHERE keyspace_name = '{keyspace}' AND table_name IN ('with_ttl', 'without_ttl')"
        )
        assert sorted(r.default_time_to_live for r in ttl) == [0, 12]
        fp = session.execute(
            "SELECT bloom_filter_fp_chance FROM system_schema.tables "
            f"WHERE keyspace_name = '{keyspace}' AND table_name IN ('with_ttl', 'without_ttl')"
        )
        assert [r.bloom_filter_fp_chance for r in fp] == [0.01, 0.01]
        expired = session.execute(f"SELECT count(*) FROM {keyspace}.with_ttl", timeout=30)
        assert expired.one()[0] == 0
    finally:
        cluster.shutdown()


def test_ttl_bloom_sweep_puts_each_tables_tombstones_beside_its_p99(
    sandbox: dict, tmp_path: Path
) -> None:
    keyspace = "lt_test_bloom"
    cluster, session = _cql(sandbox)
    try:
        session.execute(f"DROP KEYSPACE IF EXISTS {keyspace}", timeout=60)
    finally:
        cluster.shutdown()
    tables = {"fp001": 0.01, "fp01": 0.1, "fp1": 1.0}
    # 300 + 300 rows per table, a 4 s TTL on the first ones, 2 s of reads per table
    reader, run_id = _run(
        sandbox, tmp_path, "ttl-bloom-sweep",
        f"target.keyspace={keyspace}", "dataset.records=600",
        *(f"workloads.{t}-ttl.ttl=4s" for t in tables),
        *(f"phases[{i}].records=300" for i in (0, 1, 2, 4, 5, 6)),
        *(f"phases[{i}].start_key=300" for i in (4, 5, 6)),
        "phases[7].duration=4s",
        *(f"phases[{i}].duration=2s" for i in (9, 10, 11)),
    )
    summary = _summary(reader, run_id)
    for name in tables:
        reads = summary[(f"reads-{name}", "read")]
        assert reads["errors"] == 0 and reads["ops"] > 0 and reads["p99_ms"] > 0
        assert reads["tombstones_table"] == f"{keyspace}.bloom_{name}", reads
        assert reads["tombstones_p99"] > 1 and reads["table_reads"] > 0, reads  # 0 shows as 1
    assert "tombstones/read p50" in reader_text(tmp_path)
    cluster, session = _cql(sandbox)
    try:
        rows = session.execute(
            "SELECT table_name, bloom_filter_fp_chance, default_time_to_live FROM "
            f"system_schema.tables WHERE keyspace_name = '{keyspace}'")
        assert {r.table_name: (r.bloom_filter_fp_chance, r.default_time_to_live)
                for r in rows} == {f"bloom_{n}": (fp, 0) for n, fp in tables.items()}
        live = session.execute(f"SELECT count(*) FROM {keyspace}.bloom_fp1", timeout=30)
        assert live.one()[0] == 300  # the rows with a TTL expired, the others live
    finally:
        cluster.shutdown()
