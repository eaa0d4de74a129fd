"""The rooms' import contracts (.importlinter) hold on this tree, and import-linter
would catch a backward import: a copy of the package with `import loadtower.scenarios`
added to an agents module breaks the agents contract."""

from __future__ import annotations

import configparser
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINT = Path(sys.executable).with_name("lint-imports")
ROOMS = ("protocol", "agents", "scenarios", "orchestrator", "fleet", "store", "tui", "sandbox")
# the tui contract is the TUI engineer's (tui -> scenarios.control_api); checked once merged
PENDING = {"tui"}
TIMEOUT_S = 600


def contracts(config: Path) -> list[str]:
    parser = configparser.ConfigParser()
    parser.read(config)
    prefix = "importlinter:contract:"
    return [s[len(prefix):] for s in parser.sections() if s.startswith(prefix)]


def lint(
    cwd: Path, ids: list[str], env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    args = [str(LINT), "--no-cache", "--config", str(cwd / ".importlinter")]
    for contract in ids:
        args += ["--contract", contract]
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=TIMEOUT_S, check=False)


def test_every_room_keeps_its_contract() -> None:
    ids = contracts(ROOT / ".importlinter")
    assert {"protocol", "agents", "store", "scenarios", "orchestrator", "fleet", "sandbox", "tui"} <= set(ids)
    result = lint(ROOT, [c for c in ids if c not in PENDING])
    assert result.returncode == 0, result.stdout[-3000:]
    assert "BROKEN" not in result.stdout


def copy_package(dest: Path) -> Path:
    """loadtower with its rooms as real folders (the repository has symlinks)."""
    package = dest / "loadtower"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.so")
    package.mkdir()
    for path in (ROOT / "loadtower").glob("*.py"):
        shutil.copy(path, package / path.name)
    for room in ROOMS:
        shutil.copytree(ROOT / room, package / room, ignore=ignore)
    shutil.copy(ROOT / ".importlinter", dest / ".importlinter")
    return package


def test_a_backward_import_breaks_the_agents_contract(tmp_path: Path) -> None:
    package = copy_package(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    clean = lint(tmp_path, ["agents"], env)
    assert clean.returncode == 0, clean.stdout[-3000:]  # the copy is the tree, as it is

    spool = package / "agents" / "spool.py"
    spool.write_text(spool.read_text() + "\nimport loadtower.scenarios.models  # backward\n")
    broken = lint(tmp_path, ["agents"], env)
    assert broken.returncode != 0
    assert "loadtower.agents.spool -> loadtower.scenarios.models" in broken.stdout


def test_an_import_of_the_run_breaks_the_fleets_contract(tmp_path: Path) -> None:
    """The fleet is beside the orchestrator: the run uses it, it never uses the run."""
    package = copy_package(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    clean = lint(tmp_path, ["fleet"], env)
    assert clean.returncode == 0, clean.stdout[-3000:]

    pool = package / "fleet" / "ssh_pool.py"
    pool.write_text(pool.read_text() + "\nimport loadtower.orchestrator.sinks  # backward\n")
    broken = lint(tmp_path, ["fleet"], env)
    assert broken.returncode != 0
    assert "loadtower.fleet.ssh_pool -> loadtower.orchestrator.sinks" in broken.stdout
