"""`sandbox up --lean` (the ring's nodes tuned for many short runs): the flag's default
comes from $LOADTOWER_SANDBOX_LEAN, the choice is kept in the sandbox's state, and every
later start of a node (a restart, a standby's, from a `Sandbox` made without the flag)
takes it from there."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from loadtower.sandbox import Sandbox, commands
from loadtower.sandbox import state as st
from loadtower.sandbox.cluster_state import ClusterState
from loadtower.sandbox.state import NodeState, SandboxState


def _up_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    commands.add_arguments(parser)
    return parser.parse_args(["up", *argv])


def test_the_flags_default_is_the_environments(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(commands.LEAN_ENV, raising=False)
    assert _up_args([]).lean is False
    assert _up_args(["--lean"]).lean is True
    monkeypatch.setenv(commands.LEAN_ENV, "1")
    assert _up_args([]).lean is True
    assert _up_args(["--no-lean"]).lean is False
    monkeypatch.setenv(commands.LEAN_ENV, "yes")  # only "1" turns it on
    assert _up_args([]).lean is False


def test_the_state_keeps_it_and_a_later_start_uses_it(tmp_path: Path) -> None:
    state = SandboxState(lean=True, ports={"storage": 7000, "native": 9042})
    state.nodes[1] = NodeState(index=1, address="127.0.0.1", jmx_port=7199)
    st.save(tmp_path, state)
    loaded = st.load(tmp_path)
    assert loaded is not None and loaded.lean is True
    # a Sandbox made without --lean (as `sandbox node start` makes one) starts it lean
    argv = Sandbox(tmp_path)._node(loaded, 1).command()
    assert "-XX:TieredStopAtLevel=1" in argv
    loaded.lean = False
    assert "-XX:TieredStopAtLevel=1" not in Sandbox(tmp_path)._node(loaded, 1).command()
    # a state written before the field existed reads as not lean
    assert SandboxState.from_json({"nodes": {}}).lean is False


def test_a_new_plan_takes_the_sandboxs_choice(tmp_path: Path) -> None:
    assert Sandbox(tmp_path, lean=True)._plan(None).lean is True
    assert Sandbox(tmp_path)._plan(None).lean is False


def test_the_clusters_state_keeps_it() -> None:
    assert ClusterState.from_json(ClusterState(lean=True).to_json()).lean is True
    assert ClusterState.from_json({}).lean is False
