"""Shared fixtures. `numba_kernels` (autouse): the store's numba loops
compiled once, before the first test, so no test's own wait pays for the compiler.
`sandbox`: one real sandbox for the whole test session.

The session brings it up and down through the real CLI, as a user would:
`loadtower sandbox up --dir DIR --json` (its JSON is the fixture's value) and
`loadtower sandbox down --dir DIR` at the end, then checks that nothing is left:
no process the sandbox recorded, no descendant of those (e.g. sshd's session
processes), and no process whose command line or working directory names DIR.

Set LOADTOWER_TEST_SANDBOX=DIR to reuse a sandbox you brought up yourself
(`loadtower sandbox up --dir DIR`); its `loadtower sandbox status --dir DIR --json`
is then the fixture's value, and it is left running.

`mongodb`: that sandbox's MongoDB host (FerretDB, `info()["mongodb"]`). The sandbox runs
it when FerretDB is built (`loadtower sandbox fetch` with Go on PATH); without it the
tests that need it skip with the reason, except under LOADTOWER_REQUIRE_MONGODB=1 (CI:
.ci/run sets it), where the sandbox is brought up with `--mongodb` and a missing
FerretDB fails the session instead of skipping tests silently.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

UP_TIMEOUT_S = 480  # the CLI waits up to 240 s per service itself
REQUIRE_MONGODB = os.environ.get("LOADTOWER_REQUIRE_MONGODB") == "1"
DOWN_TIMEOUT_S = 180


@pytest.fixture(scope="session", autouse=True)
def numba_kernels() -> list[str]:
    """The kernel modules warmed in this process (and in numba's on-disk cache, which the
    worker processes tests start load from) before any test runs."""
    from loadtower.numba_warm import warm_all

    return warm_all()


def live_pids(info: dict) -> list[int]:
    from loadtower.sandbox import state as st
    from loadtower.sandbox.processes import is_alive

    state = st.load(Path(info["dir"]))
    if state is None:
        return []
    records = [n.process for n in state.nodes.values()] + list(state.services.values())
    return [r.pid for r in records if r is not None and is_alive(r)]


def loadtower_command() -> list[str]:
    """The installed `loadtower` console script (next to this interpreter, else on PATH)."""
    script = Path(sys.executable).with_name("loadtower")
    found = str(script) if script.is_file() else shutil.which("loadtower")
    if found is None:
        pytest.fail("no `loadtower` console script next to this Python or on PATH (make install)")
    return [found]


def run_cli(args: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*loadtower_command(), *args], capture_output=True, text=True, timeout=timeout
    )


def parse_info(proc: subprocess.CompletedProcess[str]) -> dict:
    command = " ".join(proc.args[1:]) if isinstance(proc.args, list) else str(proc.args)
    try:
        info = json.loads(proc.stdout)
    except ValueError:
        pytest.fail(
            f"`loadtower {command}` exited {proc.returncode} without one JSON object: "
            f"{(proc.stderr or proc.stdout)[-2000:]}"
        )
    if proc.returncode != 0 or not info.get("up"):
        pytest.fail(
            f"`loadtower {command}` exited {proc.returncode}, sandbox not up: {proc.stderr[-2000:]}"
        )
    return info


def sandbox_down(directory: Path, what: str = "the sandbox") -> None:
    """`loadtower sandbox down --dir DIR` for a sandbox a test brought up; fails the test
    if it failed or left processes running (the sandbox's recorded processes and their
    children are listed before `down`)."""
    from tests.leftovers import Leftovers

    leftovers = Leftovers(directory)
    down = run_cli(["sandbox", "down", "--dir", str(directory)], timeout=DOWN_TIMEOUT_S)
    left = leftovers.still_running()
    assert down.returncode == 0, f"`loadtower sandbox down` failed: {down.stderr[-2000:]}"
    assert left == [], f"{what} left processes running: {left}"


@pytest.fixture(scope="session")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    reuse = os.environ.get("LOADTOWER_TEST_SANDBOX")
    if reuse:
        status = run_cli(["sandbox", "status", "--dir", reuse, "--json"], timeout=60)
        if status.returncode != 0:
            pytest.fail(f"LOADTOWER_TEST_SANDBOX={reuse} is not up (`loadtower sandbox status`)")
        yield parse_info(status)
        return
    directory = tmp_path_factory.mktemp("sandbox").resolve()
    up = ["sandbox", "up", "--dir", str(directory), "--cassandra-nodes", "1", "--standby", "1"]
    if REQUIRE_MONGODB:
        up.append("--mongodb")  # FerretDB not built: `up` fails with the reason
    try:
        yield parse_info(run_cli([*up, "--timeout", "240", "--json"], timeout=UP_TIMEOUT_S))
    finally:
        sandbox_down(directory)


@pytest.fixture(scope="session")
def mongodb(sandbox: dict) -> dict:
    """The sandbox's MongoDB host (FerretDB): url, port, username, password, ... ."""
    info = sandbox.get("mongodb") or {}
    if not info.get("enabled"):
        reason = info.get("reason") or "the sandbox runs no MongoDB host"
        if REQUIRE_MONGODB:
            pytest.fail(f"LOADTOWER_REQUIRE_MONGODB=1 but {reason}")
        pytest.skip(reason)
    return info
