"""The live table writes changed cells of rows in view at once, and those of other rows
when they scroll into view: what is on screen is never stale."""

from __future__ import annotations

from textual.app import App, ComposeResult

from loadtower.tui.widgets.live_table import LiveTable
from tests.tui.helpers import screen_text


class TableApp(App):
    def compose(self) -> ComposeResult:
        yield LiveTable(id="t")

    def on_mount(self) -> None:
        self.query_one(LiveTable).add_columns("agent", "ops/s")


def rows(version: int, count: int = 100) -> dict[str, tuple[str, ...]]:
    return {f"a{i:03}": (f"a{i:03}", f"{version}-{i}") for i in range(count)}


async def test_rows_in_view_now_others_when_scrolled_to() -> None:
    app = TableApp()
    async with app.run_test(size=(40, 12)) as pilot:
        table = app.query_one(LiveTable)
        table.show(rows(1))
        await pilot.pause()
        assert table.row_count == 100
        table.show(rows(2))
        await pilot.pause()
        assert "2-0" in screen_text(pilot) and "1-0" not in screen_text(pilot)
        assert table.get_cell("a000", table.ordered_columns[1].key) == "2-0"
        assert table.get_cell("a090", table.ordered_columns[1].key) == "1-90"  # out of view
        table.scroll_to(y=85, animate=False)
        await pilot.pause()
        assert "2-90" in screen_text(pilot) and "1-9" not in screen_text(pilot)
        assert table.get_cell("a090", table.ordered_columns[1].key) == "2-90"


async def test_rows_come_and_go_by_key() -> None:
    app = TableApp()
    async with app.run_test(size=(40, 12)) as pilot:
        table = app.query_one(LiveTable)
        table.show(rows(1, 3))
        await pilot.pause()
        table.show({"a001": ("a001", "x"), "a009": ("a009", "new")})
        await pilot.pause()
        assert [r.key.value for r in table.ordered_rows] == ["a001", "a009"]
        text = screen_text(pilot)
        assert "a000" not in text and "x" in text and "new" in text


async def test_a_wider_value_widens_its_column() -> None:
    app = TableApp()
    async with app.run_test(size=(60, 12)) as pilot:
        table = app.query_one(LiveTable)
        table.show({"a": ("a", "9")})
        await pilot.pause()
        table.show({"a": ("a", "1,234,567")})
        await pilot.pause()
        assert "1,234,567" in screen_text(pilot)
