"""The build id identifies the installed source; agent version lines parse."""

from __future__ import annotations

import subprocess
import sys

from loadtower import __version__
from loadtower.build import agent_build_id, agent_files, agent_version_line, build_id, version_line
from loadtower.fleet.agent_version import _shell_path, parse_version


def test_version_line_is_what_the_cli_prints() -> None:
    done = subprocess.run([sys.executable, "-m", "loadtower", "--version"], capture_output=True,
                          text=True, timeout=120, cwd="/")
    assert done.stdout.strip() == version_line()
    assert len(build_id()) == 12 and int(build_id(), 16) >= 0


def test_parse_version_takes_the_last_agent_version_line() -> None:
    noise = "some warning\nloadtower-agent 0.1.0 (build abc)\n"
    assert parse_version(noise) == "loadtower-agent 0.1.0 (build abc)"
    assert parse_version("bash: python9: command not found\n") is None
    # the orchestrator's full version line is not an agent's
    assert parse_version("loadtower 0.1.0 (build abc)\n") is None


def test_agent_build_id_covers_only_the_agent_files() -> None:
    files = [rel for rel, _path in agent_files()]
    assert "loadtower/agents/__init__.py" in files and "loadtower/build.py" in files
    assert not any(rel.startswith(("loadtower/store/", "loadtower/tui/", "loadtower/scenarios/",
                                   "loadtower/sandbox/")) for rel in files)
    assert "loadtower/defaults.py" not in files and "loadtower/install_sets.py" not in files
    assert agent_version_line() == f"loadtower-agent {__version__} (build {agent_build_id()})"
    assert agent_build_id() != build_id()


def test_shell_path_keeps_home_expandable_and_quotes_the_rest() -> None:
    assert _shell_path("~") == '"$HOME"'
    assert _shell_path("~/my dir") == "\"$HOME\"'/my dir'"
    assert _shell_path("/opt/x y") == "'/opt/x y'"
