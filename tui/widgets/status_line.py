"""A one-line status bar whose updates repaint only itself (a Static's update asks for
a new layout of the whole screen, which a dashboard redrawn every second can not pay)."""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget


class StatusLine(Widget):
    DEFAULT_CSS = "StatusLine { height: 1; }"
    text: reactive[Text] = reactive(Text, layout=False)

    def render(self) -> Text:
        return self.text
