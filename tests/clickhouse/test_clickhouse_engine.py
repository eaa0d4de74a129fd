"""The ClickHouse engine (clickhouse-connect) against real ClickHouse SQL (chdb over HTTP).

The session against the built-ins' statements as the engines' code made them
(tests/scenarios/builtin_reference.py, which the shipped workload files render exactly),
with their rows, keys and where-tuples.
"""

from __future__ import annotations

import asyncio
import random
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from loadtower.agents.workload.values import ValuePool
from loadtower.engines.clickhouse.agent.session import ClickhouseOverloaded, ClickhouseSession
from loadtower.engines.clickhouse.sandbox.chdb_server import chdb_server
from tests.scenarios.builtin_reference import Rows, default_table
from tests.scenarios.builtin_reference import clickhouse_ddl as ddl
from tests.scenarios.builtin_reference import clickhouse_statements as statements

PASSWORD = "secret"
FIELDS = 4
BATCH = 100


@pytest.fixture(scope="module")
def endpoint() -> Iterator[tuple[str, int]]:
    with chdb_server(user="default", password=PASSWORD) as address:
        yield address


def make_ops(schema: str, session: ClickhouseSession) -> Rows:
    return Rows(schema, ValuePool(random.Random(7)), FIELDS, 16)


async def connect(endpoint: tuple[str, int], database: str, **kw: Any) -> ClickhouseSession:
    session = ClickhouseSession(threads=4)
    host, port = endpoint
    await session.connect(
        [host], port, "default", PASSWORD, "LOCAL_QUORUM", database=database, **kw
    )
    return session


async def exercise(endpoint: tuple[str, int], schema: str, settings: dict | None = None) -> None:
    database = f"lt_{schema}_{'mut' if settings else 'lw'}"
    table = default_table(schema)
    s = await connect(endpoint, database, settings=settings)
    try:
        await s.ddl(ddl(schema, database, table, FIELDS, 3600 if schema == "ttl" else None))
        await s.prepare(statements(schema, database, table, FIELDS))  # as the agent does
        mutation = (settings or {}).get("delete_mode") == "mutation"
        assert s.statements["delete"].startswith("ALTER TABLE" if mutation else "DELETE FROM")
        ops = make_ops(schema, s)

        async def count() -> int:
            return int(await s.scalar(f"SELECT count() FROM {database}.{table} FINAL"))

        await s.execute("insert", ops.row(0))
        assert await count() == 1
        await s.batch("insert", [ops.row(k) for k in range(1, BATCH + 1)])
        assert await count() == BATCH + 1
        # insert and read back one row exactly
        row = ops.row(500)
        await s.execute("insert", row)
        assert await s.execute("read", ops.where(500)) == [row]
        assert await count() == BATCH + 2
        # update: a new value seen by read, no new row
        if schema == "ycsb":
            await s.execute("update2", ("changed", ops.key(500)))
            expected = (row[0], row[1], row[2], "changed", *row[4:])
        else:
            expected = ops.row(500)
            assert expected != row
            await s.execute("insert", expected)
        assert await s.execute("read", ops.where(500)) == [expected]
        assert await count() == BATCH + 2
        if schema == "ycsb":
            keys = sorted(ops.key(k) for k in range(BATCH + 1))
            rows = await s.execute("scan", (keys[10], 5))
            assert [r[0] for r in rows] == keys[10:15]
        # delete 1, then a batch of BATCH (one statement)
        await s.execute("delete", ops.where(500))
        assert await s.execute("read", ops.where(500)) == []
        assert await count() == BATCH + 1
        await s.batch("delete", [ops.where(k) for k in range(1, BATCH + 1)])
        assert await count() == 1
        assert await s.execute("read", ops.where(0)) != []
        seconds = await s.optimize_final(table)
        assert seconds > 0
        assert await count() == 1
    finally:
        await s.close()


@pytest.mark.integration
@pytest.mark.timeout(120)
@pytest.mark.parametrize("schema", ["ycsb", "recipes", "ttl"])
def test_schema_ops(endpoint: tuple[str, int], schema: str) -> None:
    asyncio.run(exercise(endpoint, schema))


