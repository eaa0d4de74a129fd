"""The session sandbox's "nothing left running" check (tests/leftovers.py) sees a
process by its working directory, by a path in its command line, and as a child of
a recorded process, including one in a session of its own (as sshd's are)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import psutil

from loadtower.sandbox import processes as procs
from loadtower.sandbox import state as st
from tests.leftovers import Leftovers, mentioning

SLEEP = "import time; time.sleep(120)"


def _pids(found: list[psutil.Process]) -> set[int]:
    return {p.pid for p in found}


def test_finds_processes_by_cwd_and_command_line(tmp_path: Path) -> None:
    box = tmp_path / "box"
    box.mkdir()
    (tmp_path / "box1").mkdir()
    by_cwd = subprocess.Popen([sys.executable, "-c", SLEEP], cwd=box)
    by_arg = subprocess.Popen([sys.executable, "-c", SLEEP, f"--config={box}/x.yaml"])
    other = subprocess.Popen([sys.executable, "-c", SLEEP, str(tmp_path / "box1")])
    try:
        found = _pids(mentioning(box))
        assert by_cwd.pid in found and by_arg.pid in found
        assert other.pid not in found  # box1 is not inside box
    finally:
        for proc in (by_cwd, by_arg, other):
            proc.kill()
            proc.wait(timeout=10)
    assert not _pids(mentioning(box)) & {by_cwd.pid, by_arg.pid}


def test_child_in_its_own_session_outliving_its_recorded_parent_is_reported(
    tmp_path: Path,
) -> None:
    # the recorded "service" starts a child in a new session, then waits (like sshd)
    script = (
        "import subprocess, sys, time\n"
        f"c = subprocess.Popen([sys.executable, '-c', {SLEEP!r}], start_new_session=True)\n"
        "print(c.pid, flush=True)\n"
        "time.sleep(120)\n"
    )
    log = tmp_path / "service.log"
    parent = procs.spawn([sys.executable, "-c", script], log)
    child_pid = None
    try:
        assert procs.wait_until(lambda: log.read_text().strip() != "", 30)
        child_pid = int(log.read_text().split()[0])
        st.save(tmp_path, st.SandboxState(services={"sshd": parent}))
        leftovers = Leftovers(tmp_path)
        assert child_pid in leftovers.known
        procs.stop(parent, timeout=10)  # what `down` does: the child is in another group
        left = leftovers.still_running(wait=0)
        assert len(left) == 1 and left[0].startswith(f"pid {child_pid}:")
    finally:
        procs.stop(parent, timeout=10)
        if child_pid is not None:
            try:
                os.kill(child_pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    assert Leftovers(tmp_path).still_running(wait=10) == []
