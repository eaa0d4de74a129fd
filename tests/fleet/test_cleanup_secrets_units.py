"""`loadtower cleanup` removes the private directories of dead runs, leaves a live run's
and refuses a base directory that is not the user's own (the real script, run by sh)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from loadtower.agents import secret_dir
from loadtower.fleet.cleanup_secrets import describe, sweep_script
from loadtower.protocol.link_secrets import LINK_KEY_FILE


def _sweep(prefix: str, run_id: str | None = None, dry: bool = False) -> str:
    done = subprocess.run(["sh", "-c", sweep_script(run_id, dry, prefix)], capture_output=True,
                          text=True, timeout=60, check=True)
    return done.stdout


def test_dead_runs_go_a_live_run_stays(tmp_path: Path) -> None:
    prefix = str(tmp_path / "private-")
    dead = secret_dir.put("dead-run", {LINK_KEY_FILE: "00"}, prefix)
    live = secret_dir.put("live-run-x", {LINK_KEY_FILE: "00"}, prefix)
    secret_dir.put("live-run", {LINK_KEY_FILE: "00"}, prefix)  # a prefix of the live id
    proc = subprocess.Popen(["sleep", "60"], env={**os.environ, "LOADTOWER_RUN": "live-run-x"})
    try:
        assert set(_sweep(prefix, dry=True).splitlines()) == {
            "WOULD dead-run", "WOULD live-run", "LIVE live-run-x"}
        assert dead.exists()
        out = _sweep(prefix)
    finally:
        proc.kill()
        proc.wait()
    assert set(out.splitlines()) == {"REMOVED dead-run", "REMOVED live-run", "LIVE live-run-x"}
    assert not dead.exists() and live.exists()
    lines, ok = describe("agent1", out)
    assert ok and "agent1: the private directory of run dead-run: removed" in lines
    assert _sweep(prefix, run_id="live-run-x") == "REMOVED live-run-x\n"  # its process ended


def test_nothing_there_is_nothing_to_say(tmp_path: Path) -> None:
    assert _sweep(str(tmp_path / "none-")) == ""


def test_a_symlinked_base_is_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "some-run").mkdir(parents=True)
    (tmp_path / f"private-{os.getuid()}").symlink_to(elsewhere)
    out = _sweep(str(tmp_path / "private-"))
    assert out.startswith("REFUSED ")
    assert (elsewhere / "some-run").exists()
    assert describe("h", out)[1] is False
