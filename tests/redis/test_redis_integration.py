"""Redis as an engine, end to end through `loadtower run`, on the session sandbox's real
redis-server (host redis1): load + YCSB A-F at fixed rates with no error and exact
record counts; a redis-server killed during a run (fault phases `kill`, then `start`)
shows as errors by class and the run completes, its data back from its snapshot; wrong
credentials are one line; and the built-in ycsb-suite runs Cassandra, MongoDB and Redis
from one command, with study 4's compare table.

Each test's keys live under a keyspace of its own (KEYSPACE:usertable:...), removed
afterwards."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis as redis_py

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


def client(info: dict) -> redis_py.Redis:
    return redis_py.Redis(host=info["address"], port=info["port"], username=info["username"],
                          password=info["password"], socket_timeout=30, decode_responses=True)


def drop(info: dict, keyspace: str) -> None:
    with client(info) as c:
        for key in c.scan_iter(match=f"{keyspace}:*", count=1000):
            c.delete(key)


@pytest.fixture
def keyspace(redis: dict) -> Iterator[str]:
    name = f"lt_test_{uuid.uuid4().hex[:10]}"
    try:
        yield name
    finally:
        drop(redis, name)


def scenario(keyspace: str, phases: str, workloads: str = "") -> str:
    return f"""\
name = "redis-test"
engine = "redis"

[target]
keyspace = "{keyspace}"

[dataset]
records = {RECORDS}
fields = 4
field_size = 50

{workloads}
{phases}
"""


def test_load_and_ycsb_a_to_f_at_fixed_rates(
    sandbox: dict, redis: dict, keyspace: str, tmp_path: Path
) -> None:
    workloads, phases = ycsb_a_to_f_text(dict.fromkeys(YCSB_OPS, 100))
    done, reader, run_id = run_text(tmp_path, scenario(keyspace, phases, workloads),
                               sandbox["inventory"])
    assert done.returncode == 0, done.stderr[-3000:]
    assert reader.runs()[0]["status"] == "completed"
    ops = op_summary(reader, run_id)
    assert ops[("load", "insert_batch")]["ops"] == RECORDS // 50  # pipelines of 50 records
    assert ops[("load", "insert_batch")]["errors"] == 0
    found = phase_results(reader, run_id)
    assert found["load"]["members"] == RECORDS
    assert found["load"]["index"] == f"{keyspace}:usertable"
    for w, expected in YCSB_OPS.items():
        names = {op for (phase, op) in ops if phase == w}
        assert names == expected, (w, names)
        assert all(ops[(w, op)]["errors"] == 0 for op in names), w
        assert sum(ops[(w, op)]["ops"] for op in names) > 0, w
    with client(redis) as c:
        assert c.zcard(f"{keyspace}:usertable") == RECORDS + ops[("d", "insert")]["ops"]
        key = c.zrange(f"{keyspace}:usertable", 0, 0)[0]
        assert sorted(c.hgetall(key)) == [f"field{i}" for i in range(4)]


def test_a_killed_redis_shows_as_errors_by_class_and_the_run_completes(
    sandbox: dict, redis: dict, keyspace: str, tmp_path: Path
) -> None:
    phases = """\
[[phases]]
type = "load"
name = "load"

[[phases]]
type = "fault"
name = "kill"
host = "redis1"
action = "kill"
after = "2s"
duration = "6s"
rate = 100

[[phases]]
type = "fault"
name = "start"
host = "redis1"
action = "start"
duration = "0s"

