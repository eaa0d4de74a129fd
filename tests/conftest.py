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

In parallel (pytest-xdist: `make test` runs the unit half and the integration half with
`-n 2 --dist loadgroup`; INTEGRATION_WORKERS=0: the integration half in one process),
each worker that needs the sandbox brings up its own, on loopback addresses of its own
(worker_address():
gw0 127.0.0.1, gwN 127.0.{20+N}.1, so no two share a port or a keyspace), and the
tests are dealt out a whole file at a time (a module fixture is made once), the cluster
package and the namespace-host tests together as one (they make the same ltc-* names),
the longest groups first (LONG_GROUPS) so the last worker does not start the longest
file at the end. A test marked `alone` runs with no other test beside it (turn_of: it
pauses, kills, partitions or caps a node, or its figures are timing-bound); the files
that hold one are dealt out first. See docs/testing.md.

`mongodb`: that sandbox's MongoDB host (FerretDB, `info()["mongodb"]`). The sandbox runs
it when FerretDB is built (`loadtower sandbox fetch` with Go on PATH); without it the
tests that need it skip with the reason, except under LOADTOWER_REQUIRE_MONGODB=1 (CI:
.ci/run sets it), where the sandbox is brought up with `--mongodb` and a missing
FerretDB fails the session instead of skipping tests silently.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import timeline
from tests.timeout_tasks import install as show_tasks_on_timeout

UP_TIMEOUT_S = 480  # the CLI waits up to 240 s per service itself
REQUIRE_MONGODB = os.environ.get("LOADTOWER_REQUIRE_MONGODB") == "1"
DOWN_TIMEOUT_S = 180
# Every sandbox a test brings up through the CLI (`sandbox up`, the cluster's too) runs
# its ring's nodes lean: a test's runs are short, and the JIT's slow tier cost about half
# of a node's CPU over them (docs/testing.md, A run's fixed cost). The variable reaches
# every `loadtower` process a test starts; `up --no-lean` still wins.
os.environ.setdefault("LOADTOWER_SANDBOX_LEAN", "1")


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
    """`loadtower ARGS`; a loopback `sandbox up` under one_up_at_a_time()."""
    loopback_up = args[:2] == ["sandbox", "up"] and "--cluster" not in args
    with one_up_at_a_time() if loopback_up else contextlib.nullcontext():
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


# Groups in the order xdist should start them: the ones that take longest first
# (measured: docs/testing.md), every other file after them in collection order.
LONG_GROUPS = (
    "netns",
    "tests/orchestrator/test_dataset_load_integration.py",
    "tests/orchestrator/test_scale_out_integration.py",
    "tests/orchestrator/test_search_integration.py",
    "ring2",
    "tests/sandbox/test_sandbox_integration.py",
    "tests/orchestrator/test_history_thresholds_integration.py",
    "tests/sandbox/test_tls_integration.py",
    # the unit half's longest files
    "tests/store/test_fuzz_hostile_text.py",
    "tests/tui/test_phase_scales.py",
    "tests/tui/test_fuzz_text.py",
    "tests/scenarios/test_check_fuzz.py",
    "tests/tui/test_dashboard_replay.py",
    "tests/store/test_report.py",
    "tests/tui/test_hostile_text.py",
    "tests/tui/test_secrets_on_screen.py",
    "tests/tui/test_tmux_tui.py",
)
NETNS_GROUP = ("tests/cluster/", "tests/sandbox/test_netns_hosts.py")
# the files that use the 2-node sandbox (`ring2`): one worker brings it up once for both
RING2_GROUP = ("tests/agents/test_hung_node_integration.py", "tests/reliability/test_db_fault.py")


def xdist_group_of(nodeid: str) -> str:
    """A test's xdist group: its file; "netns" for the tests that make ltc-* hosts,
    "ring2" for the ones on the 2-node sandbox."""
    path = nodeid.split("::", 1)[0]
    if path.startswith(NETNS_GROUP):
        return "netns"
    return "ring2" if path in RING2_GROUP else path


def pytest_configure(config: pytest.Config) -> None:
    show_tasks_on_timeout()  # a timed-out test's output names the asyncio tasks it waited in


@pytest.hookimpl(tryfirst=True)  # before xdist's worker reads the marks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return  # one process: the files' own order
    for item in items:
        item.add_marker(pytest.mark.xdist_group(xdist_group_of(item.nodeid)))
    # the groups with an `alone` test first: they then take turns with each other, not
    # with a long shared test that one waits for while the other worker sits idle
    alone = {xdist_group_of(i.nodeid) for i in items if i.get_closest_marker("alone")}
    rank = {group: i for i, group in enumerate(LONG_GROUPS)}
    items.sort(key=lambda item: (xdist_group_of(item.nodeid) not in alone,
                                 rank.get(xdist_group_of(item.nodeid), len(rank))))


