"""A table that shows rows in the order given, updated in place once a second, and stays
cheap with many rows.

A row's key is its position: `show()` gives the rows in display order (the hottest
agent first, say), rows are added or removed only at the end when the count changes
(never cleared and refilled, so the scroll position holds), and changed cells are
written only for rows in view; the rest are written when they scroll into view. A
table of 256 agents thus costs a few cell updates a second, not 1,280.

A cell drawn before the table measured it is drawn again: DataTable measures new cells
when it next idles and caches drawn cells without their column's width, so a frame drawn
in between (a busy machine) would keep "loader11/0" cut to the header's "agent" until
the data changed. Once the widths change, the table drops those cached cells.

Cells are Rich Text, never markup: an error class or host named "[x]" or "[/x]"
shows as written, and control characters in them are spelled out (terminal_text).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from rich.text import Text
from textual.widgets import DataTable
from textual.widgets.data_table import CellKey, RowKey

from loadtower.store.terminal_text import visible

Cell = str | Text


def as_text(value: Cell) -> Text:
    """The cell as Text with nothing in it that could drive the terminal."""
    if not isinstance(value, Text):
        return Text(visible(value, False))
    plain = visible(value.plain, False)
    if plain == value.plain:
        return value
    return Text(plain, style=value.style, justify=value.justify)  # (spans: lengths changed)


def same(a: object, b: Text) -> bool:
    """Same text and the same look (Text's own == ignores its style)."""
    return (isinstance(a, Text) and a.plain == b.plain and a.style == b.style
            and a.spans == b.spans)


class LiveTable(DataTable):
    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="none", zebra_stripes=True)
        self.keys: list[str] = []  # which item each row shows, top to bottom
        self.latest: list[tuple[Text, ...]] = []  # what every row should show

    def show(self, rows: Mapping[str, Sequence[Cell]]) -> None:
        """Show `rows` (item key -> cells) in their order."""
        self.keys = list(rows)
        self.latest = [tuple(as_text(v) for v in values) for values in rows.values()]
        for position in range(self.row_count - 1, len(self.latest) - 1, -1):
            self.remove_row(str(position))
        for position in range(self.row_count, len(self.latest)):
            self.add_row(*self.latest[position], key=str(position))
        self._write_visible()

    def row_texts(self) -> list[list[str]]:
        """What every row shows (tests, and a person reading the table)."""
        return [[cell.plain for cell in row] for row in self.latest]

    def _visible(self) -> range:
        top = round(self.scroll_y)
        return range(top, min(len(self.latest), top + max(1, self.scrollable_content_region.height)))

    def _write_visible(self) -> None:
        columns = list(self.columns.keys())
        for position in self._visible():
            key = str(position)
            for column, value in zip(columns, self.latest[position], strict=False):
                old = self.get_cell(key, column)
                if not same(old, value):
                    wider = value.cell_len > (old.cell_len if isinstance(old, Text) else 0)
                    self.update_cell(key, column, value, update_width=wider)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if round(old_value) != round(new_value):
            self._write_visible()

    def on_resize(self) -> None:
        self._write_visible()

    def _widths(self) -> list[int]:
        return [column.content_width for column in self.ordered_columns]

    def _redraw_if_changed(self, before: list[int]) -> None:
        if self._widths() != before:
            self._update_count += 1  # part of every cached cell's and line's key
            self.refresh()

    def _update_dimensions(self, new_rows: Iterable[RowKey]) -> None:
        before = self._widths()
        super()._update_dimensions(new_rows)
        self._redraw_if_changed(before)

    def _update_column_widths(self, updated_cells: set[CellKey]) -> None:
        before = self._widths()
        super()._update_column_widths(updated_cells)
        self._redraw_if_changed(before)
