"""A user's data set loaded through `loadtower run`, as a user would: 1,000,000 rows
generated here as CSV and as Parquet, each loaded by its own load phase into Cassandra
AND ClickHouse in one run (CQL UNLOGGED batches of 100 rows and ClickHouse inserts of
10,000: the op's batch by engine);
each database then holds exactly the file's rows, with the file's values; every agent
worker reports its rows and its peak RSS, under a stated bound. (A bad data set is one
line, exit 2, from `check` and `run` before anything runs:
tests/scenarios/test_workload_dataset_files.py.)

ClickHouse is the sandbox's chdb endpoint (its timings mean nothing: only counts).
LOADTOWER_DATASET_ROWS sets the rows (default 1,000,000).
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from loadtower.store import StoreReader
from tests.orchestrator.run_helpers import only_run, remove_shipped, run_scenario

pytestmark = [pytest.mark.integration, pytest.mark.alone,  # a million rows into two engines
              pytest.mark.timeout(1500)]

ROWS = int(os.environ.get("LOADTOWER_DATASET_ROWS", "1000000"))
DB = "lt_wd_dataset"
# rows per op by engine: a CQL UNLOGGED batch of 100 (Cassandra's mutation size of 500
# such rows passed its 50 KiB batch_size_fail_threshold); one ClickHouse insert of 10,000
# (inserts of 100 rows took 116 + 162 s of this test through the one-threaded chdb stand-in)
BATCH = {"cassandra": 100, "clickhouse": 10_000}
# A worker's peak RSS: the agent's own ~100 MB (Python, locust, the drivers, duckdb
# imported) plus the data set reader's (DuckDB's 256 MB memory_limit, of which streaming
# these small rows uses well under 100 MB, and one 10,000-row batch): 181 MB measured for
# these files read and bound in one process here; in the run, 197..275 MB per worker
# (one worker process does both loads on both engines, its drivers' buffers included;
# the whole test: 224 s here). A worker that held the million rows in Python (~400 MB
# of dicts alone) would pass the bound.
PEAK_RSS_BOUND_MB = 400

WORKLOAD = """\
load = "insert"

[datasets.people]
file = "{file}"
columns = {{ id = "bigint", name = "text", country = "text", age = "int", score = "double" }}

[tables.people_{fmt}]
partition_key = ["id"]
[tables.people_{fmt}.columns]
id = "bigint"
name = "text"
country = "text"
age = "int"
score = "double"

[ops.insert]
batch = {{ cassandra = {cassandra}, clickhouse = {clickhouse} }}
cassandra = "INSERT INTO ${{people_{fmt}}} (id, name, country, age, score) VALUES (:id, :name, :country, :age, :score)"
clickhouse = "INSERT INTO ${{people_{fmt}}} (id, name, country, age, score) VALUES (:id, :name, :country, :age, :score)"
bind.id = {{ gen = "dataset", column = "id" }}
bind.name = {{ gen = "dataset", column = "name" }}
bind.country = {{ gen = "dataset", column = "country" }}
bind.age = {{ gen = "dataset", column = "age" }}
bind.score = {{ gen = "dataset", column = "score" }}
"""
# the row i: what the files hold and what the databases must hold
ROW_SQL = ("SELECT i AS id, 'person ' || i AS name, ['DE', 'FR', 'JP', 'BR', 'NG'][i % 5 + 1] "
           "AS country, (i % 90)::INTEGER AS age, i / 8 AS score FROM range({rows}) t(i)")


def _write_data(directory: Path, rows: int) -> dict[str, Path]:
    out = {"csv": directory / "people.csv", "parquet": directory / "people.parquet"}
    con = duckdb.connect()
    try:
        con.execute(f"COPY ({ROW_SQL.format(rows=rows)}) TO '{out['csv']}' (HEADER)")
        con.execute(f"COPY ({ROW_SQL.format(rows=rows)}) TO '{out['parquet']}' (FORMAT parquet)")
    finally:
        con.close()
    return out


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
                                         username=ch["username"], password=ch["password"],
                                         connect_timeout=10, send_receive_timeout=300)


@pytest.fixture()
def clean(sandbox: dict) -> Iterator[None]:
    """This test's keyspace and ClickHouse database, dropped before and after."""
    def drop() -> None:
        cluster, session = _cql(sandbox)
        try:
            session.execute(f"DROP KEYSPACE IF EXISTS {DB}", timeout=120)
        finally:
            cluster.shutdown()
        if (sandbox.get("clickhouse") or {}).get("enabled"):
            client = _clickhouse(sandbox)
            try:
                client.command(f"DROP DATABASE IF EXISTS {DB}")
            finally:
                client.close()

    drop()
    try:
        yield
    finally:
        drop()


