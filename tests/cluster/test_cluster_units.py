"""Pure parts of the cluster sandbox: its sudo rules, inventory, CLI checks and layout."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import pytest

from loadtower.errors import LoadtowerError
from loadtower.sandbox import cluster_inventory, cluster_sudoers
from loadtower.sandbox.cluster_layout import AGENT_HOSTS, DB_HOSTS, agent_bootstrap_dir, hosts
from loadtower.sandbox.cluster_state import ClusterNode, ClusterState


def test_sudo_rules_are_exactly_each_nodes_actions(tmp_path: Path) -> None:
    rules = cluster_sudoers.rules(tmp_path)
    assert len(rules) == len(DB_HOSTS) * len(cluster_sudoers.NODE_ACTIONS)
    prefix = f"ltsandbox ALL=(root) NOPASSWD: {sys.executable} -m loadtower sandbox node "
    seen = set()
    for rule in rules:
        assert rule.startswith(prefix), rule
        action, flag, directory, node = rule[len(prefix) :].split(" ")
        assert flag == "--dir" and directory == str(tmp_path)
        assert action in cluster_sudoers.NODE_ACTIONS
        seen.add((action, int(node)))
    assert seen == {(a, h.node) for h in DB_HOSTS for a in cluster_sudoers.NODE_ACTIONS}
    assert not any("decommission" in r or "ALL\n" in r for r in rules)


@pytest.mark.parametrize("bad", ["/tmp/with space", "/tmp/a,b", "/tmp/a:b", "/tmp/a=b", "/tmp/$x"])
def test_a_directory_sudo_cannot_carry_verbatim_is_refused(bad: str) -> None:
    with pytest.raises(LoadtowerError, match="sudo rules"):
        cluster_sudoers.rules(Path(bad))


def _state() -> ClusterState:
    state = ClusterState(hosts=[h.name for h in hosts()])
    state.ssh = {"key": "/d/cluster/ssh/id_ed25519", "known_hosts": "/d/cluster/ssh/known_hosts"}
    state.tls = {"ca": "/d/ca.pem", "client_cert": "/d/client.pem", "client_key": "/d/client.key"}
    state.ports = {"prometheus": 9091, "node_exporter": 9101}
    state.nodes = {h.node: ClusterNode(h.name, standby=h.standby) for h in DB_HOSTS}
    return state


def test_inventory_names_data_and_mgmt_addresses_and_sudo_actions(tmp_path: Path) -> None:
    data = tomllib.loads(cluster_inventory.render(tmp_path, _state()))
    assert data["ssh"]["user"] == "ltsandbox" and data["ssh"]["port"] == 22
    cass = data["cassandra"]
    assert cass["tls"] is True and cass["tls_verify_hostname"] is True
    assert cass["tls_ca_file"] == "/d/ca.pem" and cass["tls_key_file"] == "/d/client.key"
    db1 = data["hosts"]["db1"]
    assert db1["address"] == "198.18.0.11" and db1["ssh_host"] == "198.19.0.11"
    assert db1["cgroup"] == "loadtower/db1" and db1["net_device"] == "data0"
    assert data["hosts"]["db2"]["standby"] is True
    assert data["hosts"]["db3"]["standby"] is False
    actions = data["hosts"]["db3"]["actions"]
    assert set(actions) == {*cluster_sudoers.NODE_ACTIONS, "restart"}
    assert actions["partition"] == cluster_sudoers.node_command(tmp_path, "partition", 3)
    assert actions["partition"].startswith("sudo -n ")
    agents = [data["hosts"][h.name] for h in AGENT_HOSTS]
    assert [a["python"] for a in agents] == ["/usr/bin/python3"] * 2
    assert all(a["bootstrap"] is True and a["processes"] == 1 for a in agents)
    dirs = [a["bootstrap_dir"] for a in agents]
    assert dirs == [agent_bootstrap_dir("agent1"), agent_bootstrap_dir("agent2")]
    assert len(set(dirs)) == 2  # one filesystem: each agent host its own
    assert "ch1" not in data["hosts"]


def test_inventory_is_a_valid_loadtower_inventory(tmp_path: Path) -> None:
    from loadtower.scenarios.models import Inventory

    inventory = Inventory.model_validate(
        tomllib.loads(cluster_inventory.render(tmp_path, _state()))
    )
    assert set(inventory.with_role("agent")) == {"agent1", "agent2"}
    assert set(inventory.with_role("db")) == {"db1", "db3"}


def test_cluster_state_round_trips() -> None:
    from loadtower.sandbox.cluster_state import ClusterState as S

    state = _state()
    state.nodes[3].partitioned = True
    state.steps.append({"step": "sshd per host", "seconds": 1.5})
    assert S.from_json(state.to_json()) == state


def test_partition_on_a_loopback_sandbox_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from loadtower.cli import main

    code = main(["sandbox", "node", "partition", "--dir", str(tmp_path), "1"])
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "needs the cluster sandbox" in err[0], err


def test_cluster_has_a_fixed_layout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from loadtower.cli import main

    code = main(["sandbox", "up", "--cluster", "--dir", str(tmp_path), "--cassandra-nodes", "2"])
    assert code == 2
    assert "fixed layout" in capsys.readouterr().err


def test_an_engine_service_with_a_cluster_host_gets_its_host_and_section(tmp_path: Path) -> None:
    """The cluster's engine hosts come from the services (`cluster_host`): ClickHouse's ch1."""
    from loadtower.sandbox.engine_services import cluster_services

    assert [(s.name, s.cluster_host) for s in cluster_services()] == [("clickhouse", "ch1")]
    state = _state()
    state.services["clickhouse"] = None  # started by `up` (the record does not matter here)
    data = tomllib.loads(cluster_inventory.render(tmp_path, state))
    ch1 = data["hosts"]["ch1"]
    assert ch1["engine"] == "clickhouse" and ch1["port"] == 8123 and ch1["roles"] == ["db"]
    assert ch1["address"] == "198.18.0.31" and ch1["ssh_host"] == "198.19.0.31"
    assert data["clickhouse"]["password_file"] == str(tmp_path / "secrets" / "clickhouse.password")
    assert data["hosts"]["db1"]["engine"] == "cassandra" and data["cassandra"]["port"] == 9042


def test_the_rings_login_is_spread_to_every_dc_then_repaired(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Cassandra's `spread_login` (engines/cassandra/sandbox/multi_dc.py): system_auth gets
    one replica per DC, then a repair on the seed; a failed repair is one error."""
    import subprocess

    from loadtower.engines.cassandra.sandbox import multi_dc

    assert multi_dc.system_auth_replication(["dc2", "dc1", "dc1"]) == (
        "{'class': 'NetworkTopologyStrategy', 'dc1': 1, 'dc2': 1}"
    )
    spread: list[tuple] = []
    monkeypatch.setattr(multi_dc, "spread_system_auth", lambda *a: spread.append(a))
    calls: list[tuple] = []

    def admin(*args: str, timeout: float = 120.0) -> subprocess.CompletedProcess:
        calls.append((args, timeout))
        return subprocess.CompletedProcess(args, 1, stdout="", stderr="no JMX")

    with pytest.raises(LoadtowerError, match="^nodetool repair system_auth on db1 failed: no JMX$"):
        multi_dc.spread_login("198.18.0.11", 9042, ["dc1", "dc2"], None, admin, "db1")  # type: ignore[arg-type]
    assert spread == [("198.18.0.11", 9042, ["dc1", "dc2"], None)]
    assert calls == [(("repair", "-full", "system_auth"), 300)]
