"""`loadtower tui` in a real terminal (tmux), driven by keys as a person would:
open it, open a run, go to the SQL console and run a query, quit cleanly."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.tui.fixture_store import RUN_A, RUN_B, RUN_FAILED, build_fixture_store

pytestmark = pytest.mark.timeout(180)

WIDTH, HEIGHT = 120, 36


class Tmux:
    def __init__(self, socket: str) -> None:
        self.socket, self.session = socket, "lt"

    def __call__(self, *args: str) -> str:
        done = subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True,
                              timeout=30)
        if done.returncode != 0:
            raise AssertionError(f"tmux {' '.join(args)} failed: {done.stderr.strip()}")
        return done.stdout

    def keys(self, *keys: str) -> None:
        self("send-keys", "-t", self.session, *keys)

    def screen(self) -> str:
        return self("capture-pane", "-p", "-t", self.session)

    def pane(self, field: str) -> str:
        return self("display-message", "-p", "-t", self.session, f"#{{{field}}}").strip()

    def wait_for(self, text: str, timeout: float = 45.0) -> str:
        deadline = time.monotonic() + timeout
        while True:
            shown = self.screen()
            if text in shown:
                return shown
            if time.monotonic() > deadline:
                raise AssertionError(f"'{text}' never appeared on screen; it shows:\n{shown}")
            time.sleep(0.3)

    def wait_gone(self, text: str, timeout: float = 45.0) -> str:
        deadline = time.monotonic() + timeout
        while True:
            shown = self.screen()
            if text not in shown:
                return shown
            if time.monotonic() > deadline:
                raise AssertionError(f"'{text}' stayed on screen; it shows:\n{shown}")
            time.sleep(0.3)


@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[Tmux]:
    if shutil.which("tmux") is None:
        pytest.fail("tmux is not installed (scripts/install.sh installs it)")
    t = Tmux(f"loadtower-test-{uuid.uuid4().hex[:8]}")
    try:
        yield t
    finally:
        subprocess.run(["tmux", "-L", t.socket, "kill-server"], capture_output=True, timeout=30)


def test_tui_opens_navigates_to_a_run_and_the_sql_console_and_quits(
    tmux: Tmux, tmp_path: Path
) -> None:
    store = build_fixture_store(tmp_path / "fixture.duckdb")
    exit_file = tmp_path / "exit"
    # the exit status through a shell: tmux may reap a dead pane's process late
    command = f"sh -c '{sys.executable} -m loadtower tui --store {store}; echo $? > {exit_file}'"
    tmux("new-session", "-d", "-s", tmux.session, "-x", str(WIDTH), "-y", str(HEIGHT),
         "-e", "TERM=xterm-256color", "-e", "COLUMNS=", "-e", "LINES=", command)
    tmux("set-option", "-t", tmux.session, "remain-on-exit", "on")

    runs = tmux.wait_for("2026-09-21 14:13")  # RUN_A's start; the list shows all three
    assert "2026-09-21 15:13" in runs and "failed" in runs and "peak ops/s" in runs

    tmux.keys("?")  # the keys of the runs screen
    keys = tmux.wait_for("this screen")
    assert "Open" in keys and "Delete" in keys and "everywhere" in keys
    tmux.keys("Escape")
    tmux.wait_gone("this screen")

    tmux.keys("Down", "Enter")  # the second run in the list
    dashboard = tmux.wait_for("REPLAY")
    assert "throughput" in dashboard and "latency" in dashboard and "timeline" in dashboard
    # the header comes first; the panels fill in after it, the events naming the run
    deadline = time.monotonic() + 45
    while not any(run in dashboard for run in (RUN_A, RUN_B, RUN_FAILED)):
        assert time.monotonic() < deadline, f"no run's id came on screen:\n{dashboard}"
        time.sleep(0.3)
        dashboard = tmux.screen()

    tmux.keys("Escape")
    tmux.wait_for("peak ops/s")
    tmux.keys("2")
    tmux.wait_for("op_seconds")  # the schema tree lists the store's views
    tmux.keys("-l", "SELECT 42 AS answer")
    tmux.wait_for("SELECT 42 AS answer")
    tmux.keys("F5")
    result = tmux.wait_for("1 rows")
    assert "answer" in result and "42" in result

    tmux.keys("Escape")
    tmux.wait_for("peak ops/s")
    tmux.keys("2")  # the console again: the last query is still there
    tmux.wait_for("SELECT 42 AS answer")
    tmux.keys("Escape")
    tmux.wait_for("peak ops/s")
    tmux.keys("q")
    deadline = time.monotonic() + 30
    while not exit_file.exists() or not exit_file.read_text().strip():
        assert time.monotonic() < deadline, "loadtower tui did not exit after q:\n" + tmux.screen()
        time.sleep(0.3)
    shown = tmux.screen()
    assert exit_file.read_text().strip() == "0" and "Traceback" not in shown, shown

