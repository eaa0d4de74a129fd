"""The SQL console's editor: a TextArea that never holds a raw control character.

A query pasted or loaded (history, a test, a table picked in the schema) may carry ESC,
BEL or CR; the editor draws its text as it is, so those would reach the terminal. They
are spelled out instead (\\x1b), as everywhere else (terminal_text.visible)."""

from __future__ import annotations

from textual import events
from textual.widgets import TextArea

from loadtower.store.terminal_text import visible


class SqlEditor(TextArea):
    def load_text(self, text: str) -> None:
        super().load_text(visible(text))

    async def _on_paste(self, event: events.Paste) -> None:
        if self.read_only:
            return
        if result := self._replace_via_keyboard(visible(event.text), *self.selection):
            self.move_cursor(result.end_location)
            self.focus()
