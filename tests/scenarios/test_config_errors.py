"""Every class of bad inventory/scenario input gets one line naming file, line and key."""

from __future__ import annotations

from pathlib import Path

import pytest

from loadtower.cli import main
from loadtower.errors import ConfigError
from loadtower.scenarios.loader import load_inventory, load_scenario
from loadtower.scenarios.plan import load_plan

from .conftest import INVENTORY, SCENARIO


def scenario_error(write, text: str) -> str:
    path = write("s.toml", text)
    with pytest.raises(ConfigError) as info:
        load_scenario(path)
    return str(info.value).replace(str(path), "s.toml")


def inventory_error(write, text: str) -> str:
    path = write("inv.toml", text)
    with pytest.raises(ConfigError) as info:
        load_inventory(path)
    return str(info.value).replace(str(path), "inv.toml")


def plan_error(write, scenario: str, inventory: str = INVENTORY) -> str:
    s, i = write("s.toml", scenario), write("inv.toml", inventory)
    with pytest.raises(ConfigError) as info:
        load_plan(s, i)
    return str(info.value).replace(str(s), "s.toml").replace(str(i), "inv.toml")


def test_valid_files_load(write) -> None:
    plan = load_plan(write("s.toml", SCENARIO), write("inv.toml", INVENTORY))
    assert plan.scenario.phases[1].duration == 10.0
    assert plan.scenario.workloads["main"].mix == {"read": 50, "update": 50}
    assert plan.inventory.with_role("db") == {"db1": plan.inventory.hosts["db1"]}


def test_unknown_key(write) -> None:
    text = SCENARIO.replace("records = 1000", "records = 1000\nrecrods = 5")
    assert scenario_error(write, text) == (
        "s.toml:6: key 'dataset.recrods': unknown key (did you mean 'records'?)"
    )


def test_unknown_top_level_key(write) -> None:
    assert scenario_error(write, "colour = 1\n" + SCENARIO) == "s.toml:1: key 'colour': unknown key"


def test_wrong_type(write) -> None:
    text = SCENARIO.replace("rate = 100\n\n", 'rate = "fast"\n\n', 1)
    assert scenario_error(write, text) == (
        "s.toml:16: key 'phases[1].rate': wrong type: expected a number, got string 'fast'"
    )


def test_wrong_type_integer(write) -> None:
    text = SCENARIO.replace("records = 1000", "records = 10.5")
    assert scenario_error(write, text) == (
        "s.toml:5: key 'dataset.records': wrong type: expected an integer, got number 10.5"
    )


def test_bad_duration(write) -> None:
    text = SCENARIO.replace('duration = "10s"', 'duration = "10 parsecs"')
    message = scenario_error(write, text)
    assert message.startswith("s.toml:15: key 'phases[1].duration': expected a duration")


def test_missing_key(write) -> None:
    text = SCENARIO.replace('duration = "10s"\n', "")
    assert (
        scenario_error(write, text) == "s.toml:13: key 'phases[1].duration': missing required key"
    )


def test_missing_name(write) -> None:
    assert scenario_error(write, SCENARIO.replace('name = "t"\n', "")) == (
        "s.toml:1: key 'name': missing required key"
    )


def test_missing_phases(write) -> None:
    text = SCENARIO[: SCENARIO.index("[[phases]]")]
    assert scenario_error(write, text) == "s.toml:1: key 'phases': missing required key"


def test_empty_scenario_names_line_1(write) -> None:
    assert scenario_error(write, "") == "s.toml:1: key 'name': missing required key"


def test_misspelled_phase_key_is_named_before_the_missing_one(write) -> None:
    text = SCENARIO.replace('duration = "10s"', 'durration = "10s"')
    assert scenario_error(write, text) == (
        "s.toml:15: key 'phases[1].durration': unknown key (did you mean 'duration'?)"
    )


def test_unknown_key_before_missing_top_level_key(write) -> None:
    text = SCENARIO.replace('name = "t"\n', "").replace("[dataset]", "[datasett]")
    assert scenario_error(write, text) == (
        "s.toml:3: key 'datasett': unknown key (did you mean 'dataset'?)"
    )


def test_unknown_key_without_a_close_name_gets_no_hint(write) -> None:
    text = SCENARIO.replace("records = 1000", "records = 1000\nzebra = 5")
    assert scenario_error(write, text) == "s.toml:6: key 'dataset.zebra': unknown key"


def test_unknown_phase(write) -> None:
    text = SCENARIO.replace('type = "load"', 'type = "lod"')
    assert scenario_error(write, text) == (
        "s.toml:11: key 'phases[0].type': unknown phase type 'lod' "
        "(expected one of: load, run, ramp, scale_out, compaction, flush, pause, fault, search)"
    )


def test_unknown_op_in_mix(write) -> None:
    text = SCENARIO.replace('preset = "ycsb-a"', 'preset = "ycsb-a"\nmix = { read = 1, reed = 2 }')
    message = scenario_error(write, text)
    assert message.startswith("s.toml:9: key 'workloads.main.mix.reed': unknown name 'reed'")


def test_invalid_choice(write) -> None:
    text = SCENARIO.replace('engine = "cassandra"', 'engine = "oracle"')
    message = scenario_error(write, text)
    assert message.startswith(
        "s.toml:2: key 'engine': invalid value 'oracle' (expected 'cassandra'"
    )


