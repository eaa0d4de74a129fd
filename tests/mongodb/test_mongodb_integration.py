"""MongoDB as an engine, end to end through `loadtower run`, on the session sandbox's
FerretDB (host mongo1): load + YCSB A-F at fixed rates with no error and exact document
counts; a FerretDB killed during a run (fault phases `kill`, then `start`) shows as
errors by class and the run completes; wrong credentials are one line; and the built-in
ycsb-suite runs Cassandra and MongoDB from one command, with its compare table.

Every phase is short: the module is a few runs of about 20-40 s. Run under
`flock /tmp/lt-integration.lock` (the shared loopback sandbox)."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from loadtower.store import StoreReader
from tests.orchestrator.run_helpers import (
    YCSB_OPS,
    only_run,
    op_summary,
    phase_results,
    run_scenario,
    run_text,
    ycsb_a_to_f_text,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

RECORDS = 1000


def client(info: dict):  # noqa: ANN201
    import pymongo

    return pymongo.MongoClient(
        info["url"], username=info["username"], password=info["password"],
        serverSelectionTimeoutMS=10_000, connectTimeoutMS=10_000, socketTimeoutMS=30_000,
    )


@pytest.fixture
def database(mongodb: dict) -> Iterator[str]:
    """A database of this test's own, dropped afterwards."""
    name = f"lt_test_{uuid.uuid4().hex[:10]}"
    try:
        yield name
    finally:
        with client(mongodb) as c:
            c.drop_database(name)


def scenario(database: str, phases: str, workloads: str = "") -> str:
    return f"""\
name = "mongo-test"
engine = "mongodb"

[target]
keyspace = "{database}"
write_concern = "majority"
read_preference = "primary"

[dataset]
records = {RECORDS}
fields = 4
field_size = 50

{workloads}
{phases}
"""


def as_dict(value: object) -> dict:
    return json.loads(value) if isinstance(value, str) else dict(value)  # type: ignore[call-overload]


def test_load_and_ycsb_a_to_f_at_fixed_rates(
    sandbox: dict, mongodb: dict, database: str, tmp_path: Path
) -> None:
    # e inserts new keys as d does (the same sequence each phase): its own collection,
    # or its inserts would be duplicate keys (MongoDB refuses them; CQL overwrites)
    # FerretDB sorts a scan's range itself: e at a lower rate
    workloads, phases = ycsb_a_to_f_text({w: 40 if w == "e" else 100 for w in YCSB_OPS})
    done, reader, run_id = run_text(tmp_path, scenario(database, phases, workloads),
                               sandbox["inventory"])
    assert done.returncode == 0, done.stderr[-3000:]
    assert reader.runs()[0]["status"] == "completed"
    ops = op_summary(reader, run_id)
    # the load: insert_many blocks of batch_size = 50 documents, every one in
    assert ops[("load", "insert_batch")]["ops"] == RECORDS // 50
    assert ops[("load", "insert_batch")]["errors"] == 0
    found = phase_results(reader, run_id)
    assert found["load"]["documents"] == RECORDS
    assert found["load"]["collection"] == f"{database}.usertable"
    for w, expected in YCSB_OPS.items():
        got = {op for (phase, op) in ops if phase == w}
        assert got == expected, (w, got)
        _, failed = reader.sql(  # (second, op, errors, the classes the agent counted)
            "SELECT ts, op, errors, errors_by_class FROM op_second WHERE run_id = "
            f"'{run_id}' AND phase = '{w}' AND errors > 0 ORDER BY ts")
        assert all(ops[(w, op)]["errors"] == 0 for op in got), (w, failed)
        total = sum(ops[(w, op)]["ops"] for op in got)
        rate = 40 if w == "e" else 100
        assert 0 < total <= 4.5 * rate, (w, total)  # at most about 3 s at the rate
    assert found["load-e"]["documents"] == RECORDS
    with client(mongodb) as c:
        db = c[database]
        assert db["usertable"].count_documents({}) == RECORDS + ops[("d", "insert")]["ops"]
        assert db["usertable_e"].count_documents({}) == RECORDS + ops[("e", "insert")]["ops"]
    events = reader.events(run_id)
    warnings = [e["message"] for e in events if e["kind"] == "warning"]
    assert any(m.startswith("MongoDB target mongo1 is FerretDB v1.24.2 (SQLite): its timings "
                            "are FerretDB's, not MongoDB's") for m in warnings), warnings
    versions = next(e for e in events if e["kind"] == "versions")
    data = as_dict(versions["data"])
    assert data["databases"]["mongo1"]["ferretdb_version"] == "v1.24.2"
    # serverStatus figures: rows of the node_stats table, one node_metrics event saying so
    assert not [e for e in events if e["kind"] == "node_stats"]
    told = [e for e in events if e["kind"] == "node_metrics" and e["host"] == "mongo1"
            and "node_stats table" in e["message"]]
    assert len(told) == 1, told
    stats = reader.node_stats(run_id, host="mongo1")
    assert stats, "no serverStatus figures of mongo1"
    assert {r["engine"] for r in stats} == {"mongodb"}
    names = {r["name"] for r in stats}
    assert names >= {f"opcounters_delta.{k}" for k in ("insert", "query", "update", "delete")}
    assert "ops_per_s" in names
    assert sum(r["value"] for r in stats if r["name"].startswith("opcounters_delta.")) > 0
    assert max(r["value"] for r in stats if r["name"] == "ops_per_s") > 0


