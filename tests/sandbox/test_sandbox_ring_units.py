"""Which nodes the sandbox's ring on disk knows (node directories with system data)."""

from __future__ import annotations

from pathlib import Path

import pytest

from loadtower.sandbox import Sandbox


def joined(directory: Path, *indices: int) -> None:
    for i in indices:
        system = directory / "cassandra" / f"node{i}" / "data" / "system"
        system.mkdir(parents=True)
        (system / "local-1").mkdir()


def test_no_data_is_no_ring(tmp_path: Path) -> None:
    assert Sandbox(tmp_path)._ring_size() == 0
    (tmp_path / "cassandra" / "node2" / "data" / "system").mkdir(parents=True)  # configured only
    assert Sandbox(tmp_path)._ring_size() == 0


def test_the_ring_is_node_1_and_every_node_with_data(tmp_path: Path) -> None:
    joined(tmp_path, 1)
    assert Sandbox(tmp_path)._ring_size() == 1
    joined(tmp_path, 3)  # a standby that joined by a scale-out
    (tmp_path / "cassandra" / "node2" / "conf").mkdir(parents=True)
    assert Sandbox(tmp_path)._ring_size() == 3


def test_a_ring_without_node_1_is_none(tmp_path: Path) -> None:
    joined(tmp_path, 2)
    assert Sandbox(tmp_path)._ring_size() == 0


def test_fewer_nodes_than_the_ring_start_them_all_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    joined(tmp_path, 1, 2)
    sandbox = Sandbox(tmp_path, nodes=1)
    sandbox._include_ring()
    assert sandbox.nodes == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "ring has 2 nodes" in err and "1 asked: starting all 2" in err
    assert f"remove {tmp_path.resolve() / 'cassandra'}" in err
    more = Sandbox(tmp_path, nodes=3)
    more._include_ring()
    assert more.nodes == 3 and capsys.readouterr().err == ""
