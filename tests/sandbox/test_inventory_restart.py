"""The sandbox inventory's `restart` node action: its `stop`, then its `start`."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

from loadtower.sandbox.inventory_file import write
from loadtower.sandbox.state import NodeState, SandboxState
from loadtower.scenarios.plan import load_plan


def _inventory(tmp_path: Path, directory: Path) -> Path:
    state = SandboxState(
        nodes={1: NodeState(1, "127.0.0.1", 7199), 2: NodeState(2, "127.0.0.2", 7200, True)},
        ports={"native": 9042, "storage": 7000, "prometheus": 9090, "node_exporter": 9100,
               "ssh": 2222},
        ssh={"user": "me", "key": str(tmp_path / "id"), "known_hosts": str(tmp_path / "kh")},
    )
    directory.mkdir(exist_ok=True)
    return write(directory, state)


def test_every_node_has_a_restart_that_stops_then_starts_it(tmp_path: Path) -> None:
    path = _inventory(tmp_path, tmp_path / "box")
    scenario = tmp_path / "fault.toml"
    scenario.write_text(
        'name = "restart"\n[[phases]]\ntype = "fault"\nhost = "db1"\naction = "restart"\n'
        'rate = 10\nduration = "30s"\n'
    )
    inventory = load_plan(scenario, path).inventory  # a fault with restart is accepted
    for name in ("db1", "db2"):
        actions = inventory.hosts[name].actions
        stop, start = actions["restart"].split(" && ")
        assert (stop, start) == (actions["stop"], actions["start"])
        assert shlex.split(stop)[-3:] == ["--dir", str(tmp_path / "box"), name[-1]]
        assert shlex.split(stop)[-5:-3] == ["node", "stop"]


def test_restart_does_not_start_a_node_whose_stop_failed(tmp_path: Path) -> None:
    """Run as the action runs (a shell command line): the stop fails here (no sandbox in
    that directory), so the start never runs and the action fails with the stop's reason."""
    empty = tmp_path / "nothing-here"
    inventory = load_plan(_scenario(tmp_path), _inventory(tmp_path, empty)).inventory
    done = subprocess.run(
        inventory.hosts["db1"].actions["restart"], shell=True, capture_output=True, text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert done.stderr.count("no sandbox in") == 1, done.stderr  # the stop's error, once


def _scenario(tmp_path: Path) -> Path:
    path = tmp_path / "run.toml"
    path.write_text('name = "r"\n[[phases]]\ntype = "run"\nrate = 1\nduration = "1s"\n')
    return path
