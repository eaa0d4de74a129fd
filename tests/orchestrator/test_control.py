from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from loadtower.orchestrator.control import ControlServer, RunControl, RunStopped
from loadtower.orchestrator.phases.ring import node_states
from loadtower.scenarios.control_api import UNIX_PATH_MAX, control_path, send_command


async def test_sleep_returns_early_on_skip() -> None:
    control = RunControl()
    loop = asyncio.get_running_loop()
    loop.call_later(0.1, control.handle, "skip_phase")
    start = loop.time()
    assert await control.sleep(30) is False
    assert loop.time() - start < 10
    control.new_phase()
    assert await control.sleep(0.05) is True


async def test_paused_time_does_not_count_and_stop_ends_pause() -> None:
    control = RunControl()
    control.handle("pause_phase")
    loop = asyncio.get_running_loop()
    loop.call_later(0.2, control.handle, "resume_phase")
    start = loop.time()
    assert await control.sleep(0.1) is True
    assert loop.time() - start >= 0.2
    control.handle("pause_phase")
    loop.call_later(0.1, control.stop)
    assert await control.sleep(5) is False
    assert control.reason == "stopped by the operator"


async def test_control_socket_round_trip(tmp_path: Path) -> None:
    control = RunControl()
    server = ControlServer(control, tmp_path / "c" / "run.sock")
    await server.start()
    try:
        assert await send_command(server.path, "skip_phase") == "ok"
        assert control.skip_requested.is_set()
        assert (await send_command(server.path, "explode")).startswith("unknown command 'explode'")
        assert await send_command(server.path, "stop") == "ok"
        assert control.stop_requested.is_set()
    finally:
        await server.close()
    assert not server.path.exists()


def test_node_states_from_nodetool_status() -> None:
    text = """Datacenter: datacenter1
=======================
Status=Up/Down
|/ State=Normal/Leaving/Joining/Moving
--  Address    Load       Tokens  Owns (effective)  Host ID                               Rack
UN  127.0.0.1  1.2 MiB    16      100.0%            3f8c...                               rack1
UJ  127.0.0.2  80 KiB     16      ?                 9a1d...                               rack1
"""
    assert node_states(text) == {"127.0.0.1": "UN", "127.0.0.2": "UJ"}


def test_control_path_stays_short_enough_for_a_unix_socket(tmp_path: Path) -> None:
    short = control_path(Path("/tmp/s.duckdb"), "20261123-090837-4860")
    assert short.parent.name == "control"
    deep = tmp_path / ("x" * 120) / "s.duckdb"
    long_one = control_path(deep, "20261123-090837-4860")
    assert len(str(long_one)) <= UNIX_PATH_MAX
    assert long_one == control_path(deep, "20261123-090837-4860")
    assert long_one != control_path(deep, "20261123-090837-4861")


async def test_a_stop_calls_the_on_stop_callbacks_once_and_late_ones_at_once() -> None:
    control = RunControl()
    called: list[str] = []
    control.on_stop(lambda: called.append("load"))
    assert called == []
    control.stop("interrupted by SIGINT")
    control.stop("stopped by the operator")  # a second stop: no second call, first reason
    assert called == ["load"] and control.reason == "interrupted by SIGINT"
    control.on_stop(lambda: called.append("late"))  # registered after the stop
    assert called == ["load", "late"]


async def test_unless_stopped_gives_the_result_or_cancels_on_a_stop() -> None:
    control = RunControl()

    async def answer() -> int:
        return 42

    assert await control.unless_stopped(answer()) == 42
    cancelled = asyncio.Event()

    async def hangs() -> None:
        try:
            await asyncio.Event().wait()
        finally:
            cancelled.set()

    asyncio.get_running_loop().call_soon(control.stop, "interrupted by SIGINT")
    with pytest.raises(RunStopped, match="interrupted by SIGINT"):
        await control.unless_stopped(hangs())
    assert cancelled.is_set()
    with pytest.raises(RunStopped):  # stopped already: nothing new is waited for
        await control.unless_stopped(hangs())
