"""Workload files run on the sandbox through `loadtower run`, as a user would:

- study 1's file (scenarios/examples/workloads/study1-recipes.toml: a composite-key
  table, inserts, an update, a multi-condition select, a range select, an aggregate) on
  Cassandra AND ClickHouse in one run, then `loadtower compare RUN`: every op on both
  engines, no errors (the reads that must find rows find them), and each database
  holds exactly the rows the load and the run's inserts wrote;
- a YCSB property file written here, run as a workload (reads, updates and
  read-modify-writes of the loaded records), with no errors;
- a read with expect = "rows" over keys nobody wrote: every op an error of class NoRows.

Small runs (a few hundred records, seconds of load); ClickHouse is the sandbox's chdb
endpoint, whose timings mean nothing: only counts are checked.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from loadtower.store import StoreReader
from tests.orchestrator.run_helpers import only_run, run_scenario

pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]

ROOT = Path(__file__).resolve().parents[2]
STUDY1 = ROOT / "scenarios" / "examples" / "workloads" / "study1-recipes.toml"
DB = "lt_wl_study1"  # the keyspace and the ClickHouse database of study 1
YCSB_KS, MISS_KS = "lt_wl_ycsb", "lt_wl_miss"
RECORDS = 300
BATCH = 20  # insert_100's rows (a CQL batch of 100 such rows passes the 50 kB fail threshold)
STUDY1_OPS = ("select_by_id", "insert_100", "multi_condition", "update_title", "price_range",
              "aggregate")


def _cql(sandbox: dict):  # noqa: ANN202
    from cassandra.auth import PlainTextAuthProvider
    from cassandra.cluster import Cluster

    cass = sandbox["cassandra"]
    cluster = Cluster(cass["contact_points"], port=cass["port"], connect_timeout=10,
                      auth_provider=PlainTextAuthProvider(cass["username"], cass["password"]))
    return cluster, cluster.connect()


def _clickhouse(sandbox: dict):  # noqa: ANN202
    import clickhouse_connect

    ch = sandbox["clickhouse"]
    return clickhouse_connect.get_client(host=ch["address"], port=ch["port"],
                                         username=ch["username"], password=ch["password"])


@pytest.fixture()
def clean(sandbox: dict) -> Iterator[None]:
    """The keyspaces and the ClickHouse database of these tests, dropped before and after."""
    def drop() -> None:
        cluster, session = _cql(sandbox)
        try:
            for ks in (DB, YCSB_KS, MISS_KS):
                session.execute(f"DROP KEYSPACE IF EXISTS {ks}", timeout=60)
        finally:
            cluster.shutdown()
        if (sandbox.get("clickhouse") or {}).get("enabled"):
            client = _clickhouse(sandbox)
            client.command(f"DROP DATABASE IF EXISTS {DB}")
            client.close()

    drop()
    try:
        yield
    finally:
        drop()


def _run(sandbox: dict, tmp_path: Path, scenario: str) -> tuple[StoreReader, str]:
    store = tmp_path / "runs.duckdb"
    path = tmp_path / "scenario.toml"
    path.write_text(scenario)
    done = run_scenario(path, Path(sandbox["inventory"]), store, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    run = only_run(store)
    assert run["status"] == "completed", run
    return StoreReader(store), run["id"]


def _summary(reader: StoreReader, run_id: str) -> dict[tuple[str, str], dict]:
    return {(r["phase"], r["op"]): r for r in reader.phase_summary(run_id)}


def test_study1_on_cassandra_and_clickhouse_in_one_run(sandbox: dict, clean: None,
                                                        tmp_path: Path) -> None:
    if not (sandbox.get("clickhouse") or {}).get("enabled"):
        pytest.skip("the sandbox runs no ClickHouse host (chdb-core not importable?)")
    weights = ", ".join(f"{op} = {3 if op == 'select_by_id' else 1}" for op in STUDY1_OPS)
    reader, run_id = _run(sandbox, tmp_path, f"""
