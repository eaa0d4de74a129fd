"""A keyed table that is updated in place, once a second, and stays cheap with many rows.

Rows are added, changed and removed by key (never cleared and refilled, so scroll
position holds). Changed cells are written only for rows in view; the rest are
written when they scroll into view. A table of 256 agents thus costs a few cell
updates a second, not 500.
"""

from __future__ import annotations

from textual.widgets import DataTable


class LiveTable(DataTable):
    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="none", zebra_stripes=True)
        self.latest: dict[str, tuple[str, ...]] = {}  # what every row should show

    def show(self, rows: dict[str, tuple[str, ...]]) -> None:
        """Make the table show `rows` (key -> cell texts), in their order for new rows."""
        self.latest = rows
        for key in [k for k in self.rows if k.value not in rows]:
            self.remove_row(key)
        for key, values in rows.items():
            if key not in self.rows:
                self.add_row(*values, key=key)
        self._write_visible()

    def _visible(self) -> range:
        top = round(self.scroll_y)
        return range(top, top + max(1, self.scrollable_content_region.height))

    def _write_visible(self) -> None:
        columns = list(self.columns.keys())
        ordered = [row.key for row in self.ordered_rows]
        for index in self._visible():
            if index >= len(ordered):
                break
            key = ordered[index]
            values = self.latest.get(key.value or "")
            if values is None:
                continue
            for column, value in zip(columns, values, strict=False):
                old = self.get_cell(key, column)
                if old != value:
                    self.update_cell(key, column, value, update_width=len(value) > len(str(old)))

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if round(old_value) != round(new_value):
            self._write_visible()

    def on_resize(self) -> None:
        self._write_visible()
