"""`loadtower tui` as a command: no terminal means one line and exit 2; a crash is not 0."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from loadtower.tui.app import LoadtowerApp
from loadtower.tui.command import run_app

pytestmark = pytest.mark.timeout(120)
WAIT_S = 90  # a bound: the command answers at once, this only stops a hang


def test_without_a_terminal_says_so_and_exits_2(store: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "loadtower", "tui", "--store", str(store)],
        stdin=subprocess.DEVNULL, capture_output=True,
        text=True, timeout=WAIT_S,
    )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "not a terminal" in lines[0] and "stdin and stdout" in lines[0]
    assert proc.stdout == ""


class CrashingApp(LoadtowerApp):
    def on_mount(self) -> None:
        raise RuntimeError("boom")


def test_a_crash_is_not_exit_0(store: Path) -> None:
    assert run_app(CrashingApp(store), headless=True) == 1


def test_a_quit_is_exit_0(store: Path) -> None:
    class Quits(LoadtowerApp):
        def on_mount(self) -> None:
            super().on_mount()
            self.call_after_refresh(self.exit)

    assert run_app(Quits(store), headless=True) == 0
