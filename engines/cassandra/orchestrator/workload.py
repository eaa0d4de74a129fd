"""A workload file on Cassandra and ScyllaDB: CQL's names, ``?`` markers and DDL
(``CREATE TABLE`` with its options; the keyspace statement from the target's
replication). A table with options gets them again by ``ALTER TABLE``, so that an
existing table takes the file's options, as the built-in schemas do."""

from __future__ import annotations

from loadtower.engines.cassandra.agent.schemas import cql_name, replication_map
from loadtower.engines.cassandra.orchestrator.file_slot import cassandra_of
from loadtower.engines.cassandra.orchestrator.target_keys import CqlTargetKeys
from loadtower.scenarios.models import Target
from loadtower.scenarios.workloads.checks import Checked
from loadtower.scenarios.workloads.models import Table
from loadtower.scenarios.workloads.render_statements import Names
from loadtower.scenarios.workloads.sql_rendering import SqlRendering

# a workload file's portable column types (scenarios/workloads/types.py) in CQL
CQL_TYPES: dict[str, str] = {
    "text": "text", "ascii": "ascii", "blob": "blob", "boolean": "boolean",
    "tinyint": "tinyint", "smallint": "smallint", "int": "int", "bigint": "bigint",
    "float": "float", "double": "double", "uuid": "uuid", "timeuuid": "timeuuid",
    "timestamp": "timestamp", "date": "date",
}


def cql_value(value: object) -> str:
    """A table option's value in CQL (a map's keys and values as text)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, dict):
        items = ", ".join(f"{_cql_text(k)}: {_cql_text(v)}" for k, v in value.items())
        return "{" + items + "}"
    return _cql_text(value)


def _cql_text(value: object) -> str:
    if isinstance(value, bool):
        value = "true" if value else "false"
    return "'" + str(value).replace("'", "''") + "'"


class CqlRendering(SqlRendering):
    slot = "cassandra"

    def quote(self, name: str) -> str:
        return cql_name(name)

    def marker(self, name: str, type_: str) -> str:
        return "?"

    def list_marker(self, names: tuple[str, ...], types: list[str]) -> str:
        return "?"

    def column_type(self, portable: str) -> str:
        return CQL_TYPES[portable]

    def ddl(self, checked: Checked, target: Target, names: Names) -> list[str]:
        rf = CqlTargetKeys.of(target).replication or target.replication_factor
        return cql_ddl(checked.model.tables, names, rf)


RENDERING = CqlRendering()


def cql_ddl(tables: dict[str, Table], names: Names, rf: int | dict[str, int]) -> list[str]:
    """The keyspace (SimpleStrategy with `rf` replicas, or so many per data centre) and
    the tables."""
    ks = cql_name(names.keyspace)
    out = [f"CREATE KEYSPACE IF NOT EXISTS {ks} WITH replication = {replication_map(rf)}"]
    for name, table in tables.items():
        spec = cassandra_of(table)
        if spec.ddl is not None:
            out += RENDERING.raw(spec.ddl, names)
            continue
        t = f"{ks}.{cql_name(names.tables.get(name, name))}"
        types = {c: spec.types.get(c, CQL_TYPES[typ]) for c, typ in table.column_types().items()}
        inline = len(table.partition_key) == 1 and not table.clustering_key
        cols = [
            f"{c} {typ}" + (" PRIMARY KEY" if inline and c == table.partition_key[0] else "")
            for c, typ in types.items()
        ]
        if not inline:
            pk = table.partition_key[0] if len(table.partition_key) == 1 else (
                "(" + ", ".join(table.partition_key) + ")"
            )
            cols.append(f"PRIMARY KEY ({', '.join([pk, *table.clustering_key])})")
        withs = []
        if spec.clustering_order:
            order = ", ".join(f"{c} {d}" for c, d in spec.clustering_order.items())
            withs.append(f"CLUSTERING ORDER BY ({order})")
        options = [f"{k} = {cql_value(v)}" for k, v in spec.options.items()]
        with_text = " WITH " + " AND ".join(withs + options) if withs or options else ""
        out.append(f"CREATE TABLE IF NOT EXISTS {t} ({', '.join(cols)}){with_text}")
        if options:  # an existing table takes the file's options too
            out.append(f"ALTER TABLE {t} WITH {' AND '.join(options)}")
    return out
