"""Bad workload files: each gives one line naming file, line and key (exit 2 from
`loadtower check`), including the issue's four: an unknown generator, a statement
parameter without a binding, a type mismatch, a missing column of the data set."""

from __future__ import annotations

import pytest

from loadtower.cli import main
from loadtower.errors import ConfigError
from loadtower.scenarios.workloads.loader import load_workload_file

from .conftest import INVENTORY

GOOD = """\
name = "kv"

[vars]
size = 64

[datasets.people]
file = "people.csv"
columns = { user_id = "text", name = "text", age = "int" }

[tables.profiles]
partition_key = ["user_id"]

[tables.profiles.columns]
user_id = "text"
name = "text"
age = "int"
avatar = "blob"

[ops.insert]
key = { gen = "sequence" }
cassandra = "INSERT INTO ${profiles} (user_id, name, age, avatar) VALUES (:user_id, :name, :age, :avatar)"
clickhouse = "INSERT INTO ${profiles} (user_id, name, age, avatar) VALUES (:user_id, :name, :age, :avatar)"
bind.user_id = { gen = "key", prefix = "u" }
bind.name = { gen = "dataset", column = "name" }
bind.age = { gen = "int", min = 18, max = 99 }
bind.avatar = { gen = "blob", length = "${size}" }

[ops.get]
expect = "rows"
cassandra = "SELECT * FROM ${profiles} WHERE user_id = :user_id"
bind.user_id = { gen = "written", from = "insert.user_id" }
"""


@pytest.fixture(autouse=True)
def people_csv(write) -> None:
    """The data set GOOD declares, beside the workload files the tests write."""
    write("people.csv", "user_id,name,age\nu1,ann,31\nu2,bob,45\n")


def error_of(write, text: str) -> str:
    path = write("w.toml", text)
    with pytest.raises(ConfigError) as info:
        load_workload_file(path)
    message = str(info.value).replace(str(path), "w.toml")
    assert "\n" not in message
    return message


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_the_good_file_loads(write) -> None:
    checked = load_workload_file(write("w.toml", GOOD))
    assert checked.param_types["insert"] == {
        "user_id": "text", "name": "text", "age": "int", "avatar": "blob"}
    assert checked.param_types["get"] == {"user_id": "text"}  # from insert.user_id


def test_unknown_generator(write) -> None:
    text = GOOD.replace('gen = "int", min = 18', 'gen = "gaussian", min = 18')
    message = error_of(write, text)
    assert message.startswith(f"w.toml:{line_of(text, 'gaussian')}: key 'ops.insert.bind.age")
    assert "gaussian" in message


def test_parameter_without_a_binding(write) -> None:
    text = GOOD.replace("WHERE user_id = :user_id", "WHERE user_id = :user_id AND age = :age")
    message = error_of(write, text)
    assert message == (f"w.toml:{line_of(text, 'AND age = :age')}: key 'ops.get.cassandra': "
                       'parameter :age has no binding (add bind.age = { gen = "..." })')


def test_type_mismatch(write) -> None:
    text = GOOD.replace('bind.age = { gen = "int", min = 18, max = 99 }',
                        'bind.age = { gen = "text", length = 5 }')
    message = error_of(write, text)
    assert message == (f"w.toml:{line_of(text, 'bind.age')}: key 'ops.insert.bind.age': "
                       "generator 'text' makes text values, but :age is column 'age' of type int")


def test_missing_column_of_the_data_set(write) -> None:
    text = GOOD.replace('column = "name"', 'column = "full_name"')
    message = error_of(write, text)
    assert message == (f"w.toml:{line_of(text, 'full_name')}: key 'ops.insert.bind.name.column': "
                       "data set 'people' has no column 'full_name' (columns: user_id, name, age)")


def test_data_set_column_of_another_type(write) -> None:
    text = GOOD.replace('column = "name"', 'column = "age"')
    message = error_of(write, text)
    line = line_of(text, 'column = "age"')
    assert f"w.toml:{line}: key 'ops.insert.bind.name'" in message
    assert "dataset column makes int values, but :name is column 'name' of type text" in message


