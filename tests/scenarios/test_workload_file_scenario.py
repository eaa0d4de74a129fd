"""A scenario's ``[workloads.NAME] file``: found relative to the scenario or by a
built-in name, its variables set from the scenario, its weights replaced, shown by the
plan; and the model's small contracts (its types, its plain spec)."""

from __future__ import annotations

import json
import typing

from loadtower.scenarios.plan import load_plan, render_plan
from loadtower.scenarios.workloads.bind_spec import bind_specs, workload_file_spec
from loadtower.scenarios.workloads.rendering import rendered_slots, workload_rendering
from loadtower.scenarios.workloads.sql_rendering import SqlRendering
from loadtower.scenarios.workloads.types import TYPES, TypeName

from .conftest import INVENTORY

SCENARIO = """\
name = "s"
[dataset]
records = 500
fields = 4
field_size = 20
[workloads.y]
file = "ycsb"
distribution = "latest"
weights = { read = 9, insert = 1, update = 0 }
[[phases]]
type = "load"
"""


def test_a_builtin_workload_file_takes_the_scenarios_settings(write) -> None:
    plan = load_plan(write("s.toml", SCENARIO), write("inv.toml", INVENTORY))
    checked = plan.workloads["y"]
    model = checked.model
    assert model.vars["fields"] == 4 and model.vars["field_size"] == 20
    assert model.vars["distribution"] == "latest"
    assert list(model.tables["usertable"].column_types()) == ["y_id", *(f"field{i}" for i in range(4))]
    assert model.ops["read"].key is not None and model.ops["read"].key.gen == "latest"
    assert {n: o.weight for n, o in model.ops.items() if o.weight} == {"read": 9, "insert": 1}
    assert model.ops["insert"].bind["field*"].length == 20


def test_the_plan_shows_the_files_mix(write) -> None:
    from rich.console import Console

    plan = load_plan(write("s.toml", SCENARIO), write("inv.toml", INVENTORY))
    console = Console(width=200, record=True)
    console.print(render_plan(plan))
    assert "y: read 90% insert 10% (file ycsb.toml)" in console.export_text()


def test_a_file_next_to_the_scenario(write, tmp_path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "kv.toml").write_text("""\
[vars]
records = 1
[tables.kv]
partition_key = ["k"]
columns = { k = "bigint", v = "text" }
[ops.get]
key = { gen = "uniform" }
cassandra = "SELECT v FROM ${kv} WHERE k = :k"
bind.k = { gen = "key" }
""")
    text = 'name = "s"\n[dataset]\nrecords = 77\n[workloads.kv]\nfile = "sub/kv.toml"\n' \
           '[[phases]]\ntype = "run"\nduration = "1s"\nrate = 1\n'
    plan = load_plan(write("s.toml", text), write("inv.toml", INVENTORY))
    assert plan.workloads["kv"].model.vars["records"] == 77  # from [dataset]


def test_types_literal_is_the_type_table() -> None:
    assert set(typing.get_args(TypeName)) == set(TYPES)


def test_every_sql_rendering_has_a_type_for_every_portable_type() -> None:
    slots = [s for s in rendered_slots()
             if isinstance(workload_rendering(s), SqlRendering)]
    assert len(slots) >= 2  # CQL and ClickHouse's SQL
    for slot in slots:
        rendering = workload_rendering(slot)
        assert isinstance(rendering, SqlRendering)
        assert all(rendering.column_type(t) for t in TYPES), slot


def test_the_bind_spec_is_plain_json(write) -> None:
    plan = load_plan(write("s.toml", SCENARIO), write("inv.toml", INVENTORY))
    specs = bind_specs(plan.workloads["y"])
    assert json.loads(json.dumps(specs)) == specs
    assert specs["update"]["types"] == {"value": "text", "y_id": "text"}
    assert specs["insert"]["groups"] == {"field": ["field0", "field1", "field2", "field3"]}
    spec = workload_file_spec(plan.workloads["y"])
    assert json.loads(json.dumps(spec)) == spec
    assert spec["model"]["ops"]["read"]["cassandra"].startswith("SELECT * FROM ${usertable}")
