"""Which agent hosts get the Rust core's wheel: its tags against the host's Python."""

from __future__ import annotations

from pathlib import Path

import pytest

from loadtower.fleet import core_wheel
from loadtower.fleet.agent_wheelhouse import PythonTarget

NAME = "loadtower_core-0.1.0-cp39-abi3-manylinux_2_34_x86_64.whl"


def _target(version: tuple[int, int] = (3, 11), libc: str = "2.36",
            machine: str = "x86_64", implementation: str = "cpython") -> PythonTarget:
    return PythonTarget(implementation, version, machine, "Linux", "glibc", libc)


@pytest.mark.parametrize(("target", "fits"), [
    (_target(), True),
    (_target(version=(3, 12)), True),
    (_target(libc="2.31"), False),  # older glibc than the wheel's manylinux tag
    (_target(machine="aarch64"), False),
    (_target(implementation="pypy"), False),
])
def test_fits_by_tags(target: PythonTarget, fits: bool) -> None:
    assert core_wheel.fits(Path(NAME), target) is fits


def test_add_to_replaces_an_older_wheel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    built = tmp_path / "dist" / NAME
    built.parent.mkdir()
    built.write_bytes(b"new wheel")
    house = tmp_path / "house"
    house.mkdir()
    (house / "loadtower_core-0.0.9-cp39-abi3-manylinux_2_34_x86_64.whl").write_bytes(b"old")
    monkeypatch.setenv("LOADTOWER_CORE_WHEEL", str(built))
    assert core_wheel.add_to(house, _target())
    assert [p.name for p in house.iterdir()] == [NAME]
    assert core_wheel.add_to(house, _target(libc="2.31")) is False  # it does not fit there
    assert core_wheel.in_house(house) is False
    monkeypatch.setenv("LOADTOWER_CORE_WHEEL", str(tmp_path / "missing.whl"))
    assert core_wheel.built_wheel() is None
