"""Issue 26 case 6 (LOW): a CQL table option's map keys cannot end the map (they are
words, and rendered quoted), and a MongoDB aggregate cannot leave the run's database
(``$out``/``$merge`` into another database or a system collection, ``$lookup`` and the
like from ``system.*`` or another database): each is one line from the checks naming the
file, line and key."""

from __future__ import annotations

import pytest

from loadtower.engines.cassandra.orchestrator.workload import cql_value
from loadtower.errors import ConfigError
from loadtower.scenarios.workloads.loader import load_workload_text

from .test_workload_file_mongodb import FILE

CQL = """\
[tables.t]
partition_key = ["id"]
columns = {{ id = "bigint" }}
cassandra.options = {{ compaction = {{ {key} = "SizeTieredCompactionStrategy" }} }}

[ops.insert]
cassandra = "INSERT INTO ${{t}} (id) VALUES (:id)"
bind.id = {{ gen = "int" }}
"""
INJECTED = '''"class': 'X'} AND comment = 'INJECTED' AND caching = {'keys"'''


def test_an_option_map_key_that_would_end_the_map_is_refused() -> None:
    with pytest.raises(ConfigError) as info:
        load_workload_text(CQL.format(key=INJECTED), "w.toml")
    line = str(info.value)
    assert "\n" not in line and line.startswith("w.toml:4: key 'tables.t.cassandra.options': ")
    assert "option compaction: map key" in line and "is not a word" in line


def test_a_word_key_renders_quoted_and_a_quote_could_not_escape() -> None:
    checked = load_workload_text(CQL.format(key="class"), "w.toml")
    assert "compaction" in checked.model.tables["t"].cassandra.options
    assert cql_value({"class": "X"}) == "{'class': 'X'}"
    assert cql_value({"a'b": "X"}) == "{'a''b': 'X'}"  # rendering escapes keys too


def _aggregate(pipeline: str) -> str:
    old = ('pipeline = [{ "$match" = { k = ":k" } }, { "$group" = { _id = "$c", '
           'n = { "$sum" = "$${f#}" } } }]')
    assert old in FILE
    return FILE.replace(old, f"pipeline = {pipeline}")


@pytest.mark.parametrize(("pipeline", "problem"), [
    ('[{ "$match" = { k = ":k" } }, { "$out" = { db = "admin", coll = "x" } }]',
     "pipeline stage $out writes to database 'admin'"),
    ('[{ "$match" = { k = ":k" } }, { "$merge" = { into = { db = "other", coll = "x" } } }]',
     "pipeline stage $merge writes to database 'other'"),
    ('[{ "$match" = { k = ":k" } }, { "$lookup" = { from = "system.users", localField = "k",'
     ' foreignField = "user", as = "u" } }]',
     "pipeline stage $lookup reads from 'system.users'"),
    ('[{ "$match" = { k = ":k" } }, { "$facet" = { a = [{ "$unionWith" = '
     '{ coll = "system.roles" } }] } }]',
     "pipeline stage $unionWith reads from 'system.roles'"),
    ('[{ "$match" = { k = ":k" } }, { "$out" = "system.js" }]',
     "pipeline stage $out writes to 'system.js'"),
], ids=["out-other-db", "merge-other-db", "lookup-system-users", "nested-unionwith",
        "out-system"])
def test_an_aggregate_leaving_the_database_is_refused(pipeline: str, problem: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_workload_text(_aggregate(pipeline), "w.toml")
    line = str(info.value)
    assert "\n" not in line and "key 'ops.sum.mongodb'" in line and problem in line, line


def test_an_aggregate_inside_the_database_passes() -> None:
    load_workload_text(_aggregate(
        '[{ "$match" = { k = ":k" } }, { "$lookup" = { from = "${t}", localField = "k", '
        'foreignField = "k", as = "same" } }, { "$merge" = { into = "summary" } }]'), "w.toml")
    load_workload_text(_aggregate(
        '[{ "$match" = { k = ":k" } }, { "$out" = { db = "${keyspace}", coll = "s" } }]'),
        "w.toml")
