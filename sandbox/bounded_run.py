"""A command that may hang (a Maven fetch, a Go build), run with a bound on its time.

The command runs in its own process group; after ``timeout``, or on any interruption
(Ctrl-C), the whole group is killed, so no build tool or JVM of it is left behind. The
engine packages' sandbox parts fetch and build what their servers need through it (a
ring engine's jars with Maven, an engine host's server with Go).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from pathlib import Path


def run_bounded(
    cmd: list[str],
    cwd: Path,
    quiet: bool,
    timeout: float,
    env: dict[str, str] | None = None,
) -> tuple[int, str, str]:
    """Run ``cmd`` in its own process group; kill the whole group after ``timeout``
    (subprocess.TimeoutExpired is raised then). Returns (exit code, stdout, stderr); the
    output is captured only when ``quiet``."""
    pipe = subprocess.PIPE if quiet else None
    proc = subprocess.Popen(
        cmd, cwd=cwd, stdout=pipe, stderr=pipe, text=True, start_new_session=True, env=env
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise
    except BaseException:  # e.g. Ctrl-C: leave no build tool behind
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise
    return proc.returncode, out or "", err or ""
