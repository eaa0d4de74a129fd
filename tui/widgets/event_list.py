"""The run's events, one line each ("14:13:39 ! agent agent1/0 at 93% CPU: its…").

A line that is too long ends in "…" at the pane's current width (and shows whole when
the pane is wider), so the list stays one event per line and easy to scan. Only the
lines in view are formatted, and each once per width. The list follows its end
unless the user scrolled up (with the mouse: it takes no focus, so the dashboard's
keys are never hidden).
"""

from __future__ import annotations

from rich.text import Text
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from loadtower.store.terminal_text import visible
from loadtower.tui.widgets.event_kinds import kind
from loadtower.tui.widgets.timeline import clock

Item = tuple[float, str, str]  # (ts, event kind, message)


def event_text(item: Item) -> Text:
    ts, name, message = item
    k = kind(name)
    text = Text(no_wrap=True, overflow="ellipsis", end="")
    text.append(f"{clock(ts)} ", style="dim")
    text.append(f"{k.glyph} ", style=k.style)
    text.append(visible(message, keep_newlines=False), style=k.style if name not in ("phase_start", "phase_end") else "cyan")
    return text


class EventList(ScrollView, can_focus=False):
    DEFAULT_CSS = """
    EventList { overflow-x: hidden; overflow-y: auto; scrollbar-size-vertical: 1; }
    """

    def __init__(self, *, id: str | None = None, empty: str = "no events yet") -> None:
        super().__init__(id=id)
        self.items: list[Item] = []
        self.empty = empty
        self._strips: dict[tuple[Item, int], Strip] = {}

    def on_mount(self) -> None:
        self.anchor()  # Textual keeps it at the end until the user scrolls up

    def set_items(self, items: list[Item]) -> None:
        if items == self.items:
            return
        self.items = items
        self.virtual_size = Size(0, len(items))
        if len(self._strips) > 4 * max(64, len(items)):
            self._strips.clear()
        self.refresh()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._strips.clear()

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        base = self.rich_style
        index = round(self.scroll_y) + y
        if not self.items:
            if y == 0:
                return Strip([*Text(self.empty, style="dim").render(self.app.console)]
                             ).apply_style(base).crop_extend(0, width, base)
            return Strip.blank(width, base)
        if index >= len(self.items):
            return Strip.blank(width, base)
        key = (self.items[index], width)
        strip = self._strips.get(key)
        if strip is None:
            text = event_text(self.items[index])
            text.truncate(width, overflow="ellipsis")
            strip = Strip(list(text.render(self.app.console))).apply_style(base)
            strip = self._strips[key] = strip.crop_extend(0, width, base)
        return strip
