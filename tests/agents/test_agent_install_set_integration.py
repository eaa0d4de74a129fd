"""The agent install set on its own: a fresh venv with only the `loadtower-agent` wheel
(and its dependencies from the package index) answers `loadtower agent --version` and
`loadtower agent worker --help`, has none of the orchestrator's libraries, and is the
agent host of a real run against the sandbox (its Locust workers make the load). Prints the installed sizes (site-packages) of the agent set and of the full
set (this interpreter's), and how long the install took (pip's cache helps).

Needs the network to the package index (as CI has) for the wheel's dependencies.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from loadtower.build import agent_version_line
from loadtower.fleet.agent_wheel import build_agent_wheel
from loadtower.install_sets import NOT_ON_AGENTS
from loadtower.store import StoreReader
from tests.orchestrator.agent_inventory import agent_inventory
from tests.orchestrator.run_helpers import only_run, run_scenario

pytestmark = [pytest.mark.integration, pytest.mark.timeout(1200)]

VENV_TIMEOUT_S = 180
PIP_TIMEOUT_S = 900
RUN_TIMEOUT_S = 300
RING = "cassandra"  # the sandbox's ring, which the run below drives: its extra's driver
# the other engines' drivers, by import name: not there without their extras
OTHER_DRIVERS = ("clickhouse_connect", "pymongo", "redis")


def _env(**extra: str) -> dict[str, str]:
    """No PYTHONPATH, no active venv, no user site: the agent venv sees only itself."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    return {**env, "PYTHONNOUSERSITE": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1", **extra}


def _size_mb(directory: Path) -> float:
    total = sum(p.stat().st_size for p in directory.rglob("*") if p.is_file()
                and not p.is_symlink())
    return total / 1e6


def _site_packages(venv: Path) -> Path:
    return next((venv / "lib").glob("python3*")) / "site-packages"


@pytest.fixture(scope="module")
def agent_venv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A fresh venv with only the agent install set (removed at the end)."""
    base = tmp_path_factory.mktemp("agent-set")
    venv = base / "venv"
    try:
        wheel = build_agent_wheel(base)
        started = time.monotonic()
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True,
                       timeout=VENV_TIMEOUT_S, env=_env())  # fmt: skip
        pip = subprocess.run(
            # the run below drives the sandbox's ring: its engine's driver, by its extra
            [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", f"{wheel}[{RING}]"],
            capture_output=True, text=True, timeout=PIP_TIMEOUT_S, env=_env(), cwd=base,
        )  # fmt: skip
        assert pip.returncode == 0, f"pip install {wheel.name}: {pip.stderr[-3000:]}"
        agent_mb = _size_mb(_site_packages(venv))
        full_mb = _size_mb(Path(sysconfig.get_paths()["purelib"]))
        print(f"\nagent install set: venv + pip install in {time.monotonic() - started:.0f} s; "
              f"site-packages {agent_mb:.0f} MB (agent) vs {full_mb:.0f} MB (full, {sys.prefix})")
        yield venv
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _run(venv: Path, *args: str, timeout: float, env: dict[str, str] | None = None,
         cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(venv / "bin" / "python"), *args], capture_output=True, text=True,
                          timeout=timeout, env=env or _env(), cwd=cwd)  # fmt: skip


def test_the_orchestrators_libraries_are_not_there(agent_venv: Path, tmp_path: Path) -> None:
    probe = _run(agent_venv, "-c",
                 "import importlib.util as u, sys\n"
                 "print(*[m for m in sys.argv[1:] if u.find_spec(m) is not None])",
                 *NOT_ON_AGENTS, "loadtower.store", "loadtower.tui", "loadtower.scenarios",
                 "loadtower.orchestrator",
                 timeout=60, cwd=tmp_path)  # fmt: skip
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.strip() == ""
    for name in NOT_ON_AGENTS:
        imported = _run(agent_venv, "-c", f"import {name}", timeout=60, cwd=tmp_path)
        assert imported.returncode != 0 and "ModuleNotFoundError" in imported.stderr, name


def test_an_engine_driver_comes_with_its_extra(agent_venv: Path, tmp_path: Path) -> None:
    """The venv got the wheel with the ring's extra only: its driver is there, the other
    engines' are not, and the agent still answers (the engines' kinds are data)."""
    probe = _run(agent_venv, "-c",
                 "import importlib.util as u, sys\n"
                 "print(*[m for m in sys.argv[1:] if u.find_spec(m) is not None])",
                 "cassandra", *OTHER_DRIVERS, timeout=60, cwd=tmp_path)  # fmt: skip
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.split() == ["cassandra"]


def test_agent_version_and_worker_help(agent_venv: Path, tmp_path: Path) -> None:
    version = _run(agent_venv, "-m", "loadtower", "agent", "--version", timeout=60, cwd=tmp_path)
    assert version.stdout.strip() == agent_version_line(), version.stdout + version.stderr
    script = agent_venv / "bin" / "loadtower"
    helped = subprocess.run([str(script), "agent", "worker", "--help"], capture_output=True,
                            text=True, timeout=60, env=_env(), cwd=tmp_path)  # fmt: skip
    assert helped.returncode == 0, helped.stderr[-3000:]
    assert helped.stdout.startswith("usage: loadtower agent worker")


def test_a_real_run_whose_agent_host_has_only_the_agent_set(
    agent_venv: Path, sandbox: dict, tmp_path: Path
) -> None:
    """The orchestrator (this install) runs a scenario whose agent host's Python is the
    agent venv: the version check passes (same agent build) and its Locust workers,
    started over SSH from the agent set, produce the load."""
    python = agent_venv / "bin" / "python"
    store = tmp_path / "runs.duckdb"
    done = run_scenario("quickstart", agent_inventory(sandbox, tmp_path, str(python)), store,
                        "dataset.records=500", "phases[1].duration=3s", timeout=RUN_TIMEOUT_S)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    run = only_run(store)
    reader = StoreReader(store)
    events = [e["message"] for e in reader.events(run["id"])]
    assert any(f"agent host agent1 runs {agent_version_line()}" in m for m in events), events
    assert sum(r["ops"] for r in reader.op_seconds(run["id"], "ycsb-a")) > 0
