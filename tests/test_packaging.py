"""`pip install .` gives one import name (`loadtower`) and a working `loadtower --help`."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(out),
            str(ROOT),
        ],
        check=True,
        timeout=300,
    )
    return next(out.glob("loadtower-*.whl"))


def test_wheel_has_one_top_level_package(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert tops == {"loadtower"}
    for room in ("tui", "agents", "scenarios", "store", "sandbox"):
        assert f"loadtower/{room}/__init__.py" in names
    assert "loadtower/scenarios/builtin/quickstart.toml" in names


def test_fresh_venv_install_works_from_any_directory(wheel: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120
    )
    site = next((venv / "lib").glob("python3*/site-packages"))
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "-q",
            "--target",
            str(site),
            str(wheel),
        ],
        check=True,
        timeout=300,
    )
    python = venv / "bin" / "python"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    help_text = subprocess.run(
        [str(python), "-m", "loadtower", "--help"],
        cwd=elsewhere,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    for command in (
        "sandbox",
        "check",
        "run",
        "agent",
        "runs",
        "sql",
        "compare",
        "export",
        "report",
        "tui",
        "demo",
    ):
        assert f"    {command}" in help_text
    for name in ("store", "agents", "tui", "scenarios", "sandbox"):
        probe = subprocess.run(
            [str(python), "-c", f"import {name}"],
            cwd=elsewhere,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert probe.returncode != 0 and "ModuleNotFoundError" in probe.stderr


def test_every_command_has_help() -> None:
    from loadtower.cli import COMMANDS

    for command in COMMANDS:
        result = subprocess.run(
            [sys.executable, "-m", "loadtower", command, "--help"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode == 0, result.stderr
        assert "usage: loadtower" in result.stdout
