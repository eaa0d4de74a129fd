"""The per-host keys of a cluster host (``cgroup``, ``net_device``) and the ``partition``
/ ``heal`` node actions: accepted when right, one line (file, line, key) when wrong."""

from __future__ import annotations

import pytest

from loadtower.errors import ConfigError
from loadtower.scenarios.loader import load_inventory
from loadtower.scenarios.models import ACTIONS

from .conftest import INVENTORY

DB1 = 'engine = "cassandra"\n\n[hosts.db1.actions]\n'


def with_db1(lines: str, actions: str = "") -> str:
    assert DB1 in INVENTORY
    return INVENTORY.replace(DB1, f'engine = "cassandra"\n{lines}\n[hosts.db1.actions]\n{actions}', 1)


def load_error(write, text: str) -> str:
    path = write("inv.toml", text)
    with pytest.raises(ConfigError) as info:
        load_inventory(path)
    return str(info.value).replace(str(path), "inv.toml")


def test_cgroup_and_net_device_are_read(write) -> None:
    text = with_db1('cgroup = "loadtower/db1"\nnet_device = "data0"\n')
    host = load_inventory(write("inv.toml", text))[0].hosts["db1"]
    assert (host.cgroup, host.net_device) == ("loadtower/db1", "data0")
    assert load_inventory(write("plain.toml", INVENTORY))[0].hosts["db1"].cgroup is None


@pytest.mark.parametrize(
    "value", ["/loadtower/db1", "loadtower/../db1", "loadtower db1", "a;b", "loadtower//db1", ""]
)
def test_a_bad_cgroup_is_one_line_naming_the_key(write, value: str) -> None:
    message = load_error(write, with_db1(f'cgroup = "{value}"\n'))
    assert message.startswith("inv.toml:18: key 'hosts.db1.cgroup': invalid cgroup"), message
    assert "\n" not in message


@pytest.mark.parametrize("value", ["data0-is-far-too-long", "eth 0", "a/b", "$(id)"])
def test_a_bad_net_device_is_one_line_naming_the_key(write, value: str) -> None:
    message = load_error(write, with_db1(f'net_device = "{value}"\n'))
    assert message.startswith("inv.toml:18: key 'hosts.db1.net_device': invalid net_device")


def test_partition_and_heal_are_node_actions(write) -> None:
    assert {"partition", "heal"} <= set(ACTIONS)
    actions = 'partition = "sudo ip link set data0 down"\nheal = "sudo ip link set data0 up"\n'
    host = load_inventory(write("inv.toml", with_db1("", actions)))[0].hosts["db1"]
    assert host.actions["partition"] == "sudo ip link set data0 down"
    assert host.actions["heal"] == "sudo ip link set data0 up"


def test_a_partition_template_with_a_typo_fails_check(write) -> None:
    message = load_error(write, with_db1("", 'partition = "down {adress}"\n'))
    assert message.startswith("inv.toml:20: key 'hosts.db1.actions.partition': unknown "
                              "placeholder {adress} (did you mean {address}?)"), message


def test_fault_phases_partition_and_heal_a_host(write) -> None:
    from loadtower.scenarios.models import FaultPhase
    from loadtower.scenarios.plan import load_plan

    from .conftest import SCENARIO

    actions = 'partition = "sudo ip link set data0 down"\nheal = "sudo ip link set data0 up"\n'
    scenario = SCENARIO.replace('action = "kill"', 'action = "partition"') + (
        '\n[[phases]]\ntype = "fault"\nhost = "db1"\naction = "heal"\nrate = 100\n')
    plan = load_plan(write("s.toml", scenario), write("inv.toml", with_db1("", actions)))
    faults = [p for p in plan.scenario.phases if isinstance(p, FaultPhase)]
    assert [p.action for p in faults] == ["partition", "heal"]
    # a host that does not declare them: `check` names the action and the host
    with pytest.raises(ConfigError, match="action 'partition' is not declared for host 'db1'"):
        load_plan(write("s2.toml", scenario), write("inv2.toml", INVENTORY))
