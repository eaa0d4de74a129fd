"""The sandbox's engine hosts come from the engines' kinds (sandbox/engine_services.py):
each kind that names a sandbox service gets a host, a `--NAME` flag on `up` and a
`sandbox NAME ACTION` command; the sandbox names none of them itself."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from loadtower.errors import LoadtowerError
from loadtower.protocol.engine_kinds import KINDS
from loadtower.sandbox import engine_services
from loadtower.sandbox.commands import add_arguments
from loadtower.sandbox.state import NodeState, SandboxState


def test_one_service_per_kind_that_names_one() -> None:
    named = {k.name for k in KINDS.values() if k.sandbox_service}
    services = engine_services.services()
    assert {svc.name for svc in services} == named >= {"clickhouse", "mongodb"}
    for svc in services:
        assert isinstance(svc, engine_services.EngineService)
        assert engine_services.service(svc.name) is svc
    with pytest.raises(LoadtowerError, match="the sandbox runs no cassandra host"):
        engine_services.service("cassandra")


def test_the_cli_has_a_flag_and_a_command_per_service() -> None:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    for svc in engine_services.services():
        assert getattr(parser.parse_args(["up", f"--no-{svc.name}"]), svc.name) is False
        assert getattr(parser.parse_args(["up"]), svc.name) is None
        args = parser.parse_args([svc.name, "restart", "--dir", "x"])
        assert (args.action, args.engine_action) == (svc.name, "restart")


def test_an_unknown_action_and_a_missing_host_are_one_line(tmp_path: Path) -> None:
    state = SandboxState(ports={"node_exporter": 9100})
    state.nodes[1] = NodeState(index=1, address="127.0.0.1", jmx_port=7199)
    for svc in engine_services.services():
        with pytest.raises(LoadtowerError, match=f"unknown {svc.title} action 'pause'"):
            engine_services.act(svc, tmp_path, state, "pause", lambda *a: None, 1.0)
        with pytest.raises(LoadtowerError, match=f"has no {svc.title} host .*--{svc.name}`"):
            engine_services.act(svc, tmp_path, state, "status", lambda *a: None, 1.0)
        assert engine_services.alive(svc, state)  # not enabled: nothing to be alive
        assert engine_services.inventory_lines(tmp_path, state) == []


def test_a_picked_port_avoids_every_other_port(tmp_path: Path) -> None:
    svc = engine_services.service("clickhouse")
    state = SandboxState(ports={"native": svc.preferred_port})  # taken by another service
    state.nodes[1] = NodeState(index=1, address="127.0.0.1", jmx_port=7199)
    port = engine_services.pick_port(svc, state)
    assert port != svc.preferred_port and port not in (7199,)
