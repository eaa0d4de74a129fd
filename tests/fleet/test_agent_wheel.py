"""The `loadtower-agent` wheel: only the agent install set, a valid wheel (RECORD hashes,
METADATA from loadtower.install_sets), reproducible, and once installed it reports the
orchestrator's agent build id.

Offline: the install into a fresh venv uses --no-deps --no-index (the dependencies are
the integration test's: tests/agents/test_agent_install_set_integration.py).
"""

from __future__ import annotations

import base64
import csv
import hashlib
import importlib.metadata
import io
import os
import subprocess
import sys
import sysconfig
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

from loadtower.build import agent_files, agent_version_line
from loadtower.fleet.agent_wheel import build_agent_wheel, wheel_name
from loadtower.install_sets import AGENT_EXTRAS, AGENT_REQUIRES, FULL_REQUIRES, NOT_ON_AGENTS

ORCHESTRATOR_ROOMS = ("store", "tui", "scenarios", "orchestrator", "sandbox")
OFFLINE = {"PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PYTHONNOUSERSITE": "1"}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_agent_wheel(tmp_path_factory.mktemp("agent-wheel"))


def _dist_info(names: list[str]) -> str:
    found = {n.split("/")[0] for n in names if n.split("/")[0].endswith(".dist-info")}
    assert len(found) == 1, found
    return found.pop()


def _metadata(archive: zipfile.ZipFile) -> list[tuple[str, str]]:
    text = archive.read(f"{_dist_info(archive.namelist())}/METADATA").decode()
    return list(Parser().parsestr(text).items())


def test_wheel_holds_the_agent_files_and_nothing_of_the_orchestrator(wheel: Path) -> None:
    assert wheel.name == wheel_name() and wheel.name.startswith("loadtower_agent-")
    names = zipfile.ZipFile(wheel).namelist()
    dist_info = _dist_info(names)
    package_files = sorted(n for n in names if not n.startswith(dist_info))
    assert package_files == sorted(rel for rel, _path in agent_files())
    assert "loadtower/agents/__init__.py" in names and "loadtower/cli.py" in names
    for room in ORCHESTRATOR_ROOMS:
        assert not any(n.startswith(f"loadtower/{room}/") for n in names), room
    assert not any("__pycache__" in n or n.endswith(".pyc") for n in names)


def test_record_lists_every_file_with_its_hash_and_size(wheel: Path) -> None:
    archive = zipfile.ZipFile(wheel)
    record_name = f"{_dist_info(archive.namelist())}/RECORD"
    rows = list(csv.reader(io.StringIO(archive.read(record_name).decode())))
    assert sorted(r[0] for r in rows) == sorted(archive.namelist())
    for name, digest, size in rows:
        if name == record_name:
            assert digest == size == ""
            continue
        data = archive.read(name)
        expected = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        assert digest == f"sha256={expected}", name
        assert int(size) == len(data), name


def test_metadata_requires_exactly_the_agent_set(wheel: Path) -> None:
    archive = zipfile.ZipFile(wheel)
    fields = _metadata(archive)
    assert ("Name", "loadtower-agent") in fields
    requires = [v for k, v in fields if k == "Requires-Dist"]
    plain = [r for r in requires if ";" not in r]
    assert plain == list(AGENT_REQUIRES)
    for extra, reqs in AGENT_EXTRAS.items():
        assert ("Provides-Extra", extra) in fields
        assert [f'{r}; extra == "{extra}"' for r in reqs] == [
            r for r in requires if r.endswith(f'; extra == "{extra}"')]
    assert len([r for r in requires if ";" in r]) == sum(map(len, AGENT_EXTRAS.values()))
    names = {r.split(">")[0].split("=")[0].split("<")[0].strip().lower() for r in requires}
    assert not names & {*NOT_ON_AGENTS, "pydantic", "prometheus-api-client"}
    entry_points = archive.read(f"{_dist_info(archive.namelist())}/entry_points.txt").decode()
    assert "loadtower = loadtower.cli:main" in entry_points


def test_the_full_install_requires_the_agent_set_plus_the_orchestrators() -> None:
    """setup.py reads its dependencies from loadtower/install_sets.py (one place)."""
    site = sysconfig.get_paths()["purelib"]  # not a stale egg-info in the source tree
    dist = next(d for d in importlib.metadata.distributions(path=[site])
                if d.metadata["Name"] == "loadtower")
    plain = [r for r in dist.requires or [] if ";" not in r]
    assert plain == list(FULL_REQUIRES)
    assert set(AGENT_REQUIRES) <= set(plain)


def test_same_files_give_the_same_wheel(wheel: Path, tmp_path: Path) -> None:
    again = build_agent_wheel(tmp_path)
    assert again.read_bytes() == wheel.read_bytes()
    assert not list(tmp_path.glob("*.part"))


def test_installed_wheel_reports_the_orchestrators_agent_build(wheel: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")} | OFFLINE
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   timeout=180, env=env)  # fmt: skip
    # this interpreter's pip installs into the new venv: no pip bootstrap needed there
    site = next((venv / "lib").glob("python3*")) / "site-packages"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                    "--target", str(site), str(wheel)],
                   check=True, timeout=300, env=env, capture_output=True)  # fmt: skip
    probe = subprocess.run(
        [str(venv / "bin" / "python"), "-c",
         "from loadtower.build import agent_version_line; print(agent_version_line())\n"
         "import importlib.util as u\n"
         "print(*[r for r in ('store', 'tui', 'scenarios', 'orchestrator', 'sandbox')"
         " if u.find_spec('loadtower.' + r)])"],
        capture_output=True, text=True, timeout=60, cwd=tmp_path, env=env,
    )  # fmt: skip
    assert probe.returncode == 0, probe.stderr
    version, rooms = (probe.stdout.splitlines() + ["", ""])[:2]
    assert version == agent_version_line()
    assert rooms == ""
