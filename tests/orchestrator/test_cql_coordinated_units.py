"""Cassandra's `coordinated` hook (engines/cassandra/orchestrator/coordinated.py): the three
coordinator tables of the target's keyspace (and table), their counts summed; ScyllaDB has
no such tables and no hook."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from loadtower.engines.cassandra.orchestrator import coordinated as cc
from loadtower.scenarios.engine_hooks import hook
from loadtower.scenarios.plan import load_plan
from tests.scenarios.conftest import INVENTORY, SCENARIO


def test_queries_read_the_three_coordinator_tables_of_the_keyspace() -> None:
    got = cc.queries("ks", None)
    assert got == [f"SELECT count FROM system_views.{t} WHERE keyspace_name = 'ks'"
                   for t in cc.TABLES]
    assert cc.queries("k's", "t")[0].endswith("keyspace_name = 'k''s' AND table_name = 't'")


def test_the_hook_sums_every_tables_counts_on_one_connection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "inv.toml").write_text(INVENTORY)
    (tmp_path / "sc.toml").write_text(SCENARIO)
    plan = load_plan(tmp_path / "sc.toml", tmp_path / "inv.toml")
    asked: list[tuple[str, list[str], float]] = []

    async def cql_queries(actions: Any, plan: Any, host: str, cqls: list[str],
                          timeout: float) -> list[list[dict[str, Any]]]:
        asked.append((host, cqls, timeout))
        return [[{"count": 5}, {"count": None}], [{"count": 7}], []]

    monkeypatch.setattr(cc, "cql_queries", cql_queries)
    assert asyncio.run(cc.coordinated(None, plan, "db1", 3.0)) == 12
    assert asked == [("db1", cc.queries(plan.scenario.target.keyspace, None), 3.0)]


def test_cassandra_declares_the_hook_scylla_does_not() -> None:
    assert hook("cassandra", "coordinated") is cc.coordinated
    assert hook("scylla", "coordinated") is None
