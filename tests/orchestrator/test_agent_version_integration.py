"""Agent hosts must run the orchestrator's exact agent code (`loadtower agent --version`):
checked, or bootstrapped from the loadtower-agent wheel."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from loadtower.build import agent_build_id, agent_version_line
from loadtower.store import StoreReader
from tests.orchestrator.agent_inventory import agent_inventory
from tests.orchestrator.run_helpers import only_run, run_scenario

pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]

# An interpreter without loadtower: the base Python under the test venv.
BARE_PYTHON = getattr(sys, "_base_executable", None) or "/usr/bin/python3"
# Debian's own Python: no loadtower, and a bootstrap venv of it starts without pip
DEBIAN_PYTHON = "/usr/bin/python3"
DEAD_INDEX = "http://127.0.0.1:9/simple/"  # the discard port: nothing answers


def test_bare_python_has_no_loadtower() -> None:
    probe = subprocess.run([BARE_PYTHON, "-c", "import loadtower"], capture_output=True,
                           timeout=60, cwd="/")
    assert probe.returncode != 0, f"{BARE_PYTHON} already has loadtower; pick another"


def test_agent_without_loadtower_fails_the_run_naming_the_host(
    sandbox: dict, tmp_path: Path
) -> None:
    store = tmp_path / "runs.duckdb"
    done = run_scenario("quickstart", agent_inventory(sandbox, tmp_path, BARE_PYTHON), store,
                        "phases[1].duration=3s", timeout=300)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert "agent host agent1" in done.stderr and "--bootstrap-agents" in done.stderr
    assert agent_version_line() in done.stderr
    run = only_run(store)
    assert run["status"] == "failed" and "agent host agent1" in run["reason"]


def test_bootstrap_installs_with_no_index_from_a_copied_wheelhouse(
    sandbox: dict, tmp_path: Path
) -> None:
    """Debian's /usr/bin/python3 (no loadtower) bootstraps from the agent wheel and a
    wheelhouse copied over SFTP: pip runs from its wheel with no index. The venv's own
    pip.conf (read by any pip that runs in it) points every index at a closed port, so an
    install that touched an index would fail."""
    assert subprocess.run([DEBIAN_PYTHON, "-c", "import loadtower"], capture_output=True,
                          timeout=60, cwd="/").returncode != 0
    boot = tmp_path / "boot"
    venv = boot / f"venv-{agent_build_id()}"
    venv.mkdir(parents=True)
    (venv / "pip.conf").write_text(f"[global]\nindex-url = {DEAD_INDEX}\n"
                                   f"extra-index-url = {DEAD_INDEX}\nretries = 0\ntimeout = 2\n")
    inventory = agent_inventory(sandbox, tmp_path, DEBIAN_PYTHON,
                                f'\nbootstrap = true\nbootstrap_dir = "{boot}"')
    store = tmp_path / "runs.duckdb"
    done = run_scenario("quickstart", inventory, store, "dataset.records=500",
                        "phases[1].duration=4s", timeout=800)
    assert done.returncode == 0, done.stdout + done.stderr
    run = only_run(store)
    venv_python = venv / "bin" / "python"
    probe = subprocess.run([str(venv_python), "-m", "loadtower", "agent", "--version"],
                           capture_output=True, text=True, timeout=120, cwd="/")
    assert probe.stdout.strip() == agent_version_line()
    # the venv was made without pip: pip ran from the copied wheel
    assert not (venv / "bin" / "pip").exists()
    # the index the venv's pip.conf names really is dead: pip with an index fails there
    tried = subprocess.run([str(venv_python), str(next((boot / "wheelhouse").glob("pip-*.whl"))
                                                   / "pip"), "download", "--no-deps", "-d",
                            str(tmp_path / "dl"), "six"], capture_output=True, text=True,
                           timeout=120, cwd="/")
    assert tried.returncode != 0 and "127.0.0.1" in tried.stdout + tried.stderr
    # the agent install set only: the orchestrator's rooms and libraries are not there
    rooms = subprocess.run(
        [str(venv_python), "-c", "import importlib.util as u\n"
         "print(*[m for m in ('loadtower.store', 'loadtower.tui', 'pyarrow', 'textual')"
         " if u.find_spec(m)])"], capture_output=True, text=True, timeout=120, cwd="/")
    assert rooms.returncode == 0 and rooms.stdout.strip() == "", rooms.stdout + rooms.stderr
    reader = StoreReader(store)
    events = [e["message"] for e in reader.events(run["id"])]
    print(*(m for m in events if "agent host agent1" in m), sep="\n")  # the figures, with -s
    assert any("bootstrapped" in m and str(boot) in m for m in events), events
    assert any("installed with no index" in m for m in events), events
    copied = [m for m in events if " copied " in m]
    assert copied and "MB" in copied[0], events
    assert sum(r["ops"] for r in reader.op_seconds(run["id"], "ycsb-a")) > 0
