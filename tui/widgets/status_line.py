"""A one-line status bar of parts, each with an importance: at its current width it shows
the most important parts that fit, in their order (so the run's state is never the
one dropped at 100 columns). Its updates repaint only itself (a Static's update asks
for a new layout of the whole screen, which a dashboard redrawn every second can not
pay), and it refits itself when its own width changes (a help panel opening)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

SEPARATOR = "  "
Part = tuple[int, Text]  # (importance: 0 is kept longest, text)


def fit(parts: Sequence[Part], width: int) -> Text:
    """The parts that fit in `width` cells: taken most important first (in order among
    equals) until one does not fit, then shown in their own order."""
    chosen: set[int] = set()
    used = 0
    for index in sorted(range(len(parts)), key=lambda i: (parts[i][0], i)):
        need = parts[index][1].cell_len + (len(SEPARATOR) if chosen else 0)
        if used + need > width:
            break
        chosen.add(index)
        used += need
    if not chosen and parts:
        first = parts[min(range(len(parts)), key=lambda i: (parts[i][0], i))][1].copy()
        first.truncate(max(0, width), overflow="ellipsis")
        return first
    return Text(SEPARATOR).join(parts[i][1] for i in sorted(chosen))


class StatusLine(Widget):
    DEFAULT_CSS = "StatusLine { height: 1; }"
    parts: reactive[tuple[Part, ...]] = reactive(tuple, layout=False)

    @property
    def text(self) -> Text:
        """What the line shows now."""
        return fit(self.parts, self.content_size.width or 10_000)

    @property
    def full(self) -> Text:
        """Every part, as on a terminal wide enough."""
        return fit(self.parts, 10_000)

    def render(self) -> Text:
        return self.text
