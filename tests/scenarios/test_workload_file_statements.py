"""The parameter syntax: ``:name`` (and ClickHouse's ``{name:Type}``) found where it is
a parameter and nowhere else, rewritten to each driver's bind markers."""

from __future__ import annotations

import pytest

from loadtower.scenarios.workloads.render_statements import Names, render, variants
from loadtower.scenarios.workloads.statement_text import Native, Param, ParamList, Ref, parts
from tests.scenarios.rendered import sql

NAMES = Names("ks", {"t": "real_t"}, {"t": " FINAL"})
GROUPS = {"f": ["f0", "f1", "f2"]}


def params(statement: str, clickhouse: bool = False) -> list:
    return [p for p in parts(statement, native_params=clickhouse) if not hasattr(p, "text")]


@pytest.mark.parametrize(
    ("statement", "found"),
    [
        ("SELECT * FROM t WHERE a = :a AND b>=:b", [Param("a"), Param("b")]),
        ("SELECT ':not' , \"x:y\", `c:d` FROM t WHERE a = :a", [Param("a")]),
        ("SELECT x::Int32 FROM t -- :comment\nWHERE a=:a /* :b */", [Param("a")]),
        ("SELECT {'k': 1, 'j':2} FROM t WHERE m = :m", [Param("m")]),
        ("SELECT 'it''s :x' FROM t WHERE a = :a", [Param("a")]),
        ("SELECT 10:20, a:b FROM t", []),
        ("DELETE FROM ${t} WHERE (a, b) IN :[a, b]", [Ref("t"), ParamList(("a", "b"))]),
        ("INSERT INTO ${t} (k, ${f*}) VALUES (:k, :f*)",
         [Ref("t"), Ref("f*"), Param("k"), Param("f", group=True)]),
    ],
)
def test_parameters_are_found_only_where_they_are(statement, found) -> None:
    assert params(statement) == found


def test_clickhouse_native_parameters() -> None:
    assert params("SELECT 1 LIMIT {n:UInt32} OFFSET :o", clickhouse=True) == [
        Native("n", "UInt32"), Param("o")]
    assert params("SELECT {n:UInt32}") == []  # CQL has no such syntax: it is text


def test_cql_markers_and_clickhouse_types() -> None:
    statement = "SELECT * FROM ${t}${final} WHERE a = :a AND b IN :[b] LIMIT :n"
    cql = render(statement, sql("cassandra"), NAMES, {}, {})
    assert cql.text == "SELECT * FROM ks.real_t WHERE a = ? AND b IN ? LIMIT ?"
    assert cql.binds == ["a", ("b",), "n"]
    ch = render(statement, sql("clickhouse"), NAMES, {}, {"a": "String", "b": "Int64", "n": "UInt8"},
                table="t")
    assert ch.text == ("SELECT * FROM ks.real_t FINAL WHERE a = {a:String} AND b IN "
                       "{b:Array(Int64)} LIMIT {n:UInt8}")


def test_a_repeated_parameter_is_bound_at_each_marker() -> None:
    cql = render("SELECT * FROM ${t} WHERE a = :a OR b = :a", sql("cassandra"), NAMES, {}, {})
    assert cql.text.count("?") == 2 and cql.binds == ["a", "a"]


def test_groups_and_picked_members() -> None:
    update = "UPDATE ${t} SET ${f#} = :v WHERE k = :k"
    assert variants(update, GROUPS) == 3
    texts = [render(update, sql("cassandra"), NAMES, GROUPS, {}, picked=i).text for i in range(3)]
    assert texts == [f"UPDATE ks.real_t SET f{i} = ? WHERE k = ?" for i in range(3)]
    copy = "INSERT INTO ${t} (k, ${f*}) SELECT k, ${f*|:v} FROM ${t} WHERE k = :k"
    out = render(copy, sql("clickhouse"), NAMES, GROUPS, {"v": "String", "k": "Int64"}, picked=1)
    assert out.text == ("INSERT INTO ks.real_t (k, f0, f1, f2) SELECT k, f0, {v:String}, f2 "
                        "FROM ks.real_t WHERE k = {k:Int64}")
    assert out.binds == ["v", "k"]


def test_a_clickhouse_insert_of_values_is_a_head_for_its_rows() -> None:
    insert = "INSERT INTO ${t} (k, ${f*}) VALUES (:k, :f*)"
    types = {"k": "Int64", "f0": "String", "f1": "String", "f2": "String"}
    out = render(insert, sql("clickhouse"), NAMES, GROUPS, types)
    assert out.text == "INSERT INTO ks.real_t (k, f0, f1, f2)" and out.insert_rows
    assert out.binds == ["k", "f0", "f1", "f2"]
    cql = render(insert, sql("cassandra"), NAMES, GROUPS, types)
    assert cql.text == "INSERT INTO ks.real_t (k, f0, f1, f2) VALUES (?, ?, ?, ?)"
    assert not cql.insert_rows


def test_names_are_quoted_for_each_engine() -> None:
    names = Names("My Ks", {"t": "odd-name"})
    assert render("SELECT * FROM ${t}", sql("cassandra"), names, {}, {}).text == (
        'SELECT * FROM "my ks"."odd-name"')
    assert render("SELECT * FROM ${t}", sql("clickhouse"), names, {}, {}).text == (
        "SELECT * FROM `My Ks`.`odd-name`")
