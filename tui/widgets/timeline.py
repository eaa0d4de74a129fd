"""The phase timeline: one bar of the run's phases in order, each as wide as it lasted,
the replay position on it, and a row of event markers under it.

    ╭─ timeline · 2 phases · 36s ───────────────────────────────────────────────╮
    │ 1-load 6s  ycsb-a 30s                                                     │  <- the bar
    ││    │           !  ▲                                                      │  <- markers
    │14:13:20                 14:13:41                                  14:13:56│  <- clocks (if tall)
    ╰───────────────────────────────────────────────── │ phase  ! warning  × fault ╯

Phases are coloured blocks; in a replay the part after the cursor is darker, and
markers of later events are dim. Rendering is a pure function of (data, width,
height), cached until either changes. A click on the bar asks to seek there.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.message import Message
from textual.strip import Strip
from textual.widget import Widget

from loadtower.tui.widgets.event_kinds import OTHER, kind

# (played, after the cursor) background of each phase, in turn
PHASE_COLORS = (
    ("#2f7fa8", "#1a3f52"), ("#7a57a8", "#3a2a50"), ("#2f8a5f", "#1a4430"),
    ("#a8702f", "#52381a"), ("#a83f5a", "#521f2c"), ("#4f6fa8", "#263652"),
)
CURSOR = "▲"

Run = tuple[str, str]  # (text, Rich style)


@dataclass(frozen=True)
class Phase:
    name: str
    start: float
    end: float


@dataclass(frozen=True)
class TimelineData:
    start: float
    end: float
    cursor: float
    phases: tuple[Phase, ...] = ()
    markers: tuple[tuple[float, str], ...] = field(default=())  # (ts, event kind)
    show_cursor: bool = True  # a replay marks its position; a live run is always at the end


def duration(seconds: float) -> str:
    """6s, 4m10s, 1h02m."""
    s = max(0, round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s" if s % 60 else f"{s // 60}m"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def clock(ts: float) -> str:
    return time.strftime("%H:%M:%S", time.gmtime(ts))


def fit(text: str, width: int) -> str:
    """`text` cut to `width` cells, ending in … when cut."""
    if width <= 0:
        return ""
    return text if len(text) <= width else text[: width - 1] + "…"


def column(data: TimelineData, ts: float, width: int) -> int:
    span = data.end - data.start
    if span <= 0:
        return width - 1
    return min(width - 1, max(0, int((ts - data.start) / span * width)))


def phase_cells(data: TimelineData, width: int) -> list[tuple[int, int]]:
    """[first, last) cell of each phase: proportional to its time, at least one cell
    where room allows, never overlapping the one before."""
    cells, edge = [], 0
    span = data.end - data.start
    for phase in data.phases:
        if span <= 0:
            a, b = 0, width
        else:
            a = int((phase.start - data.start) / span * width)  # as column() places marks
            b = int((phase.end - data.start) / span * width)
        a = min(max(a, edge), width)
        b = min(max(b, a + 1), width)
        cells.append((a, b))
        edge = b
    return cells


def bar_row(data: TimelineData, width: int) -> list[Run]:
    chars = ["·"] * width
    styles = ["dim"] * width
    cut = column(data, data.cursor, width) + 1 if data.show_cursor else width
    for index, ((a, b), phase) in enumerate(zip(phase_cells(data, width), data.phases,
                                                strict=True)):
        played, later = PHASE_COLORS[index % len(PHASE_COLORS)]
        label = f" {phase.name} {duration(phase.end - phase.start)}"
        if len(label) > b - a:
            label = fit(f" {phase.name}", b - a)  # the name before the duration
        for cell in range(a, b):
            offset = cell - a
            chars[cell] = label[offset] if offset < len(label) else " "
            styles[cell] = (f"bold #ffffff on {played}" if cell < cut
                            else f"#a0a8b0 on {later}")
    return _runs(chars, styles)


def marker_row(data: TimelineData, width: int) -> list[Run]:
    chars = [" "] * width
    styles = [""] * width
    ranks = [-1] * width
    for ts, name in data.markers:
        k = kind(name)
        cell = column(data, ts, width)
        if k.rank > ranks[cell]:
            ranks[cell] = k.rank
            chars[cell] = k.glyph
            later = data.show_cursor and ts > data.cursor
            styles[cell] = f"{k.style} dim" if later else k.style
    if data.show_cursor:
        cell = column(data, data.cursor, width)
        chars[cell], styles[cell] = CURSOR, "bold"
    return _runs(chars, styles)


def clock_row(data: TimelineData, width: int) -> list[Run]:
    chars = [" "] * width
    styles = ["dim"] * width

    def put(text: str, at: int, style: str) -> bool:
        at = min(max(0, at), width - len(text))
        if at < 0 or any(c != " " for c in chars[max(0, at - 1): at + len(text) + 1]):
            return False
        chars[at: at + len(text)] = list(text)
        styles[at: at + len(text)] = [style] * len(text)
        return True

    put(clock(data.start), 0, "dim")
    put(clock(data.end), width - 8, "dim")
    if data.show_cursor:
        put(clock(data.cursor), column(data, data.cursor, width) - 4, "bold")
    return _runs(chars, styles)


def _runs(chars: list[str], styles: list[str]) -> list[Run]:
    runs: list[Run] = []
    for ch, style in zip(chars, styles, strict=True):
        if runs and runs[-1][1] == style:
            runs[-1] = (runs[-1][0] + ch, style)
        else:
            runs.append((ch, style))
    return runs


def timeline_rows(data: TimelineData | None, width: int, height: int) -> list[list[Run]]:
    """The timeline as rows of (text, style) runs: bar, markers and, given a third row,
    the clock at the start, at the cursor and at the end."""
    if data is None or width < 4:
        return [[("no phases yet", "dim")]]
    rows = [bar_row(data, width), marker_row(data, width)]
    if height >= 3:
        rows.append(clock_row(data, width))
    return rows[:max(1, height)]


def legend(data: TimelineData) -> str:
    """The marker glyphs in use, most important first ("× fault  ! warning  │ phase");
    the small dots of other events (connections, versions) need no words."""
    seen = {kind(name) for _ts, name in data.markers} - {OTHER}
    return "  ".join(f"{k.glyph} {k.label}" for k in sorted(seen, key=lambda k: -k.rank))


class PhaseTimeline(Widget):
    DEFAULT_CSS = """
    PhaseTimeline {
        height: 4; border: round $panel; border-title-color: $text-accent;
        border-subtitle-color: $text-muted; padding: 0 1;
    }
    """

    class Picked(Message):
        """The bar was clicked at `ts` (a replay seeks there)."""

        def __init__(self, ts: float) -> None:
            super().__init__()
            self.ts = ts

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.data: TimelineData | None = None
        self.border_title = "timeline"
        self._lines: list[Strip] = []
        self._key: tuple[object, ...] | None = None

    def set_data(self, data: TimelineData, title: str) -> None:
        if data == self.data and title == self.border_title:
            return
        self.data = data
        self.border_title = title
        self.border_subtitle = legend(data)
        self._key = None
        self.refresh()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._key = None

    def render_line(self, y: int) -> Strip:
        width, height = self.content_size
        if self._key != (width, height):
            base = self.rich_style
            self._lines = [
                Strip([Segment(text, base + Style.parse(style) if style else base)
                       for text, style in row]).crop_extend(0, width, base)
                for row in timeline_rows(self.data, width, height)
            ]
            self._key = (width, height)
        return self._lines[y] if y < len(self._lines) else Strip.blank(width, self.rich_style)

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        data = self.data
        if offset is None or data is None or self.content_size.width <= 0:
            return
        span = data.end - data.start
        ts = data.start + span * (offset.x + 0.5) / self.content_size.width
        self.post_message(self.Picked(min(max(ts, data.start), data.end)))
