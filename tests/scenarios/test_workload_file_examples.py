"""The worked examples of docs/workloads.md (scenarios/examples/) parse, and `loadtower
check` of the study-1 scenario prints each op's statement on both engines, its
bindings and an example row."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from loadtower.cli import main
from loadtower.scenarios.workloads.loader import load_workload_file
from tests.scenarios.rendered import engine_names, op_statements

LEFT_PARAM = re.compile(r"(?<![:\w]):[A-Za-z_\[]")
EXAMPLES = Path(__file__).resolve().parents[2] / "scenarios" / "examples"
FILES = sorted(p for p in (EXAMPLES / "workloads").iterdir() if p.is_file())

INVENTORY = """\
[ssh]
user = "root"
key = "/tmp/key"
known_hosts = "/tmp/known_hosts"

[hosts.cas1]
address = "127.0.0.1"
roles = ["db"]
engine = "cassandra"

[hosts.ch1]
address = "127.0.0.2"
roles = ["db"]
engine = "clickhouse"

[hosts.agent1]
address = "127.0.0.3"
roles = ["agent"]
"""


def test_the_examples_are_there() -> None:
    names = {f.name for f in FILES}
    assert {"timeseries.toml", "user-profiles.toml", "study1-recipes.toml",
            "workloada.properties"} <= names


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_each_example_parses_and_renders(path: Path) -> None:
    checked = load_workload_file(path)
    names = engine_names(checked, "ks")
    for engine in ("cassandra", "clickhouse"):
        rendered = op_statements(checked, engine, names)
        assert rendered
        for statements in rendered.values():
            for r in statements:  # every reference and parameter rewritten
                assert "${" not in r.text and not LEFT_PARAM.search(r.text), r.text


def test_study1_statements_on_both_engines() -> None:
    checked = load_workload_file(EXAMPLES / "workloads" / "study1-recipes.toml")
    names = engine_names(checked, "lt")
    cql = op_statements(checked, "cassandra", names)
    ch = op_statements(checked, "clickhouse", names)
    assert cql["multi_condition"][0].text == (
        "SELECT id, title FROM lt.recipes WHERE total_price = ? AND id > ? AND title >= ? "
        "LIMIT 20 ALLOW FILTERING")
    assert ch["multi_condition"][0].text == (
        "SELECT id, title FROM lt.recipes WHERE total_price = {total_price:UInt32} AND "
        "id > {after:UUID} AND title >= {title_from:String} ORDER BY id LIMIT 20")
    assert ch["delete_100"][0].text == "DELETE FROM lt.recipes WHERE id IN {id:Array(UUID)}"
    assert ch["insert_100"][0].insert_rows and checked.model.ops["insert_100"].batch == 100
    assert cql["update_title"][0].binds == ["title", "total_price", "id"]


def test_check_prints_the_study1_scenario(write, capsys) -> None:
    inventory = write("inv.toml", INVENTORY)
    scenario = EXAMPLES / "study1-both-engines.toml"
    assert main(["check", str(scenario), "-i", str(inventory)]) == 0
    out = capsys.readouterr().out
    assert "Workload study1: ops" in out
    assert "SELECT count(), avg(total_price), uniqExact(title) FROM lt_study1.recipes" in out
    assert "ORDER BY (id)" in out and "PRIMARY KEY (total_price, id)" in out
    assert ":title_from" in out and "choice" in out  # bindings and their generators
    assert "bindings and an example row" in out


def test_check_shows_row_keys_and_data_set_values_from_the_files_first_rows(write,
                                                                          capsys) -> None:
    profiles = EXAMPLES / "workloads" / "user-profiles.toml"
    scenario = write("s.toml", f'name = "p"\nengine = "clickhouse"\n[workloads.p]\n'
                     f'file = "{profiles}"\n[[phases]]\ntype = "load"\n')
    inventory = write("inv.toml", INVENTORY)
    assert main(["check", str(scenario), "-i", str(inventory)]) == 0
    out = capsys.readouterr().out
    assert "'Lena Kowalski'" in out and "'PL'" in out  # people.csv's first row
    assert "not loaded" not in out
    assert '0 (gen = "key" renders it)' in out  # sign_up's first sequence key
    assert "'u12161962213042174405'" in out  # "u" + fnv64(0): the same file, the same row
    assert "ENGINE = ReplacingMergeTree(updated)" in out
