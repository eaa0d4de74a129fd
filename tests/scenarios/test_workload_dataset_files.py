"""A workload file's data set on the orchestrator: resolved against the workload
file's directory and read once through DuckDB when the file loads, so a missing file,
a missing column or a value that does not convert is one line (the workload file, the
line and key of the data set's file, then the data file's row and column), exit 2."""

from __future__ import annotations

import pytest

from loadtower.cli import main
from loadtower.errors import ConfigError
from loadtower.scenarios.workloads.loader import load_workload_file

from .conftest import INVENTORY

WORKLOAD = """\
[datasets.people]
file = "{file}"
columns = {{ id = "bigint", name = "text", age = "int" }}

[tables.people]
partition_key = ["id"]
columns = {{ id = "bigint", name = "text", age = "int" }}

[ops.load]
cassandra = "INSERT INTO ${{people}} (id, name, age) VALUES (:id, :name, :age)"
clickhouse = "INSERT INTO ${{people}} (id, name, age) VALUES (:id, :name, :age)"
bind.id = {{ gen = "dataset", column = "id" }}
bind.name = {{ gen = "dataset", column = "name" }}
bind.age = {{ gen = "dataset", column = "age" }}
"""
GOOD_CSV = "id,name,age\n1,ann,31\n2,bob,45\n"


def test_a_relative_file_resolves_against_the_workload_files_directory(write, tmp_path) -> None:
    (tmp_path / "w" / "data").mkdir(parents=True)
    write("w/data/people.csv", GOOD_CSV)
    checked = load_workload_file(write("w/w.toml", WORKLOAD.format(file="data/people.csv")))
    people = checked.model.datasets["people"]
    assert people.file == str(tmp_path / "w" / "data" / "people.csv") and people.format == "csv"
    assert checked.model.as_spec()["datasets"]["people"]["file"] == people.file


@pytest.mark.parametrize(
    ("file", "data", "problem"),
    [
        ("nope.csv", None, "no such data set file {dir}/nope.csv"),
        ("people.csv", "id,name,age\n1,ann,31\n2,bob,old\n",
         "{dir}/people.csv: row 2 (line 3), column 'age': its value (3 characters) is not a int"),
        ("people.csv", "id,full_name,age\n1,ann,31\n",
         "{dir}/people.csv: no column 'name' (the file has: id, full_name, age)"),
    ],
    ids=["missing file", "type mismatch", "missing column"],
)
def test_a_bad_data_set_is_one_line_from_check(write, tmp_path, capsys, file, data,
                                               problem) -> None:
    if data is not None:
        write(file, data)
    workload = write("w.toml", WORKLOAD.format(file=file))
    with pytest.raises(ConfigError) as info:
        load_workload_file(workload)
    assert str(info.value) == (f"{workload}:2: key 'datasets.people.file': "
                               + problem.format(dir=tmp_path))
    scenario = write("s.toml", 'name = "s"\n[workloads.kv]\nfile = "w.toml"\n'
                     '[[phases]]\ntype = "load"\n')
    inventory = write("inv.toml", INVENTORY)
    for command in (["check"], ["run", "--headless", "--store", str(tmp_path / "s.duckdb")]):
        assert main([*command[:1], str(scenario), "-i", str(inventory), *command[1:]]) == 2
        err = capsys.readouterr().err.strip()
        assert "\n" not in err and err.endswith(str(info.value)), (command, err)
    assert not (tmp_path / "s.duckdb").exists()  # refused before any run began


def test_a_load_of_a_data_set_loads_its_rows(write) -> None:
    from loadtower.scenarios.workloads.dataset_files import dataset_load_rows

    write("people.csv", GOOD_CSV)
    checked = load_workload_file(write("w.toml", 'load = "load"\n' + WORKLOAD.format(
        file="people.csv")))
    assert dataset_load_rows(checked) == 2
    plain = WORKLOAD.format(file="people.csv").replace(
        'bind.id = { gen = "dataset", column = "id" }', 'bind.id = { gen = "int" }').replace(
        'bind.name = { gen = "dataset", column = "name" }', 'bind.name = { gen = "text" }').replace(
        'bind.age = { gen = "dataset", column = "age" }', 'bind.age = { gen = "int" }')
    assert dataset_load_rows(load_workload_file(write("v.toml", 'load = "load"\n' + plain))) is None


def test_check_shows_the_data_sets_first_row_or_why_it_has_none(write, capsys) -> None:
    write("w.toml", 'load = "load"\n' + WORKLOAD.format(file="people.csv"))
    scenario = write("s.toml", 'name = "s"\n[workloads.kv]\nfile = "w.toml"\n'
                     '[[phases]]\ntype = "load"\n')
    inventory = write("inv.toml", INVENTORY)
    write("people.csv", GOOD_CSV)
    assert main(["check", str(scenario), "-i", str(inventory)]) == 0
    out = capsys.readouterr().out
    assert "'ann'" in out and " 31 " in out and "'bob'" not in out  # one row: the first
    write("people.csv", "id,name,age\n")  # a header and no rows: valid, nothing to draw
    assert main(["check", str(scenario), "-i", str(inventory)]) == 0
    out = capsys.readouterr().out
    assert "(data set people: no rows to draw" in out