name = "wl-study1"
[target]
keyspace = "{DB}"
[targets.cassandra]
engine = "cassandra"
[targets.clickhouse]
engine = "clickhouse"
[dataset]
records = {RECORDS}
[workloads.study1]
file = "{STUDY1}"
vars = {{ batch_size = {BATCH} }}
weights = {{ {weights}, insert_one = 0, delete_one = 0, delete_100 = 0 }}
[[phases]]
type = "load"
concurrency = 4
[[phases]]
type = "run"
name = "mix"
duration = "6s"
rate = 20
""")
    summary = _summary(reader, run_id)
    # the load runs the file's load op (load = "insert_one"): Cassandra one row per op,
    # ClickHouse blocks of the workload's batch_size (100) rows in one insert
    cass_load, ch_load = summary[("cassandra:1-load", "insert_one")], \
        summary[("clickhouse:1-load", "insert_one")]
    assert (cass_load["ops"], cass_load["errors"]) == (RECORDS, 0)
    assert (ch_load["ops"], ch_load["errors"]) == (RECORDS // 100, 0)

    table = subprocess.run(
        [sys.executable, "-m", "loadtower", "compare", run_id, "--store", str(tmp_path / "runs.duckdb"),
         "--phase", "mix", "--json"],
        capture_output=True, text=True, timeout=120,
    )
    assert table.returncode == 0, table.stderr
    rows = {(r["op"], r["target"]): r for r in json.loads(table.stdout)}
    for op in STUDY1_OPS:
        for target in ("cassandra", "clickhouse"):
            r = rows[(op, target)]
            assert r["engine"] == target and r["ops"] > 0 and r["errors"] == 0, (op, target, r)
    shown = subprocess.run(
        [sys.executable, "-m", "loadtower", "compare", run_id, "--store", str(tmp_path / "runs.duckdb")],
        capture_output=True, text=True, timeout=120, env={**os.environ, "COLUMNS": "200"},
    )
    assert shown.returncode == 0, shown.stderr
    assert all(op in shown.stdout for op in STUDY1_OPS), shown.stdout

    # each database holds the loaded rows and the run's 20-row inserts, no more, no less
    cluster, session = _cql(sandbox)
    try:
        cass_rows = session.execute(f"SELECT count(*) FROM {DB}.recipes", timeout=60).one()[0]
    finally:
        cluster.shutdown()
    assert cass_rows == RECORDS + BATCH * rows[("insert_100", "cassandra")]["ops"]
    client = _clickhouse(sandbox)
    try:
        ch_rows = client.query(f"SELECT count() FROM {DB}.recipes").result_rows[0][0]
    finally:
        client.close()
    assert ch_rows == RECORDS + BATCH * rows[("insert_100", "clickhouse")]["ops"]


YCSB_PROPERTIES = """\
# YCSB core workload properties, as a user's file
recordcount=200
operationcount=1000
workload=site.ycsb.workloads.CoreWorkload
readproportion=0.4
updateproportion=0.3
readmodifywriteproportion=0.3
requestdistribution=zipfian
fieldcount=4
fieldlength=20
"""


def test_a_ycsb_property_file_runs_as_a_workload(sandbox: dict, clean: None,
                                                 tmp_path: Path) -> None:
    (tmp_path / "workloadx.properties").write_text(YCSB_PROPERTIES)
    reader, run_id = _run(sandbox, tmp_path, f"""
name = "wl-ycsb"
[target]
keyspace = "{YCSB_KS}"
[dataset]
records = 200
[workloads.x]
file = "workloadx.properties"
[[phases]]
type = "load"
concurrency = 4
[[phases]]
type = "run"
name = "x"
duration = "4s"
rate = 40
""")
    summary = _summary(reader, run_id)
    assert (summary[("1-load", "insert")]["ops"], summary[("1-load", "insert")]["errors"]) \
        == (200, 0)
    for op in ("read", "update", "read_modify_write"):  # reads must find the loaded rows
        assert summary[("x", op)]["ops"] > 0 and summary[("x", op)]["errors"] == 0, op
    paths = [e["message"] for e in reader.events(run_id) if e["kind"] == "cql_path"]
    assert any("workload file ops run from Python" in m for m in paths), paths


MISS_FILE = """\
[tables.kv]
partition_key = ["k"]
columns = { k = "text", v = "text" }

[ops.get]
expect = "rows"
key = { gen = "uniform", keys = 1000 }
cassandra = "SELECT v FROM ${kv} WHERE k = :k"
bind.k = { gen = "key", prefix = "never-written-" }
"""


def test_a_read_that_must_find_rows_counts_misses_as_errors(sandbox: dict, clean: None,
                                                            tmp_path: Path) -> None:
    (tmp_path / "miss.toml").write_text(MISS_FILE)
    reader, run_id = _run(sandbox, tmp_path, f"""
name = "wl-miss"
[target]
keyspace = "{MISS_KS}"
[workloads.m]
file = "miss.toml"
[[phases]]
type = "run"
name = "misses"
duration = "3s"
rate = 10
""")
    get = _summary(reader, run_id)[("misses", "get")]
    assert get["ops"] > 0 and get["errors"] == get["ops"], get
    classes: dict[str, int] = {}  # the per-second rows' error classes
    _cols, rows = reader.sql(f"SELECT errors_by_class FROM op_second WHERE run_id = '{run_id}' "
                             "AND phase = 'misses' AND op = 'get' AND errors > 0")
    for (blob,) in rows:
        for name, count in json.loads(blob).items():
            classes[name] = classes.get(name, 0) + int(count)
    assert classes == {"NoRows": get["errors"]}, classes