def _scenario(tmp_path: Path, files: dict[str, Path]) -> Path:
    for fmt, path in files.items():
        (tmp_path / f"{fmt}.toml").write_text(WORKLOAD.format(file=path.name, fmt=fmt,
                                                              **BATCH))
    scenario = tmp_path / "scenario.toml"
    scenario.write_text(f"""
name = "wd-dataset"
[target]
keyspace = "{DB}"
[targets.cassandra]
engine = "cassandra"
[targets.clickhouse]
engine = "clickhouse"
[workloads.csv]
file = "csv.toml"
[workloads.parquet]
file = "parquet.toml"
[[phases]]
type = "load"
name = "csv"
workload = "csv"
concurrency = 8
[[phases]]
type = "load"
name = "parquet"
workload = "parquet"
concurrency = 8
""")
    return scenario


def test_a_million_rows_as_csv_and_parquet_reach_both_engines(sandbox: dict, clean: None,
                                                               tmp_path: Path) -> None:
    if not (sandbox.get("clickhouse") or {}).get("enabled"):
        pytest.skip("the sandbox runs no ClickHouse host (chdb-core not importable?)")
    files = _write_data(tmp_path, ROWS)
    try:
        _load_and_check(sandbox, tmp_path, files)
    finally:  # the copies the run put on the agent host (this machine)
        remove_shipped(sandbox, files)


def _count(session, table: str, slices: int = 32, tries: int = 5) -> int:  # noqa: ANN001
    """count(*) of a million-row table, one token slice at a time: a single full-scan count
    can be cut by the node's own range timeout, or fail outright ("Replica(s) failed to
    execute read", seen on CI) while it still compacts what was just loaded; a slice is
    small enough to finish, and one that fails is retried, a few times."""
    from cassandra import OperationTimedOut, ReadFailure, ReadTimeout

    low, high = -(2**63), 2**63 - 1
    edges = [low + (high - low) * i // slices for i in range(slices)] + [high]
    total = 0  # (-2**63, 2**63 - 1] is every token: Murmur3 never gives a key -2**63
    for start, end in zip(edges, edges[1:], strict=False):
        for attempt in range(tries):
            try:
                total += int(session.execute(
                    f"SELECT count(*) FROM {table} WHERE token(id) > %s AND token(id) <= %s",
                    [start, end], timeout=120).one()[0])
                break
            except (ReadTimeout, OperationTimedOut, ReadFailure):
                if attempt == tries - 1:
                    raise
                time.sleep(5)
    return total


def _load_and_check(sandbox: dict, tmp_path: Path, files: dict[str, Path]) -> None:
    store = tmp_path / "runs.duckdb"
    done = run_scenario(_scenario(tmp_path, files), Path(sandbox["inventory"]), store,
                        timeout=1400)
    assert done.returncode == 0, done.stderr[-3000:]
    run = only_run(store)
    assert run["status"] == "completed", run
    reader = StoreReader(store)
    summary = {(r["phase"], r["op"]): r for r in reader.phase_summary(run["id"])}
    errors = {(r["phase"], r["op"]): r.get("errors_by_class") for r in reader.op_seconds(run["id"])
              if r["errors"]}
    warnings = [e["message"] for e in reader.events(run["id"]) if e["kind"] == "warning"]
    assert not errors, (errors, warnings)
    for phase in ("csv", "parquet"):
        for target in ("cassandra", "clickhouse"):
            row = next(r for (p, op), r in summary.items()
                       if p.startswith(f"{target}:") and p.endswith(phase) and op == "insert")
            ops = -(-ROWS // BATCH[target])
            assert (row["ops"], row["errors"]) == (ops, 0), (phase, target, row)

    # every worker said what it loaded, and its peak RSS: the rows add up, each under the bound
    events = [e for e in reader.events(run["id"]) if e["kind"] == "dataset"]
    loaded = [re.search(r"rows (\d+)\.\.(\d+) loaded \((\d+) rows\); worker peak RSS (\d+) MB",
                        e["message"]) for e in events]
    assert loaded and all(loaded), [e["message"] for e in events]
    peaks = [int(m.group(4)) for m in loaded if m]
    print(f"{ROWS} rows x 2 files x 2 engines; worker peak RSS {min(peaks)}..{max(peaks)} MB")
    assert max(peaks) < PEAK_RSS_BOUND_MB, peaks
    assert sum(int(m.group(3)) for m in loaded if m) == 4 * ROWS  # 2 files x 2 targets

    cluster, session = _cql(sandbox)
    client = _clickhouse(sandbox)
    try:
        for fmt in ("csv", "parquet"):
            table = f"{DB}.people_{fmt}"
            counted = _count(session, table)
            sample = session.execute(f"SELECT id, name, country, age, score FROM {table} "
                                     f"WHERE id = {ROWS - 1}", timeout=60).one()
            assert counted == ROWS, (fmt, counted)
            last = ROWS - 1
            assert tuple(sample) == (last, f"person {last}", ["DE", "FR", "JP", "BR", "NG"][last % 5],
                                     last % 90, last / 8)
            ch = client.query(f"SELECT count(), uniqExact(id), min(id), max(id), "
                              f"sum(age) FROM {table}").result_rows[0]
            assert ch == (ROWS, ROWS, 0, ROWS - 1, sum(i % 90 for i in range(ROWS))), (fmt, ch)
    finally:
        cluster.shutdown()
        client.close()
