"""A braille line chart: several series over time, linear or log y, no dependencies.

Rendering is a pure function of (series, size, scale, style), so snapshots are
stable. The chart draws its lines once per change of data or size (the Line API,
one cached Strip per row), so a repaint of the screen costs it nothing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from rich.segment import Segment
from rich.style import Style
from textual.reactive import reactive
from textual.strip import Strip
from textual.widget import Widget

DOTS = ((0x01, 0x08), (0x02, 0x10), (0x04, 0x20), (0x40, 0x80))  # [row][col] braille bits
_DOTS = np.array(DOTS, dtype=np.int64)
LABEL_W = 8
PALETTE = ("#4fc3f7", "#ffb74d", "#81c784", "#e57373", "#ba68c8", "#fff176", "#4db6ac", "#f06292")
JOIN_GAP = 2.5  # points further apart than this many sample steps are not joined


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


def _pixels(xs: np.ndarray, sid: np.ndarray, px: np.ndarray, py: np.ndarray,
            nseries: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """All series' points plus the pixels of straight lines between neighbours of one
    series that are at most JOIN_GAP of that series' sampling steps apart."""
    if xs.size < 2:
        return px, py, sid
    same = sid[1:] == sid[:-1]
    dx = np.diff(xs)
    step = np.full(nseries, np.inf)  # each series' smallest positive gap
    ok = same & (dx > 0)
    np.minimum.at(step, sid[1:][ok], dx[ok])
    joined = same & (dx <= step[sid[1:]] * JOIN_GAP)
    ax, ay, bx, by = px[:-1][joined], py[:-1][joined], px[1:][joined], py[1:][joined]
    if not ax.size:
        return px, py, sid
    steps = np.maximum(np.maximum(np.abs(bx - ax), np.abs(by - ay)), 1)
    seg = np.repeat(np.arange(steps.size), steps)
    t = (np.arange(int(steps.sum())) - np.repeat(np.cumsum(steps) - steps, steps) + 1) / steps[seg]
    qx = np.rint(ax[seg] + (bx - ax)[seg] * t).astype(np.int64)
    qy = np.rint(ay[seg] + (by - ay)[seg] * t).astype(np.int64)
    return (np.concatenate([px, qx]), np.concatenate([py, qy]),
            np.concatenate([sid, sid[1:][joined][seg]]))


def render_canvas(
    series: Sequence[Series], width: int, height: int, x_range: tuple[float, float],
    y_range: tuple[float, float], log_y: bool,
) -> list[list[tuple[str, str]]]:
    """Rows of (text, color) runs: each series drawn as braille lines joining its points
    (points further apart than JOIN_GAP sampling steps stay unjoined); where series
    cross, a cell takes the colour of the later series. All series in one numpy pass."""
    px_w, px_h = width * 2, height * 4
    x0, x1 = x_range
    y0, y1 = (math.log10(v) for v in y_range) if log_y else y_range
    fx = (px_w - 1) / (x1 - x0) if x1 > x0 else 0.0
    fy = (px_h - 1) / (y1 - y0) if y1 > y0 else 0.0
    colors = [s.color or PALETTE[i % len(PALETTE)] for i, s in enumerate(series)]
    chunks = [np.asarray(s.points, dtype=np.float64).reshape(-1, 2) for s in series]
    points = np.concatenate(chunks) if chunks else np.zeros((0, 2))
    sid = np.repeat(np.arange(len(chunks)), [c.shape[0] for c in chunks])
    xs, ys = points[:, 0], points[:, 1]
    if log_y:
        ys = np.log10(np.maximum(ys, y_range[0]))
    px = np.clip(np.rint((xs - x0) * fx), 0, px_w - 1) if fx else np.full(xs.size, px_w - 1.0)
    py = np.clip(np.rint((px_h - 1) - (ys - y0) * fy), 0, px_h - 1) if fy else np.full(
        xs.size, px_h - 1.0)
    px, py, sid = _pixels(xs, sid, px.astype(np.int64), py.astype(np.int64), len(chunks))
    bits = np.zeros((height, width), np.int64)
    owner = np.full((height, width), -1, np.int64)
    cells = (py >> 2, px >> 1)
    np.bitwise_or.at(bits, cells, _DOTS[py & 3, px & 1])
    np.maximum.at(owner, cells, sid)
    chars = np.where(bits > 0, bits + 0x2800, 0x20)
    rows = []
    for r in range(height):
        text = "".join(map(chr, chars[r].tolist()))
        line = owner[r].tolist()
        cuts = [0, *(np.flatnonzero(np.diff(owner[r])) + 1).tolist(), width]
        rows.append([(text[a:b], colors[line[a]] if line[a] >= 0 else "")
                     for a, b in zip(cuts, cuts[1:], strict=False) if b > a])
    return rows