def test_both_load_models(write) -> None:
    text = SCENARIO.replace("rate = 100\n\n", "rate = 100\nusers = 4\n\n", 1)
    assert scenario_error(write, text) == (
        "s.toml:13: key 'phases[1]': give either 'rate' (open model) or 'users' (closed model), not both"
    )


def test_invalid_toml(write) -> None:
    message = scenario_error(write, SCENARIO.replace("records = 1000", "records = = 1000"))
    assert message.startswith("s.toml:5: invalid TOML")


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_inventory(tmp_path / "nope.toml")
    assert str(info.value) == f"{tmp_path / 'nope.toml'}: file not found"


def test_unknown_role(write) -> None:
    text = INVENTORY.replace('roles = ["agent"]', 'roles = ["agnet"]')
    message = inventory_error(write, text)
    assert message.startswith("inv.toml:37: key 'hosts.agent1.roles[0]': invalid value 'agnet'")


def test_inventory_wrong_type(write) -> None:
    text = INVENTORY.replace("ssh_port = 2222", 'ssh_port = "2222"', 1)
    assert inventory_error(write, text) == (
        "inv.toml:15: key 'hosts.db1.ssh_port': wrong type: expected an integer, got string '2222'"
    )


def test_inventory_unknown_action(write) -> None:
    text = INVENTORY.replace('compact = "nodetool compact"', 'compactt = "x"', 1)
    message = inventory_error(write, text)
    assert message.startswith(
        "inv.toml:21: key 'hosts.db1.actions.compactt': unknown name 'compactt'"
    )


def test_db_host_without_engine(write) -> None:
    text = INVENTORY.replace('engine = "cassandra"\n', "", 1)
    assert (
        inventory_error(write, text)
        == "inv.toml:13: key 'hosts.db1': a host with role 'db' needs 'engine'"
    )


def test_missing_host(write) -> None:
    text = SCENARIO.replace('host = "db1"', 'host = "db9"')
    assert (
        plan_error(write, text)
        == "s.toml:20: key 'phases[2].host': host 'db9' is not in the inventory inv.toml"
    )


def test_host_without_role(write) -> None:
    text = SCENARIO.replace('host = "db1"', 'host = "agent1"')
    assert (
        plan_error(write, text)
        == "s.toml:20: key 'phases[2].host': host 'agent1' does not have role 'db'"
    )


def test_undeclared_action(write) -> None:
    text = SCENARIO.replace('action = "kill"', 'action = "pause"')
    assert plan_error(write, text) == (
        "s.toml:21: key 'phases[2].action': action 'pause' is not declared for host 'db1' "
        "in inv.toml (declared: kill, compact)"
    )


def test_unknown_workload(write) -> None:
    text = SCENARIO.replace('type = "run"', 'type = "run"\nworkload = "b"')
    assert (
        plan_error(write, text)
        == "s.toml:15: key 'phases[1].workload': unknown workload 'b' (defined: main)"
    )


def test_scale_out_needs_standby(write) -> None:
    text = SCENARIO + '\n[[phases]]\ntype = "scale_out"\nhost = "db1"\nrate = 10\n'
    message = plan_error(write, text)
    assert message.startswith("s.toml:26: key 'phases[3].host': host 'db1' is not a standby host")


def test_check_command_exit_code(write, capsys) -> None:
    s = write("s.toml", SCENARIO.replace('type = "load"', 'type = "lod"'))
    i = write("inv.toml", INVENTORY)
    assert main(["check", str(s), "--inventory", str(i)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert f"{s}:11: key 'phases[0].type': unknown phase type 'lod'" in err[0]


def test_check_command_ok(write, capsys) -> None:
    s, i = write("s.toml", SCENARIO), write("inv.toml", INVENTORY)
    assert main(["check", str(s), "--inventory", str(i)]) == 0
    assert "ok" in capsys.readouterr().out


@pytest.mark.parametrize("value", ["wire", "driver"])
def test_removed_native_io_names_file_line_key_and_what_to_use(write, capsys, value: str) -> None:
    """native_io "wire" and "driver" (the hand-written CQL client and the ctypes sender)
    are gone: an old scenario gets one line saying so and what to use, exit 2."""
    text = SCENARIO.replace('engine = "cassandra"\n',
                            f'engine = "cassandra"\n\n[target]\nnative_io = "{value}"\n', 1)
    message = scenario_error(write, text)
    assert message.startswith(f"s.toml:5: key 'target.native_io': native_io '{value}' was "
                              "removed ("), message
    assert message.endswith("use 'rust' (the default: the Rust load core) or 'python' (Python "
                            "lanes over the session driver)")
    s, i = write("s.toml", text), write("inv.toml", INVENTORY)
    assert main(["check", str(s), "--inventory", str(i)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{s}:5: key 'target.native_io'" in err[0]


def test_native_io_python_loads(write) -> None:
    text = SCENARIO.replace('engine = "cassandra"\n',
                            'engine = "cassandra"\n\n[target]\nnative_io = "python"\n', 1)
    assert load_scenario(write("s.toml", text))[0].target.native_io == "python"
