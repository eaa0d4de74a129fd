"""The sandbox reserves a port for `loadtower run`'s live figures on its first address,
writes it into its inventory (``[metrics] serve``: a run there serves on it by default)
and has its Prometheus scrape it (job ``loadtower``). No service is started."""

from __future__ import annotations

from pathlib import Path

from loadtower.sandbox import Sandbox
from loadtower.sandbox.inventory_file import write
from loadtower.sandbox.metrics_services import (
    RUN_METRICS,
    prometheus_config,
    run_metrics_target,
)
from loadtower.sandbox.state import NodeState, SandboxState
from loadtower.scenarios.loader import load_inventory
from loadtower.scenarios.serve_address import ServeAddress, chosen_address

PORTS = {"native": 9042, "storage": 7000, "prometheus": 9090, "node_exporter": 9100, "ssh": 2222}


def _state(tmp_path: Path, **ports: int) -> SandboxState:
    return SandboxState(
        nodes={1: NodeState(1, "127.0.3.1", 7199), 2: NodeState(2, "127.0.3.2", 7200, True)},
        ports={**PORTS, **ports},
        ssh={"user": "me", "key": str(tmp_path / "id"), "known_hosts": str(tmp_path / "kh")},
    )


def test_the_port_is_reserved_on_the_first_address(tmp_path: Path) -> None:
    state = Sandbox(tmp_path, first_address="127.0.3.1")._plan(None)
    port = state.ports[RUN_METRICS]
    assert list(state.ports.values()).count(port) == 1  # no other service's
    assert run_metrics_target(state) == f"127.0.3.1:{port}"


def test_a_run_on_the_sandbox_inventory_serves_where_prometheus_scrapes(tmp_path: Path) -> None:
    state = _state(tmp_path, **{RUN_METRICS: 9464})
    inventory, _ = load_inventory(write(tmp_path, state))
    assert inventory.metrics.serve == "127.0.3.1:9464"
    assert chosen_address(None, False, inventory.metrics.serve, "inv.toml") == ServeAddress(
        "127.0.3.1", 9464, "[metrics] serve of inv.toml")
    config = prometheus_config(9100, run_metrics_target(state))
    assert config.endswith("  - job_name: loadtower\n    static_configs:\n"
                           "      - targets: ['127.0.3.1:9464']\n")


def test_a_sandbox_made_before_has_no_serve_and_no_job(tmp_path: Path) -> None:
    state = _state(tmp_path)  # its state has no such port
    inventory, _ = load_inventory(write(tmp_path, state))
    assert inventory.metrics.serve is None
    assert "loadtower" not in prometheus_config(9100, run_metrics_target(state))