@pytest.mark.parametrize(
    ("old", "new", "needle", "key", "problem"),
    [
        ('bind.age = { gen = "int", min = 18, max = 99 }',
         'bind.age = { gen = "int", min = 18, max = 99 }\nbind.extra = { gen = "int" }',
         "bind.extra", "ops.insert.bind.extra", "binds no parameter of the op's statements"),
        ('length = "${size}"', 'length = "${sise}"', "sise", "ops.insert.bind.avatar.length",
         "unknown name ${sise}"),
        ("FROM ${profiles} WHERE", "FROM ${profile} WHERE", "${profile} WHERE",
         "ops.get.cassandra", "unknown name ${profile}"),
        ('from = "insert.user_id"', 'from = "insert.userid"', "insert.userid",
         "ops.get.bind.user_id.from", "op 'insert' binds no parameter 'userid'"),
        ('from = "insert.user_id"', 'from = "put.user_id"', "put.user_id",
         "ops.get.bind.user_id.from", "no op 'put' with a statement"),
        ('partition_key = ["user_id"]', 'partition_key = ["id"]', '"id"',
         "tables.profiles.partition_key[0]", "'id' is not a column of table 'profiles'"),
        ('bind.user_id = { gen = "key", prefix = "u" }\n', 'bind.user_id = { gen = "uuid" }\n',
         'gen = "uuid"', "ops.insert.bind.user_id",
         "generator 'uuid' makes uuid values, but :user_id is column 'user_id' of type text"),
        ('key = { gen = "sequence" }\n', "", 'bind.user_id = { gen = "key"',
         "ops.insert.bind.user_id.gen", "give the op a key"),
        ('age = "int"\navatar', 'age = "integer"\navatar', '"integer"',
         "tables.profiles.columns.age", "invalid value 'integer'"),
        ('file = "people.csv"', 'file = "people.txt"', "people.txt", "datasets.people.file",
         "cannot tell the format of 'people.txt'"),
        ('[ops.get]\n', '[ops.get]\nmongodb = { call = "find_one", collection = "p", '
         'filter = { _id = ":uid" } }\n', 'call = "find_one"', "ops.get.mongodb",
         "parameter :uid has no binding"),
        ('[ops.get]\n', '[ops.get]\nsteps = ["get", "insert"]\n', "[ops.get]", "ops.get",
         "an op with 'steps' runs other ops"),
        ("FROM ${profiles} WHERE", "FROM ${profiles} WHERE ${x#} = 1 AND", "${x#}",
         "ops.get.cassandra", "is not a table"),
        ('[ops.get]\n', '[ops.get]\nbatch = 10\nclickhouse = "SELECT 1 WHERE :user_id"\n',
         "SELECT 1", "ops.get.clickhouse", "a batch op's ClickHouse statement must be"),
        ('[ops.insert]\n', '[ops.insert]\nbatch = { cassandra = 100, mongodb = 5 }\n',
         "[ops.insert]", "ops.insert", "batch gives rows for mongodb, which this op has no "
         "statement for"),
        ('[ops.insert]\n', '[ops.insert]\nbatch = { cassandra = 100 }\n', "[ops.insert]",
         "ops.insert", "batch gives no rows for clickhouse"),
        ('[ops.insert]\n', '[ops.insert]\nbatch = { cassandra = 100, clickhouse = 0 }\n',
         "batch = {", "ops.insert.batch.clickhouse", "greater than 0"),
        ('[ops.insert]\n', '[ops.insert]\nbatch = { cassandra = 100, aerospike = 5 }\n',
         "batch = {", "ops.insert.batch.aerospike", "cassandra"),
        ('[ops.insert]\n', '[ops.insert]\nbatch = 0\n', "batch = 0", "ops.insert.batch",
         "greater than 0"),
    ],
)
def test_bad_file(write, old, new, needle, key, problem) -> None:
    assert old in GOOD
    text = GOOD.replace(old, new, 1)
    message = error_of(write, text)
    assert message.startswith(f"w.toml:{line_of(text, needle)}: key '{key}': "), message
    assert problem in message


