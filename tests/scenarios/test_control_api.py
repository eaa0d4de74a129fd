"""The control API the TUI uses (scenarios/control_api.py): built-ins, a plan as plain
lines, a run's control socket and commands over a real UNIX socket, and a run started as
a real child process."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from loadtower.errors import LoadtowerError
from loadtower.orchestrator.control import ControlServer, RunControl
from loadtower.scenarios import control_api
from tests.scenarios.conftest import INVENTORY, SCENARIO

pytestmark = pytest.mark.timeout(120)


def test_builtin_scenarios_are_the_shipped_files() -> None:
    folder = Path(control_api.__file__).resolve().parent / "builtin"
    names = control_api.builtin_scenarios()
    assert names == sorted(p.stem for p in folder.glob("*.toml"))
    assert "quickstart" in names


def test_plan_lines_are_plain_text(write: Callable[[str, str], Path]) -> None:
    scenario = write("s.toml", SCENARIO.replace('name = "t"', 'name = "t\\u001b[31m"'))
    inventory = write("inv.toml", INVENTORY)
    lines = control_api.plan_lines(str(scenario), inventory, ["phases[1].rate=250"], width=100)
    text = "\n".join(lines)
    assert "\x1b" not in text  # no styles, and a name's escape character is spelled out
    assert "\\x1b[31m" in text
    for host in ("db1", "db2", "agent1"):
        assert host in text
    assert "250" in text
    assert all(len(line) <= 100 for line in lines)


def test_plan_lines_of_a_bad_scenario_name_the_file_and_key(
        write: Callable[[str, str], Path]) -> None:
    scenario = write("bad.toml", SCENARIO.replace("rate = 100\n", "rate = \"fast\"\n", 1))
    inventory = write("inv.toml", INVENTORY)
    with pytest.raises(LoadtowerError, match="bad.toml.*rate|rate.*bad.toml"):
        control_api.plan_lines(str(scenario), inventory)


def test_control_path_is_per_store_and_run(tmp_path: Path) -> None:
    # a short folder of its own: pytest's tmp_path (longer under xdist's popen-gwN/) can
    # already be too long for the socket to sit beside the store
    short = Path(tempfile.mkdtemp(prefix="lt-ctl-", dir="/tmp"))
    try:
        store = short / "results.duckdb"
        path = control_api.control_path(store, "run-1")
        assert path == Path(f"{store.resolve()}.d") / "control" / "run-1.sock"
    finally:
        shutil.rmtree(short)
    assert control_api.control_path(store, "run-2") != path
    deep = tmp_path.joinpath(*["d" * 30] * 4) / "results.duckdb"
    long_path = control_api.control_path(deep, "run-1")
    assert len(str(long_path).encode()) <= 100  # still a UNIX socket path
    assert long_path == control_api.control_path(deep, "run-1")


@pytest.fixture
async def listening(tmp_path: Path) -> AsyncIterator[tuple[RunControl, Path]]:
    run_control = RunControl()
    path = control_api.control_path(tmp_path / "store.duckdb", "run-1")
    server = ControlServer(run_control, path)
    await server.start()
    try:
        yield run_control, path
    finally:
        await server.close()


async def test_send_reaches_the_run(listening: tuple[RunControl, Path]) -> None:
    run_control, path = listening
    assert await control_api.send(path, "pause_phase") == "ok"
    assert not run_control.resumed.is_set()
    assert await control_api.send(path, "resume_phase") == "ok"
    assert run_control.resumed.is_set()
    assert await control_api.send(path, "skip_phase") == "ok"
    assert run_control.skip_requested.is_set()
    await control_api.send(path, "stop")
    assert run_control.stop_requested.is_set()


async def test_send_refuses_an_unknown_command(listening: tuple[RunControl, Path]) -> None:
    run_control, path = listening
    with pytest.raises(LoadtowerError, match="unknown run command 'explode'"):
        await control_api.send(path, "explode")
    assert run_control.history == []


async def test_send_to_no_run_is_an_os_error(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        await control_api.send(tmp_path / "nobody.sock", "stop", timeout=2.0)


async def test_send_times_out_on_a_silent_socket(tmp_path: Path) -> None:
    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read()  # never answers
        writer.close()

    path = tmp_path / "silent.sock"
    server = await asyncio.start_unix_server(silent, path=str(path))
    try:
        with pytest.raises(TimeoutError):
            await control_api.send(path, "stop", timeout=0.5)
    finally:
        server.close()
        await server.wait_closed()


def test_start_run_of_a_missing_scenario_says_why(tmp_path: Path,
                                                  write: Callable[[str, str], Path]) -> None:
    inventory = write("inv.toml", INVENTORY)
    store = tmp_path / "store.duckdb"
    with pytest.raises(LoadtowerError) as caught:
        control_api.start_run(str(tmp_path / "no-such-scenario.toml"), inventory, store,
                              timeout=60)
    assert "no-such-scenario" in str(caught.value)
    logs = list((Path(f"{store.resolve()}.d") / "tui-runs").glob("*.log"))
    assert len(logs) == 1  # the child's output is kept where the TUI shows it from
