"""A workload file's ``mongodb`` slot, end to end through `loadtower run` on the session
sandbox's FerretDB (host mongo1; a MongoDB-protocol stand-in: its timings are FerretDB's,
only counts are checked here):

- a table keyed by (region, order_id) (fields and a compound index), loaded, then an
  insert, an update, a multi-condition select (find on two fields), a range select
  ($gte/$lt, sort, limit) and an aggregate ($match, $group), the reads of loaded keys
  with expect = "rows", in one run; `loadtower compare RUN --engines --json` shows every
  op with 0 errors and the collection holds exactly the loaded and inserted documents;
- a data set (a CSV of a few thousand rows written here) loaded into a collection: the
  count is exact and the values have their BSON types (uuid: binary subtype 4, dates);
- the built-in ycsb workload FILE (file = "ycsb", its mongodb slots) loaded and run:
  every op without error, the documents exactly the loaded and inserted ones.

One run of a few seconds. Run under `flock /tmp/lt-integration.lock`."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.mongodb.test_mongodb_integration import client
from tests.orchestrator.run_helpers import op_summary, phase_results, remove_shipped, run_text

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

RECORDS = 400
PEOPLE = 3000
RUN_OPS = ("insert", "get", "pay", "by_status", "recent", "totals")
# insert beside insert_batch: their `sequence` keys share one counter, so no _id is
# inserted twice (MongoDB would refuse it: MongoDuplicateKey; CQL overwrites silently)
YCSB_OPS = ("read", "update", "scan", "read_modify_write", "insert", "insert_batch")
YCSB_BATCH = 10

ORDERS = """\
name = "orders"
load = "insert"

[vars]
regions = 8

[tables.orders]
partition_key = ["region"]
clustering_key = ["order_id"]
[tables.orders.columns]
region = "text"
order_id = "bigint"
status = "text"
amount = "double"
ts = "timestamp"
[tables.orders.mongodb]
indexes = [{ region = 1, order_id = 1 }, { region = 1, ts = -1 }]

[ops.insert]
weight = 2
key = { gen = "sequence" }
mongodb = { call = "insert_one", collection = "${orders}", document = { _id = ":order_id", region = ":region", order_id = ":order_id", status = ":status", amount = ":amount", ts = ":ts" } }
bind.order_id = { gen = "key" }
bind.region = { gen = "key", prefix = "r", modulo = "${regions}" }
bind.status = { gen = "choice", values = ["new", "paid", "shipped"] }
bind.amount = { gen = "float", min = 1, max = 500 }
bind.ts = { gen = "key", step = "1s" }

[ops.get]
weight = 4
expect = "rows"
key = { gen = "uniform" }
mongodb = { call = "find_one", collection = "${orders}", filter = { region = ":region", order_id = ":order_id" } }
bind.region = { gen = "key", prefix = "r", modulo = "${regions}" }
bind.order_id = { gen = "key" }

[ops.pay]
weight = 2
expect = "rows"
key = { gen = "uniform" }
mongodb = { call = "update_one", collection = "${orders}", filter = { region = ":region", order_id = ":order_id" }, update = { "$set" = { status = ":status" }, "$inc" = { amount = ":extra" } } }
bind.region = { gen = "key", prefix = "r", modulo = "${regions}" }
bind.order_id = { gen = "key" }
bind.status = { gen = "choice", values = ["paid", "shipped"] }
bind.extra = { gen = "float", min = 0, max = 5 }

[ops.by_status]
weight = 1
key = { gen = "uniform" }
mongodb = { call = "find", collection = "${orders}", filter = { region = ":region", status = ":status" }, limit = 20 }
bind.region = { gen = "key", prefix = "r", modulo = "${regions}" }
bind.status = { gen = "choice", values = ["new", "paid", "shipped"] }

[ops.recent]
weight = 1
expect = "rows"
key = { gen = "uniform" }
mongodb = { call = "find", collection = "${orders}", filter = { region = ":region", ts = { "$gte" = ":since", "$lt" = ":until" } }, sort = { ts = 1 }, limit = ":n" }
bind.region = { gen = "key", prefix = "r", modulo = "${regions}" }
bind.since = { gen = "key", step = "1s" }
bind.until = { gen = "key", step = "1s", start = "2024-01-01T00:01:00+00:00" }
bind.n = { gen = "int", min = 1, max = 10 }

[ops.totals]
weight = 1
expect = "rows"
key = { gen = "uniform" }
mongodb = { call = "aggregate", collection = "${orders}", pipeline = [{ "$match" = { region = ":region" } }, { "$group" = { _id = "$status", n = { "$sum" = 1 }, total = { "$sum" = "$amount" } } }] }
bind.region = { gen = "key", prefix = "r", modulo = "${regions}" }
"""

PEOPLE_FILE = """\
name = "people"
[datasets.people]
file = "people.csv"
columns = { id = "bigint", name = "text", uid = "uuid", born = "date", seen = "timestamp", score = "double" }

[tables.people]
partition_key = ["id"]
[tables.people.columns]
id = "bigint"
name = "text"
uid = "uuid"
born = "date"
seen = "timestamp"
score = "double"

