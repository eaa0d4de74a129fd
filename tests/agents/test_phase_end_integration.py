"""The end of a phase through the real path: a Locust master and two worker processes
(`orchestrator/standalone_load.LocalLoad`, as `loadtower agent run` starts them) against the real
ClickHouse engine (chdb over HTTP, no sandbox needed). The master's `phase_done` and
`stopped` must come after every interval line of the phase and every worker's drain
event, and no line of the phase after them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from loadtower.engines.clickhouse.sandbox.chdb_server import chdb_server
from loadtower.orchestrator.standalone_load import LocalLoad
from loadtower.protocol.version import PROTOCOL_VERSION
from loadtower.scenarios.models import Dataset, Target, Workload, as_plain
from loadtower.scenarios.workloads.target_spec import builtin_workload_file

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

PASSWORD = "s3cret-drain"
WORKERS = 2
RECORDS = 3000  # blocks of 100 rows: 30 inserts


@pytest.fixture(scope="module")
def endpoint() -> Iterator[tuple[str, int]]:
    with chdb_server(user="bench", password=PASSWORD) as address:
        yield address


def phase_lines(lines: list[dict[str, Any]], phase: str) -> list[int]:
    """Positions of the phase's interval lines and drain events."""
    return [
        i
        for i, x in enumerate(lines)
        if x.get("phase") == phase and (x.get("type") == "interval" or x.get("kind") == "drain")
    ]


def position(lines: list[dict[str, Any]], kind: str) -> int:
    [at] = [i for i, x in enumerate(lines) if x.get("type") == kind]
    return at


def ops(lines: list[dict[str, Any]], phase: str) -> int:
    return sum(
        s["ops"]
        for x in lines
        if x.get("type") == "interval" and x["phase"] == phase
        for s in x["ops"].values()
    )


def test_acks_come_after_every_line_of_the_phase(endpoint: tuple[str, int]) -> None:
    import clickhouse_connect

    host, port = endpoint
    target = Target.model_validate({"keyspace": "lt_drain", "settings": {}})
    dataset = Dataset(records=RECORDS, fields=4, field_size=16)
    workload = Workload.model_validate({"preset": "recipes"})
    spec = {
        "engine": "clickhouse",
        "target": as_plain(target),
        "dataset": as_plain(dataset),
        "workload": as_plain(workload),
        "workload_name": "w",
        "workload_file": builtin_workload_file("clickhouse", target, dataset, workload),
    }
    base = {"cmd": "start", "protocol": PROTOCOL_VERSION, "spec": spec, "contact_points": [f"{host}:{port}"],
            "port": None, "username": "bench", "password": PASSWORD}
    lines: list[dict[str, Any]] = []
    local = LocalLoad(WORKERS, lines.append)
    try:
        local.wait_for("worker_joined", 60, count=WORKERS)
        local.send({**base, "phase": "load", "mode": "load", "records": RECORDS,
                    "concurrency": 8})
        local.wait_for("phase_done", 120)
        done = position(lines, "phase_done")
        assert max(phase_lines(lines, "load")) < done
        drains = [x for x in lines[:done] if x.get("kind") == "drain"]
        assert sorted(x["agent"] for x in drains) == sorted({x["agent"] for x in drains})
        assert len(drains) == WORKERS and all(x["data"]["abandoned"] == 0 for x in drains)
        loaded = ops(lines[:done], "load")
        assert loaded == RECORDS // 100  # every insert of the load, before phase_done
        client = clickhouse_connect.get_client(host=host, port=port, username="bench",
                                               password=PASSWORD)
        try:
            assert client.command("SELECT count() FROM lt_drain.recipes") == RECORDS
        finally:
            client.close()

        local.send({**base, "phase": "mix", "mode": "run", "users": 4, "records": RECORDS})
        local.wait_for("started", 120)
        local.drain(2.5)
        local.send({"cmd": "stop"})
        local.wait_for("stopped", 60)
        stopped = position(lines, "stopped")
        run_ops = ops(lines[:stopped], "mix")
        assert run_ops > 0
        drains = [x for x in lines[:stopped] if x.get("kind") == "drain" and x["phase"] == "mix"]
        assert len(drains) == WORKERS
    finally:
        local.close()
    # nothing of either phase came after its acknowledgement
    assert max(phase_lines(lines, "mix")) < stopped and ops(lines, "mix") == run_ops
    assert ops(lines, "load") == loaded
    seen = set()
    for x in lines:
        if x.get("type") == "interval":
            key = (x["agent"], x["phase"], x["ts"])
            assert key not in seen, key  # one line per agent, phase and second
            seen.add(key)
            if x["ops"]:
                first, last = x["span"]
                assert first <= last and int(last) == x["ts"]  # the completion second
