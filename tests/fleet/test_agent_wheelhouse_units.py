"""The wheelhouse for an agent host's Python: what the probe reports, the pip tags it
turns into, where it is cached, and the no-index install command the host runs."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from loadtower.build import agent_build_id
from loadtower.errors import LoadtowerError
from loadtower.fleet.agent_version import install_command
from loadtower.fleet.agent_wheelhouse import (
    PythonTarget,
    build_wheelhouse,
    parse_probe,
    probe_command,
    requirements,
    wheelhouse_dir,
)
from loadtower.install_sets import AGENT_REQUIRES, ENGINE_DRIVERS

DEBIAN = PythonTarget("cpython", (3, 11), "x86_64", "Linux", "glibc", "2.36")


def test_the_probe_runs_on_a_bare_python_and_parses() -> None:
    done = subprocess.run(["sh", "-c", probe_command(sys.executable)], capture_output=True,
                          text=True, timeout=60)
    target = parse_probe("some banner\n" + done.stdout)
    assert target is not None
    assert target.version == tuple(sys.version_info[:2])
    assert target.implementation == sys.implementation.name
    assert target.is_this_interpreter()


@pytest.mark.parametrize("output", ["", "python3: not found", "LT-PYTHON {bad json",
                                    'LT-PYTHON {"implementation": "cpython"}'])
def test_no_target_from_a_failed_probe(output: str) -> None:
    assert parse_probe(output) is None


def test_glibc_platforms_go_down_to_the_oldest_manylinux() -> None:
    platforms = DEBIAN.platforms()
    assert platforms[0] == "manylinux_2_36_x86_64"
    assert "manylinux_2_17_x86_64" in platforms and "manylinux2014_x86_64" in platforms
    assert "manylinux1_x86_64" in platforms and "manylinux_2_37_x86_64" not in platforms
    flags = DEBIAN.pip_flags()
    assert flags[:1] == ["--only-binary=:all:"]
    assert flags[flags.index("--python-version") + 1] == "3.11"
    assert flags[flags.index("--abi") + 1] == "cp311"
    assert DEBIAN.tag() == "cp311-x86_64-glibc2.36"


def test_musl_and_aarch64_get_their_own_tags() -> None:
    musl = PythonTarget("cpython", (3, 12), "aarch64", "Linux", "", "")
    assert musl.platforms() == ["musllinux_1_2_aarch64", "musllinux_1_1_aarch64"]
    assert musl.tag() == "cp312-aarch64-nolibc"


def test_unsupported_targets_are_one_line() -> None:
    with pytest.raises(LoadtowerError, match="Linux only"):
        PythonTarget("cpython", (3, 11), "arm64", "Darwin", "", "").platforms()
    with pytest.raises(LoadtowerError, match=r"Python 3\.9 is too old"):
        build_wheelhouse(PythonTarget("cpython", (3, 9), "x86_64", "Linux", "glibc", "2.36"),
                         fast=False)


def test_the_cache_is_per_agent_build_target_and_requirements(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    plain, fast = wheelhouse_dir(DEBIAN, False), wheelhouse_dir(DEBIAN, True)
    assert plain.parent == tmp_path / "loadtower" / "wheelhouse" / agent_build_id()
    assert plain.name.startswith("cp311-x86_64-glibc2.36-") and plain != fast
    assert requirements(False)[0] == "pip"
    assert [*AGENT_REQUIRES, *ENGINE_DRIVERS] == requirements(False)[1:]  # every engine's


def test_install_command_never_names_an_index_and_quotes_paths() -> None:
    command = install_command("/usr/bin/python3", "/h/my boot", "/h/my boot/venv-x",
                              "/h/my boot/wheelhouse", "pip-26.0-py3-none-any.whl",
                              "loadtower_agent-0.1.0+x-py3-none-any.whl[fast]")
    words = shlex.split(command)
    assert words[:2] == ["/usr/bin/python3", "-c"] and words[3] == "/h/my boot/.install.lock"
    inner = words[words.index("sh") + 2]
    assert "-m venv --without-pip '/h/my boot/venv-x'" in inner
    assert "'/h/my boot/wheelhouse/pip-26.0-py3-none-any.whl/pip' install --no-index" in inner
    assert "--find-links '/h/my boot/wheelhouse'" in inner
    assert "index-url" not in command


def test_install_command_runs_under_the_lock(tmp_path: Path) -> None:
    """The lock wrapper runs the inner command and passes its exit status on."""
    command = install_command(sys.executable, str(tmp_path), str(tmp_path / "venv"),
                              str(tmp_path / "house"), "pip.whl", "agent.whl")
    # the venv step runs for real (a venv without pip, fast); pip from a missing wheel fails
    done = subprocess.run(["sh", "-c", command], capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert (tmp_path / "venv" / "bin" / "python").exists()
    assert not (tmp_path / "venv" / "bin" / "pip").exists()
    assert (tmp_path / ".install.lock").exists()
