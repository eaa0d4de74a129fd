"""The per-phase coordinator record: which nodes are asked (those of an engine with the
``coordinated`` hook), bounded, and the deltas."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

import pytest

from loadtower.orchestrator import coordinators as co
from loadtower.protocol import engine_kinds
from loadtower.scenarios.plan import load_plan
from tests.scenarios.conftest import INVENTORY, SCENARIO


def _plan(tmp_path: Path, scenario: str = SCENARIO):  # noqa: ANN202
    (tmp_path / "inv.toml").write_text(INVENTORY)
    (tmp_path / "sc.toml").write_text(scenario)
    return load_plan(tmp_path / "sc.toml", tmp_path / "inv.toml")


def test_every_cassandra_host_is_asked_standby_too_and_no_other_engine(tmp_path: Path) -> None:
    assert co.hosts_of(_plan(tmp_path)) == ["db1", "db2"]
    scylla = SCENARIO.replace('engine = "cassandra"', 'engine = "scylla"')
    assert co.hosts_of(_plan(tmp_path, scylla)) == []


def test_an_engine_without_the_coordinated_hook_has_no_coordinator_hosts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hook, not the engine's name, decides: the same hosts without it are not asked."""
    cassandra = engine_kinds.kind("cassandra")
    hooks = {k: v for k, v in cassandra.hooks.items() if k != "coordinated"}
    monkeypatch.setitem(engine_kinds._registered(), "cassandra", replace(cassandra, hooks=hooks))
    assert co.hosts_of(_plan(tmp_path)) == []
    assert co.PhaseCoordinators(None, _plan(tmp_path), standby=set()).hosts == []


def test_a_snapshot_asks_the_hook_each_node_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """db1 answers; db2 never does and is named once twice the timeout has passed."""
    async def coordinated(actions: object, plan: object, host: str, timeout: float) -> int:
        if host == "db2":
            await asyncio.sleep(60)
        return 42

    monkeypatch.setattr(co, "hook", lambda engine, name: coordinated)
    counts, missing = asyncio.run(co.snapshot(None, _plan(tmp_path), ["db1", "db2"], 0.05))
    assert counts == {"db1": 42}
    assert list(missing) == ["db2"]


def test_deltas_and_the_line() -> None:
    # db3 restarted during the phase (its count went down): from zero
    assert co.deltas({"db1": 100, "db2": 50, "db3": 900}, {"db1": 400, "db2": 50, "db3": 7}) == {
        "db1": 300, "db2": 0, "db3": 7}
    assert co.line("ycsb-a", {"db1": 300, "db2": 100}, ["db3"]) == (
        "phase ycsb-a: requests coordinated per node: db1 300 (75%), db2 100 (25%); "
        "no answer from db3"
    )
    assert co.line("p", {}, []) == "phase p: requests coordinated per node: none"


def test_a_standby_that_never_ran_is_no_news_a_silent_node_is_named(
    tmp_path: Path, monkeypatch
) -> None:
    answers = {"db1": [120, 170]}  # db2 (standby) never answers; db1 does twice

    async def fake_count(actions: object, plan: object, host: str, timeout: float) -> int:
        if host not in answers or not answers[host]:
            raise ConnectionRefusedError(f"{host}: connection refused")
        return answers[host].pop(0)

    monkeypatch.setattr(co, "_count", fake_count)
    phase = co.PhaseCoordinators(None, _plan(tmp_path), standby={"db2"})
    asyncio.run(phase.start())
    assert asyncio.run(phase.finish()) == ({"db1": 50}, [])
    # db1 stops answering: named, with no count; the standby still is not
    answers["db1"] = [10]
    phase = co.PhaseCoordinators(None, _plan(tmp_path), standby={"db2"})
    asyncio.run(phase.start())
    assert asyncio.run(phase.finish()) == ({}, ["db1"])
