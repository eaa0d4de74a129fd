"""The live table shows rows in the order given, writes changed cells of rows in view at
once and those of other rows when they scroll into view (what is on screen is never
stale), and shows every cell as written, never as Rich markup."""

from __future__ import annotations

from rich.text import Text
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


def cell(table: LiveTable, position: int, column: int = 1) -> str:
    value = table.get_cell(str(position), table.ordered_columns[column].key)
    return value.plain if isinstance(value, Text) else str(value)


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
        assert cell(table, 0) == "2-0"
        assert cell(table, 90) == "1-90"  # out of view: written when it comes into view
        table.scroll_to(y=85, animate=False)
        await pilot.pause()
        assert "2-90" in screen_text(pilot) and "1-9" not in screen_text(pilot)
        assert cell(table, 90) == "2-90"


async def test_rows_follow_the_order_given_and_come_and_go_at_the_end() -> None:
    app = TableApp()
    async with app.run_test(size=(40, 12)) as pilot:
        table = app.query_one(LiveTable)
        table.show(rows(1, 3))
        await pilot.pause()
        table.show({"a009": ("a009", "new"), "a001": ("a001", "x")})  # a new order
        await pilot.pause()
        assert table.row_count == 2 and table.keys == ["a009", "a001"]
        assert table.row_texts() == [["a009", "new"], ["a001", "x"]]
        text = screen_text(pilot)
        assert text.index("a009") < text.index("a001")
        assert "a000" not in screen_text(pilot)


async def test_a_wider_value_widens_its_column() -> None:
    app = TableApp()
    async with app.run_test(size=(60, 12)) as pilot:
        table = app.query_one(LiveTable)
        table.show({"a": ("a", "9")})
        await pilot.pause()
        table.show({"a": ("a", "1,234,567")})
        await pilot.pause()
        assert "1,234,567" in screen_text(pilot)


async def test_markup_looking_cells_are_shown_as_written() -> None:
    """A host or error class named like Rich markup neither crashes nor vanishes."""
    app = TableApp()
    async with app.run_test(size=(60, 12)) as pilot:
        table = app.query_one(LiveTable)
        table.show({"x": ("[x]", "[/x]"), "y": ("[bold]B[/bold]", "[/]")})
        await pilot.pause()
        table.show({"x": ("[x]", "[/x] 2"), "y": ("[bold]B[/bold]", "[/]")})
        await pilot.pause()
        text = screen_text(pilot)
        for shown in ("[x]", "[/x] 2", "[bold]B[/bold]", "[/]"):
            assert shown in text, shown


async def test_a_new_style_alone_is_written() -> None:
    """The same text in a new style (an agent crossing 90% CPU) is a change."""
    app = TableApp()
    async with app.run_test(size=(40, 12)) as pilot:
        table = app.query_one(LiveTable)
        table.show({"a": ("a", Text("91%"))})
        await pilot.pause()
        table.show({"a": ("a", Text("91%", style="bold yellow"))})
        await pilot.pause()
        shown = table.get_cell("0", table.ordered_columns[1].key)
        assert isinstance(shown, Text) and str(shown.style) == "bold yellow"


class FixedTableApp(TableApp):
    """The table in a panel of fixed size (the dashboard's): new rows never resize it."""

    CSS = "LiveTable { height: 8; width: 40; }"


async def test_a_row_drawn_before_its_columns_were_measured_is_drawn_again() -> None:
    """A DataTable measures new cells when it next idles and caches each drawn cell
    without its width: a frame drawn in between (a busy machine) cut "loader11/0" to the
    header's "agent" and kept it so until the data changed. The table redraws once the
    widths change."""
    app = FixedTableApp()
    async with app.run_test(size=(60, 12)) as pilot:
        table = app.query_one(LiveTable)
        table.show({"a": ("loader11/0", "123,456")})
        table.render_line(1)  # a frame drawn before the table idled: cells at header width
        await pilot.pause()
        assert table.ordered_columns[0].content_width == len("loader11/0")
        line = table.render_line(1).text
        assert "loader11/0" in line and "123,456" in line, line