def worker_address() -> str:
    """The first loopback address of this xdist worker's sandbox (127.0.0.1 outside
    xdist and on gw0; 127.0.{20+N}.1 on gwN: no test's own sandbox uses those)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    index = int(worker[2:]) if worker.startswith("gw") and worker[2:].isdigit() else 0
    return "127.0.0.1" if index == 0 else f"127.0.{20 + index}.1"


@pytest.fixture(scope="session")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    reuse = os.environ.get("LOADTOWER_TEST_SANDBOX")
    if reuse and os.environ.get("PYTEST_XDIST_WORKER", "gw0") != "gw0":
        pytest.fail("LOADTOWER_TEST_SANDBOX is for one process: run without -n")
    if reuse:
        status = run_cli(["sandbox", "status", "--dir", reuse, "--json"], timeout=60)
        if status.returncode != 0:
            pytest.fail(f"LOADTOWER_TEST_SANDBOX={reuse} is not up (`loadtower sandbox status`)")
        yield parse_info(status)
        return
    directory = tmp_path_factory.mktemp("sandbox").resolve()
    up = ["sandbox", "up", "--dir", str(directory), "--cassandra-nodes", "1", "--standby", "1",
          "--first-address", worker_address()]
    if REQUIRE_MONGODB:
        up.append("--mongodb")  # FerretDB not built: `up` fails with the reason
    try:
        yield parse_info(run_cli([*up, "--timeout", "240", "--json"], timeout=UP_TIMEOUT_S))
    finally:
        sandbox_down(directory)


RING2_FIRST = "127.0.5.1"  # no other sandbox of the tests uses 127.0.5.x


@pytest.fixture(scope="session")
def ring2(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    """A 2-node loopback sandbox (127.0.5.1-2: no standby, no ClickHouse or MongoDB),
    brought up once for the tests that pause, kill and restart a node of a ring (the
    hung node's, the paused-then-killed node's: one xdist group, RING2_GROUP), which
    leave both nodes running when they end."""
    directory = tmp_path_factory.mktemp("ring2").resolve()
    up = ["sandbox", "up", "--dir", str(directory), "--first-address", RING2_FIRST,
          "--cassandra-nodes", "2", "--standby", "0", "--no-clickhouse", "--no-mongodb",
          "--heap", "768M", "--timeout", "240", "--json"]
    try:
        yield parse_info(run_cli(up, timeout=UP_TIMEOUT_S))
    finally:
        sandbox_down(directory, "the 2-node sandbox")


_LOCKS: dict[str, Path] = {}


def lock_folder(config: pytest.Config) -> Path:
    """The folder every xdist worker's temporary folders share (.../pytest-N: the
    `tmp_path_factory` fixture's base, whose parent is the run's under xdist), for the
    lock files below (pytest removes it with the rest of its old folders)."""
    base = config._tmp_path_factory.getbasetemp()  # what the tmp_path_factory fixture gives
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session", autouse=True)
def _shared_lock_folder(request: pytest.FixtureRequest) -> None:
    _LOCKS["folder"] = lock_folder(request.config)


TURN_WAIT_S = 1800.0  # a test waits this long at most for a lock (the longest test's bound)


@contextlib.contextmanager
def _flocked(path: Path, mode: int, bound_s: float = TURN_WAIT_S) -> Iterator[None]:
    """`path` locked in `mode` (fcntl.LOCK_EX or LOCK_SH) while the block runs; fails
    the test, naming the lock, if it is not had within `bound_s` (no suite hangs on it)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        deadline = time.monotonic() + bound_s
        while True:
            try:
                fcntl.flock(fd, mode | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    pytest.fail(f"{path.name} not had within {bound_s:.0f} s")
                time.sleep(0.1)
        yield
    finally:
        os.close(fd)  # releases the lock


@contextlib.contextmanager
def one_up_at_a_time() -> Iterator[None]:
    """Held while a loopback sandbox comes up, across xdist workers: `up` picks its free
    ports (Prometheus, node_exporter, ClickHouse, FerretDB, JMX) before its services bind
    them, so two at once could pick the same one. Not taken for the cluster sandbox (its
    up takes minutes; its hosts' ports are in namespaces of their own)."""
    folder = _LOCKS.get("folder")
    if folder is None or not os.environ.get("PYTEST_XDIST_WORKER"):
        yield
        return
    with _flocked(folder / "sandbox-up.lock", fcntl.LOCK_EX):
        yield


@contextlib.contextmanager
def turn(folder: Path, alone: bool) -> Iterator[None]:
    """A test's turn on the machine, across processes sharing `folder`: an `alone` turn
    has no other turn beside it, the others share the machine. A readers-writer lock of
    two lock files that prefers `alone`: it holds the gate while it waits for the shared
    turns running to end, so no new shared turn starts meanwhile."""
    gate, machine = folder / "turn-gate.lock", folder / "turn-machine.lock"
    if alone:
        with _flocked(gate, fcntl.LOCK_EX), _flocked(machine, fcntl.LOCK_EX):
            yield
        return
    with _flocked(gate, fcntl.LOCK_EX):
        pass  # an alone turn waiting holds the gate: wait behind it
    with _flocked(machine, fcntl.LOCK_SH):
        yield


@contextlib.contextmanager
def turn_of(item: pytest.Item) -> Iterator[None]:
    """Under xdist, a test marked `alone` (it pauses, kills, partitions or caps a node,
    or its figures are timing-bound: a busy machine would spoil them, not the product)
    runs with no other test beside it (`turn`); the others share the machine. Held over
    setup, call and teardown, so a module fixture an `alone` test brings up (a sandbox
    of its own) or takes down is inside its turn. Outside xdist: nothing."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        yield
        return
    folder, alone = lock_folder(item.config), item.get_closest_marker("alone") is not None
    asked = time.time()
    with turn(folder, alone):
        got = time.time()
        try:
            yield
        finally:  # the test's line for the run's timeline (tests/timeline.py)
            timeline.record(folder, timeline.entry(item.nodeid, xdist_group_of(item.nodeid),
                                                   alone, asked, got))


@pytest.hookimpl(hookwrapper=True, tryfirst=True)  # outside pytest-timeout's timer
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    with turn_of(item):
        yield


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """After a parallel run, where its time went (tests/timeline.py), on the controller."""
    config = terminalreporter.config
    if os.environ.get("PYTEST_XDIST_WORKER") or not getattr(config.option, "numprocesses", None):
        return
    for line in timeline.finish(lock_folder(config)):
        terminalreporter.write_line(line)


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
