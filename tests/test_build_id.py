"""The build id identifies the installed source; agent version lines parse."""

from __future__ import annotations

import subprocess
import sys

from loadtower.build import build_id, version_line
from loadtower.scenarios.orchestrator.agent_version import _shell_path, parse_version


def test_version_line_is_what_the_cli_prints() -> None:
    done = subprocess.run([sys.executable, "-m", "loadtower", "--version"], capture_output=True,
                          text=True, timeout=120, cwd="/")
    assert done.stdout.strip() == version_line()
    assert len(build_id()) == 12 and int(build_id(), 16) >= 0


def test_parse_version_takes_the_last_version_line() -> None:
    noise = "some warning\nloadtower 0.1.0 (build abc)\n"
    assert parse_version(noise) == "loadtower 0.1.0 (build abc)"
    assert parse_version("bash: python9: command not found\n") is None


def test_shell_path_keeps_home_expandable_and_quotes_the_rest() -> None:
    assert _shell_path("~") == '"$HOME"'
    assert _shell_path("~/my dir") == "\"$HOME\"'/my dir'"
    assert _shell_path("/opt/x y") == "'/opt/x y'"
