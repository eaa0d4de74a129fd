"""CQL tables and statements of the three workload families, and the ops over them.

- ``ycsb``: YCSB's usertable (``y_id`` text key, ``field0..N`` text) and its ops
  read / update (one random field) / insert / scan / read_modify_write, plus
  insert_batch, delete and delete_batch.
- ``recipes``: experiment 1's table ``recipes(id uuid, title, link, total_price float,
  PRIMARY KEY (total_price, id))``: select by id, insert 1 / 100 (batch), delete 1 / 100.
- ``ttl``: experiment 3's ``(id bigint, value1, value2)`` with a default TTL (0: none);
  reads by id.

Key numbers map to keys deterministically, so any process can read what another wrote.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from loadtower.agents.workload.keys import fnv64
from loadtower.agents.workload.values import ValuePool

RECIPE_PRICES = 997  # distinct total_price partitions
_UNQUOTED = re.compile(r"[A-Za-z][A-Za-z0-9_]*")


def cql_name(name: str) -> str:
    """A keyspace or table name for a CQL statement: an unquoted identifier as it is (CQL
    folds it to lower case), anything else double-quoted with its case folded the same
    way, so that no name can end the statement or add another one."""
    if _UNQUOTED.fullmatch(name):
        return name
    return '"' + name.lower().replace('"', '""') + '"'


class CqlSession(Protocol):
    def execute(self, name: str, params: tuple) -> Awaitable[Any]: ...
    def batch(self, name: str, rows: list[tuple]) -> Awaitable[Any]: ...


def default_table(schema: str) -> str:
    return {"ycsb": "usertable", "recipes": "recipes", "ttl": "ttl_rows"}[schema]


def replication_map(rf: int | dict[str, int]) -> str:
    """SimpleStrategy with ``rf`` replicas, or NetworkTopologyStrategy with so many per
    data centre (names checked by the scenario model: letters, digits, ``_-.``)."""
    if isinstance(rf, dict):
        per_dc = ", ".join(f"'{dc}': {int(n)}" for dc, n in rf.items())
        return f"{{'class': 'NetworkTopologyStrategy', {per_dc}}}"
    return f"{{'class': 'SimpleStrategy', 'replication_factor': {int(rf)}}}"


TTL_BLOOM_FP_CHANCE = 0.01  # the ttl schema's bloom_filter_fp_chance unless told (STCS's)


def _fp_chance(value: float) -> str:
    """A bloom_filter_fp_chance as CQL: a float literal (``1`` would be an int)."""
    return repr(float(value))


def ddl(
    schema: str, keyspace: str, table: str, rf: int | dict[str, int], fields: int,
    ttl: float | None, bloom_filter_fp_chance: float | None = None,
) -> list[str]:
    """CREATE KEYSPACE and TABLE, then ALTER TABLE with the table's options (an existing
    table keeps its old options unless told: the scenario's win). The ttl schema always
    sets default_time_to_live and bloom_filter_fp_chance (the built-in ttl workload file's
    DDL, tests/scenarios/test_workload_file_builtins.py); the others set
    bloom_filter_fp_chance when given."""
    keyspace, table = cql_name(keyspace), cql_name(table)
    ks = f"CREATE KEYSPACE IF NOT EXISTS {keyspace} WITH replication = {replication_map(rf)}"
    options: list[str] = []
    if schema == "ycsb":
        cols = ", ".join(f"field{i} text" for i in range(fields))
        tbl = f"CREATE TABLE IF NOT EXISTS {keyspace}.{table} (y_id text PRIMARY KEY, {cols})"
    elif schema == "recipes":
        tbl = (
            f"CREATE TABLE IF NOT EXISTS {keyspace}.{table} (id uuid, title text, link text, "
            "total_price float, PRIMARY KEY (total_price, id))"
        )
    else:
        seconds = 60 if ttl is None else int(ttl)  # 0: no TTL (the study's table without one)
        tbl = (
            f"CREATE TABLE IF NOT EXISTS {keyspace}.{table} (id bigint PRIMARY KEY, value1 text, "
            "value2 text)"
        )
        options.append(f"default_time_to_live = {seconds}")
        if bloom_filter_fp_chance is None:
            bloom_filter_fp_chance = TTL_BLOOM_FP_CHANCE
    if bloom_filter_fp_chance is not None:
        options.append(f"bloom_filter_fp_chance = {_fp_chance(bloom_filter_fp_chance)}")
    if not options:
        return [ks, tbl]
    with_options = " AND ".join(options)
    return [ks, f"{tbl} WITH {with_options}",
            f"ALTER TABLE {keyspace}.{table} WITH {with_options}"]


def statements(schema: str, keyspace: str, table: str, fields: int) -> dict[str, str]:
    t = f"{cql_name(keyspace)}.{cql_name(table)}"
    if schema == "ycsb":
        cols = ", ".join(f"field{i}" for i in range(fields))
        marks = ", ".join("?" for _ in range(fields))
        stmts = {
            "read": f"SELECT * FROM {t} WHERE y_id = ?",
            "insert": f"INSERT INTO {t} (y_id, {cols}) VALUES (?, {marks})",
            "scan": f"SELECT * FROM {t} WHERE token(y_id) >= token(?) LIMIT ?",
            "delete": f"DELETE FROM {t} WHERE y_id = ?",
        }
        for i in range(fields):
            stmts[f"update{i}"] = f"UPDATE {t} SET field{i} = ? WHERE y_id = ?"
        return stmts
    if schema == "recipes":
        return {
            "read": f"SELECT * FROM {t} WHERE total_price = ? AND id = ?",
            "insert": f"INSERT INTO {t} (id, title, link, total_price) VALUES (?, ?, ?, ?)",
            "delete": f"DELETE FROM {t} WHERE total_price = ? AND id = ?",
        }
    return {
        "read": f"SELECT * FROM {t} WHERE id = ?",
        "insert": f"INSERT INTO {t} (id, value1, value2) VALUES (?, ?, ?)",
    }


class CqlOps:
    """The ops of one schema over a session; each op is an awaitable factory."""

    def __init__(
        self,
        schema: str,
        session: CqlSession,
        values: ValuePool,
        fields: int,
        field_size: int,
        choose: Callable[[], int],
        new_key: Callable[[], int],
        batch_size: int,
        scan_length: int,
        rng: Any,
    ) -> None:
        self.schema, self.s, self.values = schema, session, values
        self.fields, self.field_size = fields, field_size
        self.choose, self.new_key = choose, new_key
        self.batch_size, self.scan_length, self.rng = batch_size, scan_length, rng

    # -- keys and rows ------------------------------------------------------------------
    def key(self, k: int) -> Any:
        if self.schema == "ycsb":
            return f"user{fnv64(k)}"
        if self.schema == "recipes":
            return (float(k % RECIPE_PRICES), uuid.UUID(int=fnv64(k) << 64 | k))
        return k

    def row(self, k: int) -> tuple:
        key = self.key(k)
        if self.schema == "ycsb":
            return (key, *(self.values.text(self.field_size) for _ in range(self.fields)))
        if self.schema == "recipes":
            price, rid = key
            return (rid, self.values.text(self.field_size), self.values.text(32), price)
        return (key, self.values.text(self.field_size), self.values.text(self.field_size))

    def where(self, k: int) -> tuple:
        key = self.key(k)
        return key if isinstance(key, tuple) else (key,)

    # -- ops ---------------------------------------------------------------------------
    def insert_key(self, k: int) -> Awaitable[Any]:
        return self.s.execute("insert", self.row(k))

    def read(self) -> Awaitable[Any]:
        return self.s.execute("read", self.where(self.choose()))

    def update(self) -> Awaitable[Any]:
        if self.schema != "ycsb":
            return self.insert_key(self.choose())
        i = self.rng.randrange(self.fields)
        k = self.key(self.choose())
        return self.s.execute(f"update{i}", (self.values.text(self.field_size), k))

    def insert(self) -> Awaitable[Any]:
        return self.insert_key(self.new_key())

    def scan(self) -> Awaitable[Any]:
        length = self.rng.randint(1, self.scan_length)
        return self.s.execute("scan", (self.key(self.choose()), length))

    async def read_modify_write(self) -> None:
        k = self.choose()
        await self.s.execute("read", self.where(k))
        if self.schema == "ycsb":
            i = self.rng.randrange(self.fields)
            await self.s.execute(f"update{i}", (self.values.text(self.field_size), self.key(k)))
        else:
            await self.insert_key(k)

    def insert_batch(self) -> Awaitable[Any]:
        return self.s.batch("insert", [self.row(self.new_key()) for _ in range(self.batch_size)])

    def delete(self) -> Awaitable[Any]:
        return self.s.execute("delete", self.where(self.choose()))

    def delete_batch(self) -> Awaitable[Any]:
        return self.s.batch("delete", [self.where(self.choose()) for _ in range(self.batch_size)])

    def table(self) -> dict[str, Callable[[], Awaitable[Any]]]:
        ops = {
            "read": self.read,
            "update": self.update,
            "insert": self.insert,
            "scan": self.scan,
            "read_modify_write": self.read_modify_write,
            "insert_batch": self.insert_batch,
            "delete": self.delete,
            "delete_batch": self.delete_batch,
        }
        if self.schema != "ycsb":
            for name in ("scan",):
                ops.pop(name)
        if self.schema == "ttl":
            for name in ("delete", "delete_batch"):
                ops.pop(name)
        return ops
