"""`pip install` of the wheel into a fresh venv gives one import name (`loadtower`) and a
working `loadtower` console script from any directory.

Offline: the wheel is built without build isolation and installed with --no-deps and
--no-index, so no package index is asked. Every subprocess has a timeout.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from loadtower.cli import COMMANDS

ROOT = Path(__file__).resolve().parents[1]
ROOMS = ("protocol", "tui", "agents", "scenarios", "orchestrator", "fleet", "store", "sandbox",
         "engines")
PACKAGING_FILES = ("pyproject.toml", "setup.py", "README.md")
OFFLINE = {"PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PYTHONNOUSERSITE": "1"}


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env.pop("VIRTUAL_ENV", None)
    return {**env, **OFFLINE}


def _run(argv: list[str | Path], cwd: Path | None = None, timeout: float = 60) -> str:
    result = subprocess.run(
        [str(a) for a in argv],
        cwd=cwd,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert result.returncode == 0, f"{argv}: {result.stderr[-2000:]}"
    return result.stdout


def _clean_copy(into: Path) -> Path:
    """The packaging files and the rooms: setuptools
    writes build/ and *.egg-info next to what it builds, so not in the source tree."""
    for name in PACKAGING_FILES:
        shutil.copy2(ROOT / name, into / name)
    skip = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build")
    for room in ("loadtower", *ROOMS):
        if (ROOT / room).is_dir():
            shutil.copytree(ROOT / room, into / room, symlinks=True, ignore=skip)
    return into


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    source = _clean_copy(tmp_path_factory.mktemp("source"))
    _run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
         "--no-index", "-q", "-w", out, source],
        timeout=300,
    )  # fmt: skip
    return next(out.glob("loadtower-*.whl"))


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv (python -m venv, with pip) with only the wheel installed."""
    venv = tmp_path_factory.mktemp("fresh") / "venv"
    _run([sys.executable, "-m", "venv", venv], timeout=180)
    _run([venv / "bin" / "python", "-m", "pip", "install", "--no-deps", "--no-index", "-q", wheel],
         timeout=300)  # fmt: skip
    return venv


@pytest.fixture
def elsewhere(tmp_path: Path) -> Path:
    """A directory with no loadtower source in it or above it."""
    path = tmp_path / "elsewhere"
    path.mkdir()
    assert not (path.parent / "scenarios").exists()
    return path


def test_wheel_has_one_top_level_package(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert tops == {"loadtower"}
    for room in ROOMS:
        assert f"loadtower/{room}/__init__.py" in names
    assert "loadtower/scenarios/builtin/quickstart.toml" in names
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert "loadtower = loadtower.cli:main" in text
    assert "[loadtower.engines]" in text and "mongodb = loadtower.engines.mongodb:KINDS" in text
    assert "loadtower/engines/mongodb/sandbox/service.py" in names


def test_console_script_help_from_another_directory(venv: Path, elsewhere: Path) -> None:
    script = venv / "bin" / "loadtower"
    assert script.is_file() and os.access(script, os.X_OK)
    assert script.read_text().startswith(f"#!{venv / 'bin' / 'python'}")
    help_text = _run([script, "--help"], cwd=elsewhere)
    assert help_text.startswith("usage: loadtower")
    for command in COMMANDS:
        assert f"    {command}" in help_text
        sub_help = _run([script, command, "--help"], cwd=elsewhere)
        assert sub_help.startswith(f"usage: loadtower {command}"), sub_help[:200]


def test_only_the_loadtower_import_name_exists(venv: Path, elsewhere: Path) -> None:
    python = venv / "bin" / "python"
    for name in ROOMS:
        probe = subprocess.run(
            [str(python), "-c", f"import {name}"],
            cwd=elsewhere,
            env=_env(),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert probe.returncode != 0 and f"No module named '{name}'" in probe.stderr
    site = next((venv / "lib").glob("python3*/site-packages"))
    for room in ROOMS:
        found = _run(
            [python, "-c", f"import loadtower.{room} as m; print(m.__file__)"], cwd=elsewhere
        ).strip()
        assert Path(found) == site / "loadtower" / room / "__init__.py"


def test_every_command_has_help() -> None:
    for command in COMMANDS:
        result = subprocess.run(
            [sys.executable, "-m", "loadtower", command, "--help"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode == 0, result.stderr
        assert "usage: loadtower" in result.stdout
