"""A braille line chart: several series over time, linear or log y, no dependencies.

Rendering is a pure function of (series, size, scale), so snapshots are stable.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

DOTS = ((0x01, 0x08), (0x02, 0x10), (0x04, 0x20), (0x40, 0x80))  # [row][col] braille bits
LABEL_W = 8
PALETTE = ("#4fc3f7", "#ffb74d", "#81c784", "#e57373", "#ba68c8", "#fff176", "#4db6ac", "#f06292")


@dataclass(frozen=True)
class Series:
    name: str
    points: Sequence[tuple[float, float]]
    color: str = ""


def human(value: float) -> str:
    """Short axis label: 950, 1.2k, 3.4M, 0.25."""
    a = abs(value)
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if a >= div:
            return f"{value / div:.1f}{suffix}"
    if a >= 100 or a == 0:
        return f"{value:.0f}"
    return f"{value:.2f}" if a < 10 else f"{value:.1f}"


def render_canvas(
    series: Sequence[Series], width: int, height: int, x_range: tuple[float, float],
    y_range: tuple[float, float], log_y: bool,
) -> list[list[tuple[str, str]]]:
    """Rows of (char, color) cells: the series drawn in braille dots."""
    bits = [[0] * width for _ in range(height)]
    colors = [[""] * width for _ in range(height)]
    px_w, px_h = width * 2, height * 4
    x0, x1 = x_range
    y0, y1 = (math.log10(v) for v in y_range) if log_y else y_range

    def to_px(x: float, y: float) -> tuple[int, int]:
        yy = math.log10(max(y, y_range[0])) if log_y else y
        fx = (x - x0) / (x1 - x0) if x1 > x0 else 1.0
        fy = (yy - y0) / (y1 - y0) if y1 > y0 else 0.0
        px = min(px_w - 1, max(0, round(fx * (px_w - 1))))
        py = min(px_h - 1, max(0, round((1 - fy) * (px_h - 1))))
        return px, py

    for index, s in enumerate(series):
        color = s.color or PALETTE[index % len(PALETTE)]
        previous: tuple[int, int] | None = None
        for x, y in s.points:
            px, py = to_px(x, y)
            if previous is not None and px - previous[0] <= 2:
                lo, hi = sorted((previous[1], py))
                cells = [(px, yy) for yy in range(lo, hi + 1)]
            else:
                cells = [(px, py)]
            for cx, cy in cells:
                bits[cy // 4][cx // 2] |= DOTS[cy % 4][cx % 2]
                colors[cy // 4][cx // 2] = color
            previous = (px, py)
    return [
        [(chr(0x2800 + b) if b else " ", c) for b, c in zip(brow, crow, strict=True)]
        for brow, crow in zip(bits, colors, strict=True)
    ]


class LineChart(Widget):
    """Title and legend on top, y labels on the left, the time span below."""

    DEFAULT_CSS = """
    LineChart { height: 1fr; min-height: 5; border: round $panel; padding: 0 1; }
    """
    log_y: reactive[bool] = reactive(False)

    def __init__(self, title: str, unit: str = "", *, y_max: float | None = None,
                 id: str | None = None) -> None:
        super().__init__(id=id)
        self.y_max = y_max  # a fixed top (100 for percentages)
        self.border_title = title
        self.unit = unit
        self.series: list[Series] = []
        self.x_range: tuple[float, float] = (0.0, 1.0)
        self.x_labels: tuple[str, str] = ("", "")

    def set_data(self, series: list[Series], x_range: tuple[float, float],
                 labels: tuple[str, str] | None = None) -> None:
        """`labels`: what the left and right ends of the x axis say (default: -span, now)."""
        self.series, self.x_range = series, x_range
        span = x_range[1] - x_range[0]
        self.x_labels = labels or (f"-{human(span)}s" if span > 0 else "", "now")
        self.refresh()

    def _y_range(self) -> tuple[float, float]:
        values = [y for s in self.series for _x, y in s.points]
        if self.log_y:
            positive = [v for v in values if v > 0] or [1.0]
            lo = 10 ** math.floor(math.log10(min(positive)))
            hi = 10 ** math.ceil(math.log10(max(positive)))
            return lo, max(hi, lo * 10)
        if self.y_max is not None:
            return 0.0, self.y_max
        top = max(values, default=1.0) or 1.0
        return 0.0, top * 1.1

    def render(self) -> Text:
        width = max(4, self.content_size.width - LABEL_W)
        height = max(1, self.content_size.height - 2)
        text = Text(no_wrap=True, overflow="crop")
        for index, s in enumerate(self.series):
            color = s.color or PALETTE[index % len(PALETTE)]
            last = s.points[-1][1] if s.points else None
            text.append("● ", style=color)
            text.append(f"{s.name} {human(last) if last is not None else '-'}{self.unit}  ")
        if self.log_y:
            text.append("(log)", style="dim")
        text.append("\n")
        if not any(s.points for s in self.series):
            text.append("no data in this window\n" + "\n" * (height - 1), style="dim")
        else:
            y_lo, y_hi = self._y_range()
            rows = render_canvas(self.series, width, height, self.x_range, (y_lo, y_hi), self.log_y)
            for r, row in enumerate(rows):
                label = human(y_hi) if r == 0 else human(y_lo) if r == height - 1 else ""
                text.append(f"{label:>{LABEL_W - 1}} ", style="dim")
                for char, color in row:
                    text.append(char, style=color or None)
                text.append("\n")
        left, right = self.x_labels
        gap = " " * max(1, width - len(left) - len(right))
        text.append(" " * LABEL_W + left + gap + right, style="dim")
        return text