[[phases]]
type = "run"
name = "after"
duration = "3s"
rate = 100
"""
    with client(redis) as c:  # the load is kept by a snapshot before the kill
        c.execute_command("CONFIG", "SET", "save", "1 1")
    try:
        done, reader, run_id = run_text(tmp_path, scenario(keyspace, phases), sandbox["inventory"])
    finally:  # whatever happened: the sandbox's Redis runs for the next tests
        subprocess.run([sys.executable, "-m", "loadtower", "sandbox", "redis", "start",
                        "--dir", sandbox["dir"]], capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert reader.runs()[0]["status"] == "completed"
    found = phase_results(reader, run_id)
    assert found["kill"]["exit_status"] == 0 and found["start"]["exit_status"] == 0
    classes = found["kill"]["errors_by_class_after"]
    assert classes and set(classes) <= {"RedisConnection", "RedisTimeout", "RedisLoading",
                                        "DrainTimeout"}, classes
    assert found["kill"]["errors_before"] == 0
    ops = op_summary(reader, run_id)
    after = [r for (phase, _op), r in ops.items() if phase == "after"]
    assert sum(r["ops"] for r in after) > 0 and sum(r["errors"] for r in after) == 0, after


def test_wrong_credentials_are_one_line(sandbox: dict, redis: dict, tmp_path: Path) -> None:
    wrong = tmp_path / "wrong.pw"
    wrong.write_text("not-the-password\n")
    text = Path(sandbox["inventory"]).read_text()
    inventory = text.replace(json.dumps(redis["password_file"]), json.dumps(str(wrong)))
    assert inventory != text
    (tmp_path / "inv.toml").write_text(inventory)
    done, _reader, _run_id = run_text(tmp_path, scenario("lt_test_never", '[[phases]]\ntype = "load"\n'),
                                 str(tmp_path / "inv.toml"))
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert (f"Redis on host redis1 ({redis['address']}:{redis['port']}) refused user "
            f"'{redis['username']}': authentication failed") in lines[0]
    assert "not-the-password" not in done.stderr + done.stdout


def test_ycsb_suite_runs_cassandra_mongodb_and_redis_and_compares_them(
    sandbox: dict, redis: dict, mongodb: dict, tmp_path: Path
) -> None:
    keyspace = f"lt_test_suite_{uuid.uuid4().hex[:6]}"
    store = tmp_path / "runs.duckdb"
    try:
        done = run_scenario(
            "ycsb-suite", Path(sandbox["inventory"]), store,
            f"target.keyspace={keyspace}", "dataset.records=2000", "phases[0].concurrency=16",
            "phases[1].duration=5s", "phases[1].rate=200",
            "phases[2].duration=5s", "phases[2].rate=200",
            timeout=280,
        )
    finally:
        drop(redis, keyspace)
        import pymongo

        with pymongo.MongoClient(mongodb["url"], username=mongodb["username"],
                                 password=mongodb["password"],
                                 serverSelectionTimeoutMS=10_000) as c:
            c.drop_database(keyspace)
    assert done.returncode == 0, done.stderr[-3000:]
    run_id = only_run(store)["id"]
    reader = StoreReader(store)
    found = phase_results(reader, run_id)
    assert list(found) == [f"{t}:{p}" for t in ("cassandra", "mongodb", "redis")
                           for p in ("insert-only", "heavy-write", "mostly-read")]
    assert found["redis:insert-only"]["members"] == 2000
    ops = op_summary(reader, run_id)
    assert ops[("redis:insert-only", "insert_batch")]["ops"] == 20  # pipelines of 100
    for phase, (low, high) in {"heavy-write": (0.3, 0.7), "mostly-read": (0.85, 1.0)}.items():
        read, update = ops[(f"redis:{phase}", "read")], ops[(f"redis:{phase}", "update")]
        total = read["ops"] + update["ops"]
        assert 0 < total <= 1300, (phase, total)  # at most 5 s x 200 ops/s
        assert low <= read["ops"] / total <= high, (phase, read["ops"], total)
        assert read["errors"] == update["errors"] == 0
    compare = subprocess.run(
        [sys.executable, "-m", "loadtower", "compare", run_id, "--store", str(store)],
        capture_output=True, text=True, timeout=120,
    )
    assert compare.returncode == 0, compare.stderr
    print(compare.stdout)  # study 4's table, for the record
    for word in ("heavy-write", "mostly-read", "cassandra", "mongodb", "redis", "p99",
                 "return codes", "OK "):
        assert word in compare.stdout, word
    # study 4's insert-only cell: Redis's load counts pipelines as ops, so the cell gives
    # its rows per second too, the figure its load phase's result gives
    load = found["redis:insert-only"]
    assert load["rows_per_op"] == 100 and load["rows"] == 2000
    assert f"({load['rows_per_s']:,.1f} rows/s)" in compare.stdout