def test_a_killed_ferretdb_shows_as_errors_by_class_and_the_run_completes(
    sandbox: dict, mongodb: dict, database: str, tmp_path: Path
) -> None:
    phases = """\
[[phases]]
type = "load"
name = "load"

[[phases]]
type = "fault"
name = "kill"
host = "mongo1"
action = "kill"
after = "2s"
duration = "8s"
rate = 100

[[phases]]
type = "fault"
name = "start"
host = "mongo1"
action = "start"
duration = "0s"

[[phases]]
type = "run"
name = "after"
duration = "3s"
rate = 100
"""
    try:
        done, reader, run_id = run_text(tmp_path, scenario(database, phases), sandbox["inventory"])
    finally:  # whatever happened: the sandbox's FerretDB runs for the next tests
        subprocess.run([sys.executable, "-m", "loadtower", "sandbox", "mongodb", "start",
                        "--dir", sandbox["dir"]], capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert reader.runs()[0]["status"] == "completed"
    found = phase_results(reader, run_id)
    assert found["kill"]["exit_status"] == 0 and found["start"]["exit_status"] == 0
    classes = found["kill"]["errors_by_class_after"]
    assert classes and set(classes) <= {"MongoNetwork", "MongoTimeout", "DrainTimeout"}, classes
    assert found["kill"]["errors_before"] == 0
    assert found["kill"]["errors_after"] == sum(classes.values())
    ops = op_summary(reader, run_id)
    assert sum(r["errors"] for (phase, _op), r in ops.items() if phase == "kill") > 0
    after = [r for (phase, _op), r in ops.items() if phase == "after"]
    assert sum(r["ops"] for r in after) > 0 and sum(r["errors"] for r in after) == 0, after
    with client(mongodb) as c:  # FerretDB is back with the data
        assert c[database]["usertable"].count_documents({}) == RECORDS


def test_wrong_credentials_are_one_line(sandbox: dict, mongodb: dict, tmp_path: Path) -> None:
    wrong = tmp_path / "wrong.pw"
    wrong.write_text("not-the-password\n")
    text = Path(sandbox["inventory"]).read_text()
    inventory = text.replace(json.dumps(mongodb["password_file"]), json.dumps(str(wrong)))
    assert inventory != text
    (tmp_path / "inv.toml").write_text(inventory)
    phases = '[[phases]]\ntype = "load"\n'
    done, reader, _run_id = run_text(tmp_path, scenario("lt_test_never", phases),
                                str(tmp_path / "inv.toml"))
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert (f"MongoDB on host mongo1 ({mongodb['address']}:{mongodb['port']}) refused user "
            f"'{mongodb['username']}': authentication failed") in lines[0]
    assert "not-the-password" not in done.stderr + done.stdout


def test_ycsb_suite_runs_cassandra_and_mongodb_and_compares_them(
    sandbox: dict, mongodb: dict, tmp_path: Path
) -> None:
    keyspace = f"lt_test_suite_{uuid.uuid4().hex[:6]}"
    store = tmp_path / "runs.duckdb"
    try:
        done = run_scenario(
            "ycsb-suite", Path(sandbox["inventory"]), store,
            # the suite's Cassandra and MongoDB targets (an engine package may add its own:
            # tests/redis runs all of them)
            'run_targets=["cassandra", "mongodb"]',
            f"target.keyspace={keyspace}", "dataset.records=2000", "phases[0].concurrency=16",
            "phases[1].duration=5s", "phases[1].rate=200",
            "phases[2].duration=5s", "phases[2].rate=200",
            timeout=240,
        )
    finally:
        with client(mongodb) as c:
            c.drop_database(keyspace)
    assert done.returncode == 0, done.stderr[-3000:]
    run_id = only_run(store)["id"]
    reader = StoreReader(store)
    found = phase_results(reader, run_id)
    assert list(found) == [f"{t}:{p}" for t in ("cassandra", "mongodb")
                           for p in ("insert-only", "heavy-write", "mostly-read")]
    assert found["mongodb:insert-only"]["documents"] == 2000
    ops = op_summary(reader, run_id)
    assert ops[("cassandra:insert-only", "insert")]["ops"] == 2000
    assert ops[("mongodb:insert-only", "insert_batch")]["ops"] == 20  # blocks of 100
    for target in ("cassandra", "mongodb"):
        for phase, (low, high) in {"heavy-write": (0.3, 0.7), "mostly-read": (0.85, 1.0)}.items():
            read, update = ops[(f"{target}:{phase}", "read")], ops[(f"{target}:{phase}", "update")]
            total = read["ops"] + update["ops"]
            assert 0 < total <= 1300, (target, phase, total)  # at most 5 s x 200 ops/s
            assert low <= read["ops"] / total <= high, (target, phase, read["ops"], total)
            assert read["errors"] == update["errors"] == 0
    compare = subprocess.run(
        [sys.executable, "-m", "loadtower", "compare", run_id, "--store", str(store)],
        capture_output=True, text=True, timeout=120,
    )
    assert compare.returncode == 0, compare.stderr
    print(compare.stdout)  # the table, for the record
    for word in ("heavy-write", "mostly-read", "cassandra", "mongodb", "avg", "p95", "p99",
                 "return codes", "OK "):
        assert word in compare.stdout, word