class LineChart(Widget):
    """Title in the border, a legend on top, y labels on the left, the time span below."""

    DEFAULT_CSS = """
    LineChart {
        height: 1fr; width: 1fr; min-height: 5; border: round $panel; padding: 0 1;
        border-title-color: $text-accent;
    }
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
        self._lines: list[Strip] = []
        self._lines_key: tuple[object, ...] | None = None

    def set_data(self, series: list[Series], x_range: tuple[float, float],
                 labels: tuple[str, str] | None = None) -> None:
        """`labels`: what the left and right ends of the x axis say (default: -span, now)."""
        self.series, self.x_range = series, x_range
        span = x_range[1] - x_range[0]
        self.x_labels = labels or (f"-{human(span)}s" if span > 0 else "", "now")
        self._lines_key = None
        self.refresh()

    def watch_log_y(self, log_y: bool) -> None:
        self._lines_key = None
        self.border_subtitle = "log y" if log_y else ""  # in the border: never cut off

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

    def lines(self, width: int, height: int) -> list[list[tuple[str, str]]]:
        """The chart as rows of (text, color) runs: color "" is plain, "dim" is dim."""
        plot_w = max(4, width - LABEL_W)
        plot_h = max(1, height - 2)
        legend: list[tuple[str, str]] = []
        for index, s in enumerate(self.series):
            color = s.color or PALETTE[index % len(PALETTE)]
            last = s.points[-1][1] if s.points else None
            legend += [("● ", color),
                       (f"{s.name} {human(last) if last is not None else '-'}{self.unit}  ", "")]
        rows = [legend]
        if not any(s.points for s in self.series):
            rows.append([("no data in this window", "dim")])
            rows += [[] for _ in range(plot_h - 1)]
        else:
            y_lo, y_hi = self._y_range()
            canvas = render_canvas(self.series, plot_w, plot_h, self.x_range, (y_lo, y_hi),
                                   self.log_y)
            for r, row in enumerate(canvas):
                label = human(y_hi) if r == 0 else human(y_lo) if r == plot_h - 1 else ""
                rows.append([(f"{label:>{LABEL_W - 1}} ", "dim"), *row])
        left, right = self.x_labels
        gap = " " * max(1, plot_w - len(left) - len(right))
        rows.append([(" " * LABEL_W + left + gap + right, "dim")])
        return rows

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._lines_key = None  # a new theme: new colours

    def render_line(self, y: int) -> Strip:
        width, height = self.content_size
        key = (width, height)
        if key != self._lines_key:
            base = self.rich_style
            styles = {"": base, "dim": base + Style(dim=True)}
            self._lines = []
            for row in self.lines(width, height):
                segments = []
                for text, color in row:
                    style = styles.get(color)
                    if style is None:
                        style = styles[color] = base + Style(color=color)
                    segments.append(Segment(text, style))
                self._lines.append(Strip(segments).crop_extend(0, width, base))
            self._lines_key = key
        if y < len(self._lines):
            return self._lines[y]
        return Strip.blank(width)