[ops.insert]
batch = 50
mongodb = { call = "insert_one", collection = "${people}", document = { _id = ":id", name = ":name", uid = ":uid", born = ":born", seen = ":seen", score = ":score" } }
bind.id = { gen = "dataset", column = "id" }
bind.name = { gen = "dataset", column = "name" }
bind.uid = { gen = "dataset", column = "uid" }
bind.born = { gen = "dataset", column = "born" }
bind.seen = { gen = "dataset", column = "seen" }
bind.score = { gen = "dataset", column = "score" }
"""


def person(i: int) -> tuple[int, str, uuid.UUID, str, str, float]:
    born = (datetime(1950, 1, 1) + timedelta(days=i * 7)).date().isoformat()
    seen = (datetime(2025, 1, 1, tzinfo=UTC) + timedelta(seconds=i)).isoformat()
    return i, f"name{i}", uuid.UUID(int=i + 1), born, seen, i / 4


@pytest.fixture
def database(mongodb: dict) -> Iterator[str]:
    name = f"lt_wf_{uuid.uuid4().hex[:10]}"
    try:
        yield name
    finally:
        with client(mongodb) as c:
            c.drop_database(name)


def test_a_workload_file_and_a_data_set_on_mongodb(
    sandbox: dict, mongodb: dict, database: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    (tmp_path / "orders.toml").write_text(ORDERS)
    (tmp_path / "people.toml").write_text(PEOPLE_FILE)
    lines = ["id,name,uid,born,seen,score"]
    lines += [",".join(map(str, person(i))) for i in range(PEOPLE)]
    (tmp_path / "people.csv").write_text("\n".join(lines) + "\n")
    # the copy the run puts on the agent host (this machine) goes with the test
    request.addfinalizer(lambda: remove_shipped(sandbox, {"people": tmp_path / "people.csv"}))
    text = f"""\
name = "mongo-workload-file"
engine = "mongodb"

[target]
keyspace = "{database}"
write_concern = "majority"

[dataset]
records = {RECORDS}

[workloads.orders]
file = "orders.toml"

[workloads.people]
file = "people.toml"

[workloads.y]
file = "ycsb"
table = "ycsb_file"
batch_size = {YCSB_BATCH}
weights = {{ {", ".join(f"{op} = 1" for op in YCSB_OPS)} }}

[[phases]]
type = "load"
name = "load"
workload = "orders"
concurrency = 4

[[phases]]
type = "run"
name = "mix"
workload = "orders"
duration = "4s"
rate = 60

[[phases]]
type = "load"
name = "people"
workload = "people"

[[phases]]
type = "load"
name = "ycsb-load"
workload = "y"

[[phases]]
type = "run"
name = "ycsb"
workload = "y"
duration = "3s"
rate = 60
"""
    done, reader, run_id = run_text(tmp_path, text, sandbox["inventory"])
    assert done.returncode == 0, done.stderr[-3000:]
    ops = op_summary(reader, run_id)
    # the load: insert_one with batch 1 -> blocks of the workload's batch_size (100)
    assert ops[("load", "insert")]["ops"] == RECORDS // 100
    assert ops[("load", "insert")]["errors"] == 0
    found = phase_results(reader, run_id)
    assert found["load"]["documents"] == RECORDS
    assert found["load"]["collection"] == f"{database}.orders"

    table = subprocess.run(
        [sys.executable, "-m", "loadtower", "compare", run_id, "--store",
         str(tmp_path / "runs.duckdb"), "--engines", "--phase", "mix", "--json"],
        capture_output=True, text=True, timeout=120,
    )
    assert table.returncode == 0, table.stderr
    rows = {r["op"]: r for r in json.loads(table.stdout) if r["op"] != "total"}
    assert set(rows) == set(RUN_OPS), rows
    for op in RUN_OPS:
        assert rows[op]["engine"] == "mongodb" and rows[op]["ops"] > 0, (op, rows[op])
        assert rows[op]["errors"] == 0, (op, rows[op])

    # the people data set: every CSV row once, 50 documents per insert_many
    assert found["people"]["documents"] == PEOPLE
    assert ops[("people", "insert")]["errors"] == 0
    assert ops[("people", "insert")]["ops"] == PEOPLE // 50
    with client(mongodb) as c:
        db = c[database]
        assert db["orders"].count_documents({}) == RECORDS + rows["insert"]["ops"]
        assert {tuple(i["key"].items()) for i in db["orders"].list_indexes()} >= {
            (("region", 1), ("order_id", 1)), (("region", 1), ("ts", -1))}
        assert db["people"].count_documents({}) == PEOPLE
        doc = db["people"].find_one({"_id": 1234})
    # the built-in ycsb file on MongoDB: every op, no error, exact documents
    assert found["ycsb-load"]["documents"] == RECORDS
    ycsb = {op: ops[("ycsb", op)] for op in YCSB_OPS}
    assert all(r["ops"] > 0 and r["errors"] == 0 for r in ycsb.values()), ycsb
    with client(mongodb) as c:
        assert c[database]["ycsb_file"].count_documents({}) == (
            RECORDS + ycsb["insert"]["ops"] + YCSB_BATCH * ycsb["insert_batch"]["ops"])
    _, name, uid, born, seen, score = person(1234)
    assert doc is not None and doc["name"] == name and doc["score"] == score
    assert doc["uid"].subtype == 4 and doc["uid"].as_uuid() == uid
    assert doc["born"] == datetime.fromisoformat(born)  # midnight UTC (naive: pymongo's)
    assert doc["seen"] == datetime.fromisoformat(seen).replace(tzinfo=None)
