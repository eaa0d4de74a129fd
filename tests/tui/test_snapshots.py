"""Snapshot tests (pytest-textual-snapshot) of the runs, live, replay, SQL and compare
screens (and the engines screen, 120x36 only) at a fixed terminal size, from the fixture
stores. A store is opened by a relative path from the test's directory so that no
temporary path shows on screen.
Update with `pytest tests/tui/test_snapshots.py --snapshot-update`, then look at the
SVGs in __snapshots__/ before committing them."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import TextArea

from loadtower.tui.app import LoadtowerApp
from loadtower.tui.screens import sql_console
from loadtower.tui.screens.dashboard import RunDashboard
from loadtower.tui.screens.sql_console import SqlScreen
from tests.tui.fixture_store import RUN_A, RUN_B, T0
from tests.tui.helpers import SIZE, settle

pytestmark = pytest.mark.timeout(120)
SMALL = (100, 30)


@pytest.fixture
def here(store: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(store.parent)
    return Path(store.name)


@pytest.mark.parametrize("size", [SIZE, SMALL], ids=["120x36", "100x30"])
def test_runs(here: Path, snap_compare, size: tuple[int, int]) -> None:
    assert snap_compare(LoadtowerApp(here), terminal_size=size, run_before=settle)


@pytest.mark.parametrize("size", [SIZE, SMALL], ids=["120x36", "100x30"])
def test_live(here: Path, snap_compare, size: tuple[int, int]) -> None:
    """A live dashboard of a run in the store: it follows the newest stored second."""
    app = LoadtowerApp(here, open_run=RUN_A, live=True)
    assert snap_compare(app, terminal_size=size, run_before=settle)


@pytest.mark.parametrize("size", [SIZE, SMALL], ids=["120x36", "100x30"])
def test_replay(here: Path, snap_compare, size: tuple[int, int]) -> None:
    """A replay of run B paused 21 s in: the load phase over, the errors of second 20
    and the CPU warning of second 19 seen."""

    async def paused_at(pilot: Pilot) -> None:
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, RunDashboard)
        screen.seek_to(T0 + 3600 + 21)  # run B starts an hour after T0
        await settle(pilot)
        assert screen.snap is not None and screen.snap.cursor == T0 + 3621
        await settle(pilot)

    app = LoadtowerApp(here, open_run=RUN_B)
    assert snap_compare(app, terminal_size=size, run_before=paused_at)


@pytest.mark.parametrize("size", [SIZE, SMALL], ids=["120x36", "100x30"])
def test_sql_console(here: Path, snap_compare, monkeypatch: pytest.MonkeyPatch,
                     size: tuple[int, int]) -> None:
    class StillClock:  # the status line says how long the query took: make that 0.0 ms
        @staticmethod
        def perf_counter() -> float:
            return 0.0

    monkeypatch.setattr(sql_console, "time", StillClock)

    async def queried(pilot: Pilot) -> None:
        await settle(pilot)
        await pilot.press("2")
        screen = pilot.app.screen
        assert isinstance(screen, SqlScreen)
        await settle(pilot)
        screen.run_query(
            "SELECT run_id, phase, op, round(ops_per_s, 1) AS ops_per_s, p99_ms\n"
            "FROM phase_summary ORDER BY run_id, phase, op")
        await settle(pilot)
        screen.query_one("#sql-editor", TextArea).blur()  # no blinking cursor in the picture
        await pilot.pause()

    assert snap_compare(LoadtowerApp(here), terminal_size=size, run_before=queried)


@pytest.mark.parametrize("size", [SIZE, SMALL], ids=["120x36", "100x30"])
def test_compare(here: Path, snap_compare, size: tuple[int, int]) -> None:
    async def compared(pilot: Pilot) -> None:
        await settle(pilot)
        pilot.app.open_compare(RUN_A, RUN_B)
        await settle(pilot)

    assert snap_compare(LoadtowerApp(here), terminal_size=size, run_before=compared)


def test_engines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, snap_compare) -> None:
    """The engines table of one ycsb-suite run (Cassandra and MongoDB, MongoDB's errors by
    class folded in the return codes column)."""
    from tests.tui.engines_store import RUN_SUITE, build_engines_store

    build_engines_store(tmp_path / "engines.duckdb")
    monkeypatch.chdir(tmp_path)

    async def engines(pilot: Pilot) -> None:
        await settle(pilot)
        pilot.app.open_engines(RUN_SUITE)
        await settle(pilot)

    app = LoadtowerApp(Path("engines.duckdb"))
    assert snap_compare(app, terminal_size=SIZE, run_before=engines)
