"""Built-in scenarios that no other test runs (ycsb-b, ttl-tombstones), on the
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
    run = only_run(store)
    assert run["status"] == "completed"
    assert f"run_id: {run['id']}" in done.stdout and "p99 ms" in done.stdout  # the table
    return StoreReader(store), run["id"]


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
        *(f"phases[{i}].duration=3s" for i in (2, 4, 6, 8)),
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
        "reads-after-with-ttl",
    ]
    summary = _summary(reader, run_id)
    for table in ("with-ttl", "without-ttl"):
        assert summary[(f"load-{table}", "insert")]["ops"] == 1000
        more = phases[f"10k-more-{table}"]["result"]
        assert (more["start_key"], more["records"], more["inserted_ops"]) == (1000, 500, 500)
        for when in ("before", "after"):
            reads = summary[(f"reads-{when}-{table}", "read")]
            assert 200 <= reads["ops"] <= 400 and reads["errors"] == 0, (when, table, reads)
            assert reads["p99_ms"] > 0

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
        expired = session.execute(f"SELECT count(*) FROM {keyspace}.with_ttl", timeout=30)
        assert expired.one()[0] == 0
    finally:
        cluster.shutdown()