@pytest.mark.integration
@pytest.mark.timeout(120)
@pytest.mark.parametrize("schema", ["ycsb", "recipes"])
def test_mutation_deletes(endpoint: tuple[str, int], schema: str) -> None:
    asyncio.run(exercise(endpoint, schema, {"delete_mode": "mutation", "mutations_sync": 2}))


@pytest.mark.integration
@pytest.mark.timeout(120)
def test_ttl_clause(endpoint: tuple[str, int]) -> None:
    async def run() -> str:
        s = await connect(endpoint, "lt_ttl_clause")
        try:
            await s.ddl(ddl("ttl", "lt_ttl_clause", "ttl_rows", FIELDS, 90))
            await s.ddl(ddl("ttl", "lt_ttl_clause", "ttl_rows", FIELDS, 30))  # the new TTL wins
            return str(await s.scalar("SHOW CREATE TABLE lt_ttl_clause.ttl_rows"))
        finally:
            await s.close()

    create = asyncio.run(run())
    assert "TTL inserted + toIntervalSecond(30)" in create


@pytest.mark.integration
@pytest.mark.timeout(120)
def test_wrong_password(endpoint: tuple[str, int]) -> None:
    from clickhouse_connect.driver.exceptions import DatabaseError

    async def run() -> None:
        s = ClickhouseSession(threads=1)
        try:
            await s.connect([endpoint[0]], endpoint[1], "default", "wrong", "ONE")
        finally:
            await s.close()

    with pytest.raises(DatabaseError) as info:
        asyncio.run(run())
    assert info.value.code == 516
    assert "AUTHENTICATION_FAILED" in str(info.value)


@pytest.mark.integration
@pytest.mark.timeout(120)
def test_clickhouse_connect_direct(endpoint: tuple[str, int]) -> None:
    import clickhouse_connect

    host, port = endpoint
    client = clickhouse_connect.get_client(
        host=host, port=port, username="default", password=PASSWORD, database="default"
    )
    try:
        assert client.query("SELECT 1").result_rows == [(1,)]
        client.command(
            "CREATE TABLE direct (k UInt64, u UUID, f Float32, s String, n Nullable(Int64)) "
            "ENGINE = MergeTree ORDER BY k"
        )
        rows = [[i, uuid.uuid4(), i / 2, f"s{i}", None if i % 2 else -i] for i in range(50)]
        client.insert("direct", rows, column_names=["k", "u", "f", "s", "n"])
        got = client.query("SELECT k, u, f, s, n FROM direct ORDER BY k").result_rows
        assert got == [tuple(r) for r in rows]
        assert (
            client.command("SELECT count() FROM direct WHERE k < {k:UInt64}", parameters={"k": 10})
            == 10
        )
    finally:
        client.close()


@pytest.mark.integration
@pytest.mark.timeout(120)
def test_delete_mode_statements() -> None:
    lightweight = statements("recipes", "db", "recipes", FIELDS)["delete"]
    mutation = statements("recipes", "db", "recipes", FIELDS, delete_mode="mutation")["delete"]
    assert lightweight.startswith("DELETE FROM db.recipes WHERE (total_price, id) IN")
    assert mutation == lightweight.replace(
        "DELETE FROM db.recipes", "ALTER TABLE db.recipes DELETE"
    )


@pytest.mark.integration
@pytest.mark.timeout(120)
def test_too_many_simultaneous_queries_advice(endpoint: tuple[str, int]) -> None:
    """A real code-202 error, raised by the engine through the endpoint and client."""

    async def run() -> None:
        s = await connect(endpoint, "default")
        try:
            await s.scalar(
                "SELECT throwIf(1, 'Too many simultaneous queries. Maximum: 1', toInt16(202)) "
                "SETTINGS allow_custom_error_code_in_throwif = 1"
            )
        finally:
            await s.close()

    with pytest.raises(ClickhouseOverloaded, match="max_concurrent_queries") as info:
        asyncio.run(run())
    assert "lower the request rate" in str(info.value)