def test_check_of_a_scenario_with_a_bad_workload_file_exits_2(write, capsys) -> None:
    bad = GOOD.replace('gen = "int", min = 18', 'gen = "gaussian", min = 18')
    workload = write("w.toml", bad)
    scenario = write("s.toml", f"""\
name = "s"
[workloads.kv]
file = "{workload.name}"
[[phases]]
type = "load"
""")
    inventory = write("inv.toml", INVENTORY)
    assert main(["check", str(scenario), "-i", str(inventory)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{workload}:{line_of(bad, 'gaussian')}" in err[0]
    assert "ops.insert.bind.age" in err[0]


@pytest.mark.parametrize(
    ("entry", "key", "problem"),
    [
        ('file = "nope.toml"', "workloads.kv.file", "no such workload file 'nope.toml'"),
        ('file = "w.toml"\nvars = { sizes = 3 }', "workloads.kv.vars.sizes",
         "not a variable of w.toml"),
        ('file = "w.toml"\nweights = { put = 3 }', "workloads.kv.weights.put", "no op 'put'"),
        ('file = "w.toml"\nmix = { read = 3 }', "workloads.kv", "remove 'mix'"),
        ('preset = "ycsb-a"\nvars = { size = 3 }', "workloads.kv", "add file"),
    ],
)
def test_bad_workload_entry_in_a_scenario(write, capsys, entry, key, problem) -> None:
    write("w.toml", GOOD)
    scenario = write("s.toml", f'name = "s"\n[workloads.kv]\n{entry}\n[[phases]]\ntype = "load"\n')
    inventory = write("inv.toml", INVENTORY)
    assert main(["check", str(scenario), "-i", str(inventory)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and f"{scenario}:" in err and f"key '{key}'" in err, err
    assert problem in err


NO_INSERT = GOOD.replace("[ops.insert]", "[ops.sign_up]").replace("insert.user_id",
                                                                   "sign_up.user_id")


def test_a_load_phase_of_a_file_without_a_load_op_is_one_line(write, capsys) -> None:
    write("w.toml", NO_INSERT)
    scenario = write("s.toml", 'name = "s"\n[workloads.kv]\nfile = "w.toml"\n'
                     '[[phases]]\ntype = "load"\n')
    inventory = write("inv.toml", INVENTORY)
    assert main(["run", str(scenario), "-i", str(inventory), "--headless"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "w.toml" in err and "key 'load'" in err, err
    assert "phase 1 loads workload 'kv'" in err and "ops: sign_up, get" in err


def test_a_load_key_naming_no_op_is_one_line(write) -> None:
    text = 'load = "sign_in"\n' + NO_INSERT
    assert error_of(write, text) == (
        "w.toml:1: key 'load': no op 'sign_in' with a statement (ops: sign_up, get)")


def test_the_standalone_load_renders_the_file_for_its_engine(write) -> None:
    import argparse

    from loadtower.orchestrator.standalone_load_command import _spec

    write("w.toml", 'load = "sign_up"\n' + NO_INSERT)
    scenario = write("s.toml", 'name = "s"\n[workloads.kv]\nfile = "w.toml"\n'
                     '[target]\nkeyspace = "ks1"\n[[phases]]\ntype = "load"\n')
    args = argparse.Namespace(workload=str(scenario), engine="cassandra", local_dc=None,
                              tls_ca_file=None, tls_cert_file=None, tls_key_file=None)
    spec = _spec(args)["workload_file"]
    assert spec["engine"] == "cassandra" and spec["load"] == "sign_up"
    assert spec["tables"] == ["ks1.profiles"]
    assert spec["run"]["sign_up"]["statements"][0]["text"] == (
        "INSERT INTO ks1.profiles (user_id, name, age, avatar) VALUES (?, ?, ?, ?)")
    assert spec["ddl"][1].startswith("CREATE TABLE IF NOT EXISTS ks1.profiles (user_id text")
