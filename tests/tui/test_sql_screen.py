"""Pilot tests for the SQL console screen."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from textual.app import App
from textual.pilot import Pilot
from textual.widgets import DataTable, Static, TextArea, Tree

from loadtower.tui.screens.sql_console import MAX_SHOWN, SqlScreen, fetch, format_cell
from tests.tui.fixture_store import RUN_A, build_fixture_store
from tests.tui.helpers import screen_text

pytestmark = pytest.mark.timeout(30)
SIZE = (120, 36)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_fixture_store(tmp_path_factory.mktemp("sql") / "store.duckdb")


class SqlApp(App):
    def __init__(self, store: Path, export_dir: Path | None = None) -> None:
        super().__init__()
        self.sql_screen = SqlScreen(store, export_dir=export_dir)

    def on_mount(self) -> None:
        self.push_screen(self.sql_screen)


async def settle(app: SqlApp, pilot: Pilot) -> None:
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()


async def run(app: SqlApp, pilot: Pilot, query: str) -> SqlScreen:
    app.sql_screen.run_query(query)
    await settle(app, pilot)
    return app.sql_screen


def status_text(screen: SqlScreen) -> str:
    return str(screen.query_one("#sql-status", Static).render())


async def test_schema_lists_tables_and_columns(store: Path) -> None:
    app = SqlApp(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        tree = app.sql_screen.query_one("#sql-schema", Tree)
        tables = {node.data[1]: node for node in tree.root.children}
        for name in ("op_seconds", "node_seconds", "phase_summary", "runs"):
            assert name in tables
        assert any("ops_per_s" in str(c.label) for c in tables["phase_summary"].children)
        tree.select_node(tables["runs"])
        await pilot.pause()
        editor = app.sql_screen.query_one("#sql-editor", TextArea)
        assert editor.text == "SELECT * FROM runs LIMIT 100"


async def test_query_fills_table(store: Path) -> None:
    app = SqlApp(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        query = ("SELECT phase, op, ops_per_s FROM phase_summary "
                 f"WHERE run_id = '{RUN_A}' ORDER BY phase, op")
        screen = await run(app, pilot, query)
        table = screen.query_one("#sql-results", DataTable)
        assert table.row_count == 3
        cells = [tuple(str(c) for c in table.get_row_at(i)[:2]) for i in range(3)]
        assert cells == [("1-load", "insert"), ("ycsb-a", "read"), ("ycsb-a", "update")]
        assert screen.last_columns == ["phase", "op", "ops_per_s"]
        assert screen.last_error is None
        assert "3 rows in" in status_text(screen)


async def test_write_statement_is_refused(store: Path) -> None:
    from loadtower.store import StoreReader

    app = SqlApp(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = await run(app, pilot, "DELETE FROM runs")
        assert screen.last_error is not None and "read-only" in screen.last_error
        assert "read-only" in status_text(screen)
        assert screen.query_one("#sql-status").has_class("error")
    assert len(StoreReader(store).runs()) == 3


async def test_syntax_error_is_inline(store: Path) -> None:
    app = SqlApp(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = await run(app, pilot, "SELEC * FORM runs")
        assert screen.last_error and "Traceback" not in screen.last_error
        assert app.is_running and app.screen is screen
        screen = await run(app, pilot, "SELECT count(*) AS n FROM runs")
        assert screen.last_error is None and screen.last_rows == [(3,)]


async def test_history_recall(store: Path) -> None:
    app = SqlApp(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await run(app, pilot, "SELECT 1")
        await run(app, pilot, "SELECT 1")
        await run(app, pilot, "SELEC oops")
        screen = await run(app, pilot, "SELECT 2")
        assert screen.history == ["SELECT 1", "SELEC oops", "SELECT 2"]
        editor = screen.query_one("#sql-editor", TextArea)
        editor.load_text("draft")
        await pilot.press("ctrl+up")
        assert editor.text == "SELECT 2"
        await pilot.press("ctrl+up", "ctrl+up", "ctrl+up")
        assert editor.text == "SELECT 1"
        await pilot.press("ctrl+down")
        assert editor.text == "SELEC oops"
        await pilot.press("ctrl+down", "ctrl+down")
        assert editor.text == "draft"


async def test_run_binding_and_export(store: Path, tmp_path: Path) -> None:
    app = SqlApp(store, export_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.sql_screen
        screen.query_one("#sql-editor", TextArea).load_text(
            "SELECT ts, host, cpu_pct FROM node_seconds ORDER BY ts, host")
        await pilot.press("ctrl+r")
        await settle(app, pilot)
        expected = len(screen.last_rows)
        assert expected > 0 and screen.last_error is None
        await pilot.press("ctrl+e")
        await pilot.pause()
        files = list(tmp_path.glob("loadtower-query-*.csv"))
        assert len(files) == 1
        assert str(files[0]) in status_text(screen)
        with files[0].open(newline="") as fh:
            rows = list(csv.reader(fh))
        assert rows[0] == ["ts", "host", "cpu_pct"]
        assert len(rows) - 1 == expected


async def test_large_result_is_capped(store: Path, tmp_path: Path) -> None:
    app = SqlApp(store, export_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = await run(app, pilot, "SELECT * FROM range(5000)")
        assert screen.query_one("#sql-results", DataTable).row_count == MAX_SHOWN == 1000
        assert len(screen.last_rows) == MAX_SHOWN and screen.truncated
        assert status_text(screen).startswith("first 1000 rows shown, the result has more")
        await pilot.press("ctrl+e")  # the export has every row, not only the ones shown
        await settle(app, pilot)
        (path,) = tmp_path.glob("*.csv")
        assert len(path.read_text().splitlines()) == 5001
        assert "wrote 5000 rows" in status_text(screen)
        # exactly the cap: every row shown, nothing said to be missing
        screen = await run(app, pilot, f"SELECT * FROM range({MAX_SHOWN})")
        assert len(screen.last_rows) == MAX_SHOWN and not screen.truncated
        assert status_text(screen).startswith(f"{MAX_SHOWN} rows in")


def test_fetch_cuts_at_the_cap(store: Path) -> None:
    columns, rows, more = fetch(store, "SELECT * FROM range(7)", 5)
    assert columns == ["range"] and rows == [(i,) for i in range(5)] and more
    assert fetch(store, "SELECT * FROM range(5)", 5)[1:] == ([(i,) for i in range(5)], False)


async def test_markup_like_values_are_shown_as_they_are(store: Path) -> None:
    """Stored text is never read as Rich markup: '[/oops]' used to raise MarkupError and
    end the app, '[cassandra]' used to vanish."""
    app = SqlApp(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = await run(app, pilot, "SELECT '[/oops]' AS a, '[cassandra]' AS b, '[/x]'")
        assert app.is_running and screen.last_error is None
        table = screen.query_one("#sql-results", DataTable)
        assert [str(c) for c in table.get_row_at(0)] == ["[/oops]", "[cassandra]", "[/x]"]
        assert [str(c.label) for c in table.columns.values()] == ["a", "b", "'[/x]'"]
        text = screen_text(pilot)
        assert "[/oops]" in text and "[cassandra]" in text
        # a stored inventory: its [sections] are shown, its line breaks as ↵
        screen = await run(app, pilot, f"SELECT inventory_text FROM runs WHERE id = '{RUN_A}'")
        shown = str(screen.query_one("#sql-results", DataTable).get_row_at(0)[0])
        assert shown.startswith("[cassandra]↵password = ")
        assert "[cassandra]↵password = " in screen_text(pilot)
        assert app.is_running


async def test_escape_pops_only_when_not_alone(store: Path) -> None:
    app = SqlApp(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is not app.sql_screen


def test_format_cell() -> None:
    assert format_cell(1.23456789) == "1.2346"
    assert format_cell(2.5) == "2.5"
    assert format_cell(3.0) == "3"
    assert format_cell(0.0000123456) == "1.235e-05"
    assert format_cell(None) == "NULL"
    assert format_cell(7) == "7"
    assert format_cell("a\nb\r\nc\td") == "a↵b↵c d"
    assert format_cell("x" * 200) == "x" * 79 + "…"
