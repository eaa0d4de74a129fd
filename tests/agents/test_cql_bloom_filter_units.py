"""bloom_filter_fp_chance as a table option (study 3's knob): the scenario's workload
key reaches the CQL DDL of the built-in workload's shipped file (CREATE and the ALTER that
an existing table takes), the built-in ttl workload file takes it as a variable and
renders the same DDL as the engines' code did, and bad values are one clear line."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import pytest
from pydantic import ValidationError

from loadtower.engines.cassandra.orchestrator.workload import cql_ddl
from loadtower.scenarios.loader import load_scenario
from loadtower.scenarios.models import Workload
from loadtower.scenarios.workloads.loader import load_workload_file
from loadtower.scenarios.workloads.scenario_files import load_scenario_workloads
from loadtower.scenarios.workloads.target_spec import render_for_target
from tests.scenarios.builtin_reference import TTL_BLOOM_FP_CHANCE
from tests.scenarios.builtin_reference import cql_ddl as reference_ddl
from tests.scenarios.rendered import engine_names


def builtin_ddl(tmp_path: Path, workload: str) -> list[str]:
    """The CQL DDL a built-in workload's phase spec carries (its shipped file rendered)."""
    path = tmp_path / "s.toml"
    path.write_text(f"""name = "s"
[target]
keyspace = "lt"
table = "t"
[dataset]
records = 10
fields = 2
[workloads.w]
{workload}
[[phases]]
type = "load"
""")
    sc, source = load_scenario(path)
    checked = load_scenario_workloads(sc, path, source)["w"]
    return render_for_target(checked, sc.workloads["w"], "cassandra", sc.target)["ddl"]


def test_ttl_tables_always_carry_ttl_and_fp_chance_create_and_alter(tmp_path: Path) -> None:
    ks, table, alter = builtin_ddl(
        tmp_path, 'preset = "ttl"\nttl = "30s"\nbloom_filter_fp_chance = 1.0')
    assert ks.startswith("CREATE KEYSPACE IF NOT EXISTS lt ")
    assert table.endswith(" WITH default_time_to_live = 30 AND bloom_filter_fp_chance = 1.0")
    assert alter == "ALTER TABLE lt.t WITH default_time_to_live = 30 AND " \
        "bloom_filter_fp_chance = 1.0"
    default = builtin_ddl(tmp_path, 'preset = "ttl"')
    assert default[2].endswith(f"bloom_filter_fp_chance = {TTL_BLOOM_FP_CHANCE!r}")
    assert "default_time_to_live = 60 " in default[2]


@pytest.mark.parametrize("schema", ["ycsb", "recipes"])
def test_other_tables_get_the_option_only_when_given(tmp_path: Path, schema: str) -> None:
    plain = builtin_ddl(tmp_path, f'schema = "{schema}"\nmix = {{ read = 1 }}')
    assert len(plain) == 2 and all("bloom" not in s for s in plain)
    swept = builtin_ddl(
        tmp_path, f'schema = "{schema}"\nmix = {{ read = 1 }}\nbloom_filter_fp_chance = 0.1')
    assert swept[1].endswith(" WITH bloom_filter_fp_chance = 0.1")
    assert swept[2] == "ALTER TABLE lt.t WITH bloom_filter_fp_chance = 0.1"


@pytest.mark.parametrize("fp", [0.01, 0.1, 1.0])
def test_the_ttl_workload_file_takes_it_as_a_variable(fp: float) -> None:
    ref = resources.files("loadtower.scenarios.builtin.workloads") / "ttl.toml"
    checked = load_workload_file(Path(str(ref)), {"ttl": 20, "bloom_filter_fp_chance": fp})
    names = engine_names(checked, "lt", None)
    assert cql_ddl(checked.model.tables, names, 1) == reference_ddl(
        "ttl", "lt", "ttl_rows", 1, 2, 20, fp)


@pytest.mark.parametrize("fp", [0, -0.1, 1.5])
def test_an_fp_chance_outside_0_1_is_refused(fp: float) -> None:
    with pytest.raises(ValidationError) as info:
        Workload(preset="ttl", bloom_filter_fp_chance=fp)
    assert "bloom_filter_fp_chance" in str(info.value)


def test_a_workload_file_takes_it_from_its_variables() -> None:
    with pytest.raises(ValidationError) as info:
        Workload(file="ttl", bloom_filter_fp_chance=0.1)
    assert "set the file's variable" in str(info.value)
    assert Workload(file="ttl", vars={"bloom_filter_fp_chance": 0.1}).vars == {
        "bloom_filter_fp_chance": 0.1}
