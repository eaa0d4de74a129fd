"""Pilot tests of the runs screen: list, filter, sort, mark and compare, delete, open."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from textual.widgets import DataTable, Input

from loadtower.store.runs_list import list_runs
from loadtower.tui.app import LoadtowerApp
from loadtower.tui.screens.compare import CompareScreen
from loadtower.tui.screens.dashboard import RunDashboard
from loadtower.tui.screens.runs import RunsScreen
from loadtower.tui.widgets.confirm import Confirm
from tests.tui.fixture_store import RUN_A, RUN_B, RUN_FAILED
from tests.tui.helpers import SIZE, screen_text, settle, wait_for

pytestmark = pytest.mark.timeout(60)


def rows(app: LoadtowerApp) -> list[list[str]]:
    table = app.screen.query_one("#runs", DataTable)
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


def ids(app: LoadtowerApp) -> list[str]:
    return [r[1] for r in rows(app)]


def status_line(app: LoadtowerApp) -> str:
    return str(app.screen.query_one("#runs-status").render())


async def go_to(pilot, run_id: str) -> None:
    table = pilot.app.screen.query_one("#runs", DataTable)
    table.move_cursor(row=table.get_row_index(run_id))
    await pilot.pause()


def worst_p99(store: Path, run_id: str) -> float:
    with duckdb.connect(str(store), read_only=True) as con:
        return con.execute(
            "SELECT max(p99_ms) FROM phase_summary WHERE run_id = ?", [run_id]).fetchone()[0]


async def test_lists_every_run_with_peak_and_p99(store: Path) -> None:
    app = LoadtowerApp(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, RunsScreen)
        table = rows(app)
        # newest first
        assert ids(app) == [RUN_FAILED, RUN_B, RUN_A]
        by_id = {r[1]: r for r in table}
        assert by_id[RUN_A][3] == "completed" and by_id[RUN_FAILED][3] == "failed"
        assert by_id[RUN_A][4] == "2026-09-21 14:13"  # T0, UTC (the id has the seconds)
        assert by_id[RUN_A][5] == "36 s" and by_id[RUN_FAILED][5] == "15 s"
        for run_id in (RUN_A, RUN_B, RUN_FAILED):
            peak = float(by_id[run_id][6].replace(",", ""))
            assert 1490 <= peak <= 1510  # the load phase: 1500 +-10 inserts a second
            assert by_id[run_id][7] == f"{worst_p99(store, run_id):.2f}"
        assert float(by_id[RUN_B][7]) > float(by_id[RUN_A][7])  # B was made slower
        assert "3 of 3 runs" in status_line(app)


async def test_filter_and_clear(store: Path) -> None:
    app = LoadtowerApp(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("slash")
        box = app.screen.query_one("#filter", Input)
        assert box.has_focus and box.has_class("visible")
        await pilot.press(*"failed")
        assert ids(app) == [RUN_FAILED]
        assert "1 of 3 runs" in status_line(app) and "filter 'failed'" in status_line(app)
        await pilot.press("escape")
        assert ids(app) == [RUN_FAILED, RUN_B, RUN_A]
        assert not box.has_class("visible")
        assert app.screen.query_one("#runs", DataTable).has_focus
        # a filter on the run id, kept with enter
        await pilot.press("slash", *"bbbb", "enter")
        assert ids(app) == [RUN_B]
        assert app.screen.query_one("#runs", DataTable).has_focus


async def test_sort_cycles_through_keys(store: Path) -> None:
    app = LoadtowerApp(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "sorted by started" in status_line(app)
        await pilot.press("o")  # name: all are "fixture"; a stable sort keeps the order
        assert "sorted by name" in status_line(app)
        await pilot.press("o")
        assert "sorted by status" in status_line(app)
        assert [r[3] for r in rows(app)] == ["completed", "completed", "failed"]
        await pilot.press("o")
        assert "sorted by duration" in status_line(app)
        assert ids(app)[-1] == RUN_FAILED  # the shortest last
        await pilot.press("o", "o")
        assert "sorted by p99_ms" in status_line(app)
        assert ids(app)[0] == RUN_B  # the slow run first
        await pilot.press("o")
        assert "sorted by started" in status_line(app)
        assert ids(app) == [RUN_FAILED, RUN_B, RUN_A]


async def test_mark_two_and_compare(store: Path) -> None:
    app = LoadtowerApp(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await go_to(pilot, RUN_A)
        await pilot.press("c")  # nothing marked: a warning, no compare screen
        assert isinstance(app.screen, RunsScreen)
        await pilot.press("space")
        assert rows(app)[2][0].startswith("●")
        await go_to(pilot, RUN_B)
        await pilot.press("space")
        assert app.screen.marked == [RUN_A, RUN_B]
        assert "marked: " in status_line(app)
        await pilot.press("c")
        await settle(pilot)
        assert isinstance(app.screen, CompareScreen)
        assert (app.screen.run_a, app.screen.run_b) == (RUN_A, RUN_B)
        await pilot.press("escape")
        assert isinstance(app.screen, RunsScreen)
        # space again unmarks
        await go_to(pilot, RUN_B)
        await pilot.press("space")
        assert app.screen.marked == [RUN_A]


async def test_delete_asks_first_then_deletes(store: Path) -> None:
    app = LoadtowerApp(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await go_to(pilot, RUN_FAILED)
        await pilot.press("d")
        assert isinstance(app.screen, Confirm)
        assert RUN_FAILED in str(app.screen.query_one("Label").render())
        await pilot.pause()
        assert "samples?" in screen_text(pilot)  # the question wraps, not cut off
        await pilot.press("n")  # cancel
        await settle(pilot)
        assert isinstance(app.screen, RunsScreen)
        assert RUN_FAILED in {r.id for r in list_runs(store)}
        assert RUN_FAILED in ids(app)

        await pilot.press("d")
        assert isinstance(app.screen, Confirm)
        await pilot.press("y")
        await wait_for(pilot, lambda: RUN_FAILED not in ids(app), "the run to leave the list")
        await settle(pilot)
        assert {r.id for r in list_runs(store)} == {RUN_A, RUN_B}
        with duckdb.connect(str(store), read_only=True) as con:
            left = con.execute("SELECT count(*) FROM op_second WHERE run_id = ?",
                               [RUN_FAILED]).fetchone()[0]
        assert left == 0


async def test_running_run_cannot_be_deleted_and_opens_live(store: Path) -> None:
    with duckdb.connect(str(store)) as con:
        con.execute("UPDATE runs SET status = 'running', ended = NULL WHERE id = ?", [RUN_B])
    app = LoadtowerApp(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await go_to(pilot, RUN_B)
        await pilot.press("d")
        assert isinstance(app.screen, RunsScreen)  # refused, no question asked
        assert RUN_B in {r.id for r in list_runs(store)}
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, RunDashboard)
        assert app.screen.run_id == RUN_B and app.screen.live


async def test_enter_opens_the_replay_dashboard(store: Path) -> None:
    app = LoadtowerApp(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await go_to(pilot, RUN_A)
        await pilot.press("enter")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, RunDashboard)
        assert screen.run_id == RUN_A and not screen.live
        assert screen.snap is not None and screen.snap.run["id"] == RUN_A
        await pilot.press("escape")
        assert isinstance(app.screen, RunsScreen)


async def test_deleting_a_marked_run_unmarks_it(store: Path) -> None:
    """Mark two, delete one, press c: a warning, not a compare of a run that is gone."""
    app = LoadtowerApp(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for run_id in (RUN_A, RUN_FAILED):
            await go_to(pilot, run_id)
            await pilot.press("space")
        assert app.screen.marked == [RUN_A, RUN_FAILED]
        await pilot.press("d", "y")  # the cursor is on RUN_FAILED
        await wait_for(pilot, lambda: RUN_FAILED not in ids(app), "the run to leave the list")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, RunsScreen) and screen.marked == [RUN_A]
        assert f"marked: {RUN_A}" in status_line(app) and RUN_FAILED not in status_line(app)
        await pilot.press("c")
        await settle(pilot)
        assert app.is_running and app.screen is screen  # no compare screen, no crash


async def test_a_marked_run_deleted_elsewhere_is_unmarked_on_reload(store: Path) -> None:
    from loadtower.store import delete_run

    app = LoadtowerApp(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for run_id in (RUN_A, RUN_B):
            await go_to(pilot, run_id)
            await pilot.press("space")
        delete_run(store, RUN_B)  # another process, say `loadtower runs --delete`
        await pilot.press("r")
        await settle(pilot)
        assert app.screen.marked == [RUN_A]


async def test_stored_names_are_not_markup(store: Path) -> None:
    """Names with [brackets] are shown as they are; '[/oops]' used to raise MarkupError."""
    with duckdb.connect(str(store)) as con:
        con.execute("UPDATE runs SET name = '[/oops]', scenario = '[cassandra]' WHERE id = ?",
                    [RUN_A])
    app = LoadtowerApp(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        by_id = {r[1]: r for r in rows(app)}
        assert by_id[RUN_A][0] == "[/oops]" and by_id[RUN_A][2] == "[cassandra]"
        text = screen_text(pilot)
        assert "[/oops]" in text and "[cassandra]" in text
        await go_to(pilot, RUN_A)
        await pilot.press("space")  # marked: styled, still the same text
        assert rows(app)[2][0] == "● [/oops]"
        await pilot.press("d")  # the question names the run as it is
        assert isinstance(app.screen, Confirm)
        assert "([/oops])" in str(app.screen.query_one("Label").render())
        await pilot.press("n")
        await pilot.press("slash", *"[/x")  # a filter is shown as typed, too
        assert "filter '[/x'" in status_line(app)
        assert app.is_running


async def test_fits_100_columns_and_footer_shows_enter(tmp_path: Path) -> None:
    """At 100x30 the table fits without a horizontal scrollbar (whose thumb end showed as
    a stray '▏'), long names are cut short instead, and the footer shows enter."""
    from tests.tui.fixture_store import build_fixture_store

    store = build_fixture_store(tmp_path / "store.duckdb")
    with duckdb.connect(str(store)) as con:
        con.execute("UPDATE runs SET name = 'a-rather-long-run-name-for-the-table', "
                    "scenario = 'scale-out-compaction' WHERE id = ?", [RUN_B])
    app = LoadtowerApp(store)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        table = app.screen.query_one("#runs", DataTable)
        assert table.virtual_size.width <= table.size.width
        assert not table.show_horizontal_scrollbar
        by_id = {r[1]: r for r in rows(app)}
        assert by_id[RUN_B][0].endswith("…") and by_id[RUN_A][0] == "fixture"
        text = screen_text(pilot)
        assert "▏" not in text.split("\n")[-2]  # no scrollbar over the status line
        footer = text.split("\n")[-1]
        assert "Open" in footer and "Mark" in footer and "Delete" in footer
        await pilot.resize_terminal(160, 30)  # room enough: the whole name again
        await settle(pilot)
        by_id = {r[1]: r for r in rows(app)}
        assert by_id[RUN_B][0] == "a-rather-long-run-name-for-the-table"
