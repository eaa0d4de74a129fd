"""The agent's engine runs a workload file's phases on the real ClickHouse engine (chdb
over HTTP): the phase spec's ``workload_file`` as the orchestrator renders it, worker 0's
DDL, the load op over the phase's keys in blocks of batch_size rows, then a closed-model
run phase of study 1's ops with HDR lines per op, no errors (its reads that must find
rows find them)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from loadtower.agents.driver_loop import DriverLoop
from loadtower.engines.clickhouse.sandbox.chdb_server import chdb_server
from loadtower.scenarios.models import Dataset, Target, Workload, as_plain
from loadtower.scenarios.workloads.loader import load_workload_file
from loadtower.scenarios.workloads.scenario_files import with_weights
from loadtower.scenarios.workloads.target_spec import render_for_target
from tests.clickhouse.test_clickhouse_backend import PASSWORD, config, op_totals, scalar, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

STUDY1 = Path(__file__).resolve().parents[2] / "scenarios/examples/workloads/study1-recipes.toml"
OPS = ("select_by_id", "insert_100", "multi_condition", "update_title", "price_range",
       "aggregate")
DB = "lt_wl_engine"


@pytest.fixture(scope="module")
def endpoint() -> Iterator[tuple[str, int]]:
    with chdb_server(user="bench", password=PASSWORD) as address:
        yield address


def phase_spec(records: int) -> dict:
    checked = load_workload_file(STUDY1, {"batch_size": 20})
    weights = {op: 1.0 for op in OPS} | {"insert_one": 0, "delete_one": 0, "delete_100": 0}
    checked = with_weights(checked, weights, lambda *_: AssertionError("weights"))
    workload = Workload(file=str(STUDY1))
    target = Target(keyspace=DB, settings={"mutations_sync": 0})
    return {
        "engine": "clickhouse",
        "target": as_plain(target),
        "dataset": as_plain(Dataset(records=records, fields=4, field_size=16)),
        "workload": as_plain(workload),
        "workload_name": "study1",
        "workload_file": render_for_target(checked, workload, "clickhouse", target),
    }


def test_engine_loads_and_runs_study1_from_the_file(endpoint: tuple[str, int]) -> None:
    scalar(endpoint, f"DROP DATABASE IF EXISTS {DB}")
    lines: list[dict] = []
    engine = DriverLoop("agent1/0", "agent1", out=lines.append)
    engine.start()
    try:
        the_spec = phase_spec(records=250)
        engine.call(engine.configure(config(endpoint, "load", "load", the_spec)), 60)
        for lane in (1, 2):
            engine.add_lane(lane)
        wait_for(lambda: any(x.get("type") == "load_done" for x in lines), 60, "load_done")
        engine.stop_lanes()
        wait_for(lambda: sum(op_totals(lines, "load").get("insert_one", (0, 0))) >= 3, 10,
                 "the load intervals")
        time.sleep(1.2)
        assert op_totals(lines, "load") == {"insert_one": (3, 0)}  # 100 + 100 + 50 rows
        assert scalar(endpoint, f"SELECT count() FROM {DB}.recipes") == 250

        engine.call(engine.configure(config(endpoint, "mix", "run", the_spec)), 60)
        for lane in (3, 4):
            engine.add_lane(lane)
        wait_for(lambda: all(op_totals(lines, "mix").get(op, (0, 0))[0] >= 3 for op in OPS),
                 90, "every op three times")
        engine.stop_lanes()
        time.sleep(1.5)
        totals = op_totals(lines, "mix")
        assert set(totals) == set(OPS)
        assert all(errors == 0 for _ops, errors in totals.values()), totals
        inserted = totals["insert_100"][0] * 20
        assert scalar(endpoint, f"SELECT count() FROM {DB}.recipes") == 250 + inserted
    finally:
        engine.shutdown()
        scalar(endpoint, f"DROP DATABASE IF EXISTS {DB}")
