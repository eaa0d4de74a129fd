"""The agent install set: only loadtower/{__init__,__main__,errors,build,cli}.py, agents
and protocol. `loadtower --help`, `loadtower agent worker --help` and `loadtower agent
--version` work there and offer only what is installed. Run with `python -S` so that
neither the editable install nor site-packages can supply a missing room."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ROOT_FILES = ("__init__.py", "__main__.py", "errors.py", "build.py", "cli.py")
TIMEOUT_S = 60


def agent_set(dest: Path) -> Path:
    package = dest / "loadtower"
    package.mkdir()
    for name in ROOT_FILES:
        shutil.copy(ROOT / "loadtower" / name, package / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.so")
    for room in ("agents", "protocol"):
        shutil.copytree(ROOT / room, package / room, ignore=ignore)
    return dest


def loadtower(where: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-S", "-m", "loadtower", *args], cwd=where,
                          env={"PYTHONPATH": str(where), "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=TIMEOUT_S, check=False)


def test_help_lists_only_the_agent(tmp_path: Path) -> None:
    where = agent_set(tmp_path)
    top = loadtower(where, "--help")
    assert top.returncode == 0, top.stderr
    assert "agent install set" in top.stdout
    listed = {line.split()[0] for line in top.stdout.split("COMMAND\n", 2)[-1].splitlines()
              if line.startswith("    ") and not line.startswith("     ")}
    assert listed == {"agent"}

    agent = loadtower(where, "agent", "--help")
    assert agent.returncode == 0, agent.stderr
    assert "agent install set" in agent.stdout
    actions = agent.stdout.split("positional arguments:", 1)[1].split("options:", 1)[0]
    assert {line.split()[0] for line in actions.splitlines()[2:] if line.strip()} == {"worker"}
    assert "master" not in agent.stdout.replace("--master", "")

    worker = loadtower(where, "agent", "worker", "--help")
    assert worker.returncode == 0, worker.stderr
    assert "--master MASTER" in worker.stdout


def test_agent_version_is_the_agent_build(tmp_path: Path) -> None:
    from loadtower import __version__

    where = agent_set(tmp_path)
    result = loadtower(where, "agent", "--version")
    assert result.returncode == 0, result.stderr
    assert re.fullmatch(rf"loadtower-agent {re.escape(__version__)} \(build [0-9a-f]{{12}}\)\n",
                        result.stdout)


def test_full_install_offers_every_command() -> None:
    from loadtower.cli import COMMANDS, build_parser

    text = build_parser().format_help()
    assert "agent install set" not in text
    assert all(name in text for name in COMMANDS)
