"""Engines are found through the `loadtower.engines` entry-point group
(protocol/engine_kinds.py `discover`), and the agent wheel carries each engine's agent
part and registration but not its orchestrator part."""

from __future__ import annotations

import importlib
import sys
import tomllib
import types
import zipfile
from collections.abc import Iterator
from dataclasses import replace
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path

import pytest

from loadtower.build import agent_files
from loadtower.engines.clickhouse import CLICKHOUSE
from loadtower.protocol.engine_kinds import GROUP, EngineRegistryError, discover

MODULE = "loadtower_test_engines_fixture"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def fixture_module() -> Iterator[types.ModuleType]:
    """A third party's engine package, as an importable module."""
    module = types.ModuleType(MODULE)
    module.REDISH = replace(CLICKHOUSE, name="redish", title="Redish")  # type: ignore[attr-defined]
    module.CLASH = replace(CLICKHOUSE, title="another ClickHouse")  # type: ignore[attr-defined]
    module.NOT_A_KIND = ("clickhouse",)  # type: ignore[attr-defined]
    sys.modules[MODULE] = module
    try:
        yield module
    finally:
        del sys.modules[MODULE]


def _point(name: str, value: str) -> EntryPoint:
    return EntryPoint(name=name, value=value, group=GROUP)


def test_the_installed_registrations_are_the_built_in_packages() -> None:
    """The installed entry points are pyproject.toml's lines, one per engine package (each
    under engines/), and their kinds come in the entry points' order."""
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"][
        GROUP]
    found = {p.name: p.value for p in entry_points(group=GROUP)}
    assert found == declared
    assert {"cassandra", "clickhouse", "mongodb"} <= set(found)
    for name, value in found.items():
        assert value == f"loadtower.engines.{name}:KINDS"
        assert (ROOT / "engines" / name / "__init__.py").is_file()
    kinds = list(discover())
    assert kinds[:4] == ["cassandra", "scylla", "clickhouse", "mongodb"]
    assert kinds == [k.name for name in sorted(found) for k in importlib.import_module(
        f"loadtower.engines.{name}").KINDS]


def test_a_third_partys_engine_is_found_beside_ours(fixture_module: types.ModuleType) -> None:
    points = [*entry_points(group=GROUP), _point("redish", f"{MODULE}:REDISH")]
    kinds = discover(points)
    assert list(kinds) == [*discover(), "redish"]  # "redish" sorts after every built-in
    assert kinds["redish"] is fixture_module.REDISH


def test_the_same_registration_twice_is_one_engine() -> None:
    """`loadtower` and `loadtower-agent` installed on one host register the same lines."""
    points = [*entry_points(group=GROUP), *entry_points(group=GROUP)]
    assert list(discover(points)) == list(discover(entry_points(group=GROUP)))


def test_two_engines_with_one_name_are_refused(fixture_module: types.ModuleType) -> None:
    points = [*entry_points(group=GROUP), _point("zclash", f"{MODULE}:CLASH")]
    with pytest.raises(EngineRegistryError, match="two engines are named 'clickhouse'"):
        discover(points)


def test_a_registration_that_is_not_a_kind_is_refused(fixture_module: types.ModuleType) -> None:
    with pytest.raises(EngineRegistryError, match=r"redish .*NOT_A_KIND.* is not an EngineKind"):
        discover([_point("redish", f"{MODULE}:NOT_A_KIND")])


def test_an_engine_that_does_not_import_is_left_out_with_a_line(
        capsys: pytest.CaptureFixture[str]) -> None:
    points = [*entry_points(group=GROUP), _point("gone", "loadtower_no_such_engine:KINDS"),
              _point("nameless", "loadtower.engines.mongodb:NO_SUCH_KINDS")]
    kinds = discover(points)
    assert "gone" not in kinds and "nameless" not in kinds and "mongodb" in kinds
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2
    assert err[0].startswith(
        "loadtower: engine gone (loadtower_no_such_engine:KINDS) is left out: No module named")
    assert err[1].startswith("loadtower: engine nameless (loadtower.engines.mongodb:NO_SUCH_KINDS)"
                             " is left out: ")


def test_no_engine_at_all_says_to_install() -> None:
    with pytest.raises(EngineRegistryError, match=r"no engine is registered .*\(make install"):
        discover([])


def test_the_agent_wheel_has_each_engines_agent_part_and_its_registration(
        tmp_path: Path) -> None:
    from loadtower.fleet.agent_wheel import build_agent_wheel

    shipped = [rel for rel, _ in agent_files()]
    for engine in {p.name for p in entry_points(group=GROUP)}:
        assert f"loadtower/engines/{engine}/__init__.py" in shipped
        assert f"loadtower/engines/{engine}/agent/backend.py" in shipped
        for part in ("orchestrator", "sandbox", "builtin"):  # the orchestrator's, not a load host's
            assert not any(rel.startswith(f"loadtower/engines/{engine}/{part}/")
                           for rel in shipped), (engine, part)
    with zipfile.ZipFile(build_agent_wheel(tmp_path)) as wheel:
        names = wheel.namelist()
        points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
        text = wheel.read(points).decode()
    assert "loadtower/engines/mongodb/agent/session.py" in names
    assert "loadtower/engines/mongodb/orchestrator/node.py" not in names
    assert f"[{GROUP}]\n" in text
    assert "mongodb = loadtower.engines.mongodb:KINDS\n" in text
