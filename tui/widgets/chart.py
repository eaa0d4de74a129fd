"""A braille line chart: several series over time, linear or log y, no dependencies.

Rendering is a pure function of (series, band, size, scale, style), so snapshots are
stable. The chart draws its lines once per change of data or size (the Line API,
one cached Strip per row), so a repaint of the screen costs it nothing.

Many series stay legible: a band (min..max of many hosts, shaded) can go under the
lines, and a legend that does not fit shortens names with "…" and then ends in
"+N more" instead of being cut off.

Phases of very different rates share a chart without one flattening the other: given
the run's segments (its phases, or a ramp's steps), each stretch of the window whose
values differ from its neighbours' by more than SCALE_STEP times gets its own y scale.
A scale change is drawn as a dotted column at the segment's start with the new top
beside it ("┊10.2k"); the y labels on the left are those of the first stretch. The
scales are public (`LineChart.scales`), so tests and readers can tell what is shown.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from rich.segment import Segment
from rich.style import Style
from textual.reactive import reactive
from textual.strip import Strip
from textual.widget import Widget

from loadtower.store.terminal_text import visible

DOTS = ((0x01, 0x08), (0x02, 0x10), (0x04, 0x20), (0x40, 0x80))  # [row][col] braille bits
_DOTS = np.array(DOTS, dtype=np.int64)
LABEL_W = 8
PALETTE = ("#4fc3f7", "#ffb74d", "#81c784", "#e57373", "#ba68c8", "#fff176", "#4db6ac", "#f06292")
JOIN_GAP = 2.5  # points further apart than this many sample steps are not joined
BAND_COLOR = "#56606b"
MIN_NAME = 6  # a legend name is not shortened below this many cells ("inser…")
SCALE_STEP = 2.0  # neighbouring stretches whose tops differ less than this share a scale
HEADROOM = 1.1  # the top of a linear scale: the highest value plus 10%
BOUNDARY = "┊"


@dataclass(frozen=True)
class Series:
    name: str
    points: Sequence[tuple[float, float]] | npt.NDArray[np.float64]
    color: str = ""
    in_legend: bool = True


@dataclass(frozen=True)
class Band:
    """A shaded range under the lines: rows of (x, low, middle, high)."""

    name: str
    points: Sequence[Sequence[float]] | npt.NDArray[np.float64]
    color: str = BAND_COLOR


LegendItem = tuple[str, str, str, str]  # (glyph, colour, name, value)


@dataclass(frozen=True)
class Span:
    """A stretch of the run with a name (a phase, or a ramp step): [start, end)."""

    start: float
    end: float
    name: str


@dataclass(frozen=True)
class Scale:
    """One y scale of the chart over the x stretch [x_lo, x_hi), and the segments it covers."""

    x_lo: float
    x_hi: float
    y_lo: float
    y_hi: float
    names: tuple[str, ...] = ()


def stretch_tops(series: Sequence[Series], cuts: Sequence[float], x_range: tuple[float, float]
                 ) -> list[float | None]:
    """The highest value of any series in each stretch [cuts[k], cuts[k+1]) (None: no data)."""
    edges = [x_range[0], *cuts, x_range[1] + 1e-9]
    tops: list[float | None] = [None] * (len(edges) - 1)
    for s in series:
        pts = np.asarray(s.points, dtype=np.float64).reshape(-1, 2)
        if not pts.size:
            continue
        index = np.searchsorted(edges, pts[:, 0], side="right") - 1
        for k in range(len(tops)):
            values = pts[index == k, 1]
            if values.size:
                top, before = float(values.max()), tops[k]
                tops[k] = top if before is None else max(before, top)
    return tops


def split_scales(series: Sequence[Series], segments: Sequence[Span],
                 x_range: tuple[float, float]) -> list[Scale] | None:
    """Linear scales per group of neighbouring segments in `x_range` whose tops are within
    SCALE_STEP of each other; None when one scale fits all."""
    x0, x1 = x_range
    inside = sorted((g for g in segments if g.end > x0 and g.start < x1), key=lambda g: g.start)
    if len(inside) < 2:
        return None
    cuts = [max(g.start, x0) for g in inside[1:]]
    # a stretch with no data, or only zeros (no ops, no latency), takes its neighbour's scale
    tops = [t if t is not None and t > 0 else None for t in stretch_tops(series, cuts, x_range)]
    los = [x0, *cuts]
    his = [*cuts, x1]
    groups: list[list[int]] = []
    for k, top in enumerate(tops):
        if top is None and groups:  # no data: part of the stretch before it
            groups[-1].append(k)
            continue
        if groups:
            known = [t for t in (tops[i] for i in groups[-1]) if t is not None]
            if top is None or not known:
                groups[-1].append(k)
                continue
            lo, hi = min(min(known), top), max(max(known), top)
            if hi <= SCALE_STEP * max(lo, 1e-12):
                groups[-1].append(k)
                continue
        groups.append([k])
    if len(groups) < 2:
        return None
    scales = []
    for group in groups:
        known = [t for t in (tops[i] for i in group) if t is not None]
        top = max(known) if known else 1.0
        scales.append(Scale(los[group[0]], his[group[-1]], 0.0, (top or 1.0) * HEADROOM,
                            tuple(inside[i].name for i in group)))
    return scales


def _cells(row: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(ch, color) for text, color in row for ch in text]


def _runs_of(cells: list[tuple[str, str]]) -> list[tuple[str, str]]:
    runs: list[tuple[str, str]] = []
    for ch, color in cells:
        if runs and runs[-1][1] == color:
            runs[-1] = (runs[-1][0] + ch, color)
        else:
            runs.append((ch, color))
    return runs


def legend_runs(items: Sequence[LegendItem], width: int) -> list[tuple[str, str]]:
    """The legend as (text, colour) runs in `width` cells: whole if it fits, else with
    names shortened with "…" (to MIN_NAME at the least), else the first items that
    fit and "+N more"."""

    def runs(shown: Sequence[LegendItem], name_w: int | None) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        for glyph, color, name, value in shown:
            if name_w is not None and len(name) > name_w:
                name = name[: name_w - 1] + "…"
            out += [(f"{glyph} ", color), (f"{name} {value}  ", "")]
        return out

    def length(shown: Sequence[LegendItem], name_w: int | None) -> int:
        return sum(3 + len(v) + (len(n) if name_w is None else min(len(n), name_w))
                   for _g, _c, n, v in shown) + 2 * max(0, len(shown) - 1)

    if length(items, None) <= width:
        return runs(items, None)
    longest = max(len(n) for _g, _c, n, _v in items)
    for name_w in range(longest - 1, MIN_NAME - 1, -1):
        if length(items, name_w) <= width:
            return runs(items, name_w)
    for count in range(len(items) - 1, -1, -1):
        more = f"+{len(items) - count} more"
        name_w = max(MIN_NAME, min(12, longest))
        if length(items[:count], name_w) + (2 if count else 0) + len(more) <= width:
            return [*runs(items[:count], name_w), (more, "dim")]
    return [(f"+{len(items)} more"[:width], "dim")]


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


def _band_bits(band: Band, px_w: int, px_h: int, to_px: object, to_py: object) -> np.ndarray:
    """Braille bits of the band's area (a checkerboard of dots, so lines over it show)."""
    pts = np.asarray(band.points, dtype=np.float64).reshape(-1, 4)
    bits = np.zeros((px_h // 4, px_w // 2), np.int64)
    if not pts.size:
        return bits
    bx = to_px(pts[:, 0])  # type: ignore[operator]
    top, bottom = to_py(pts[:, 3]), to_py(pts[:, 1])  # type: ignore[operator]
    cols = np.arange(px_w)
    inside = (cols >= np.floor(bx.min())) & (cols <= np.ceil(bx.max()))
    order = np.argsort(bx, kind="stable")
    hi = np.interp(cols, bx[order], top[order])
    lo = np.interp(cols, bx[order], bottom[order])
    rows = np.arange(px_h)[:, None]
    mask = inside & (rows >= np.floor(hi)) & (rows <= np.ceil(lo)) & ((rows + cols) % 2 == 0)
    py, px = np.nonzero(mask)
    np.bitwise_or.at(bits, (py >> 2, px >> 1), _DOTS[py & 3, px & 1])
    return bits


def render_canvas(
    series: Sequence[Series], width: int, height: int, x_range: tuple[float, float],
    y_range: tuple[float, float], log_y: bool, band: Band | None = None,
) -> list[list[tuple[str, str]]]:
    """Rows of (text, color) runs: each series drawn as braille lines joining its points
    (points further apart than JOIN_GAP sampling steps stay unjoined); where series
    cross, a cell takes the colour of the later series. All series in one numpy pass.
    A band, if any, is shaded under the lines (a cell with a line in it shows the line)."""
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

    def to_px(x: np.ndarray) -> np.ndarray:
        return np.clip(np.rint((x - x0) * fx), 0, px_w - 1) if fx else np.full(x.size, px_w - 1.0)

    def to_py(y: np.ndarray) -> np.ndarray:
        if log_y:
            y = np.log10(np.maximum(y, y_range[0]))
        return np.clip(np.rint((px_h - 1) - (y - y0) * fy), 0, px_h - 1) if fy else np.full(
            y.size, px_h - 1.0)

    px, py = to_px(xs), to_py(ys)
    px, py, sid = _pixels(xs, sid, px.astype(np.int64), py.astype(np.int64), len(chunks))
    bits = np.zeros((height, width), np.int64)
    owner = np.full((height, width), -1, np.int64)
    cells = (py >> 2, px >> 1)
    np.bitwise_or.at(bits, cells, _DOTS[py & 3, px & 1])
    np.maximum.at(owner, cells, sid)
    if band is not None:
        shade = _band_bits(band, px_w, px_h, to_px, to_py)
        under = (bits == 0) & (shade > 0)
        bits = np.where(under, shade, bits)
        owner = np.where(under, len(colors), owner)
        colors.append(band.color)
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
        self.band: Band | None = None
        self.segments: list[Span] = []
        self.scales: list[Scale] = []  # as last drawn: one, or one per stretch of its own
        self.x_range: tuple[float, float] = (0.0, 1.0)
        self.x_labels: tuple[str, str] = ("", "")
        self._lines: list[Strip] = []
        self._lines_key: tuple[object, ...] | None = None

    def set_data(self, series: list[Series], x_range: tuple[float, float],
                 labels: tuple[str, str] | None = None, band: Band | None = None,
                 segments: Sequence[Span] = ()) -> None:
        """`labels`: what the left and right ends of the x axis say (default: -span, now).
        `band`: a shaded range under the lines (and first in the legend).
        `segments`: the run's phases (or steps): stretches of very different values get
        their own y scale (linear charts without a fixed top)."""
        self.series, self.x_range, self.band = series, x_range, band
        self.segments = list(segments)
        self.scales = self._scales()
        self._set_subtitle()
        span = x_range[1] - x_range[0]
        self.x_labels = labels or (f"-{human(span)}s" if span > 0 else "", "now")
        self._lines_key = None
        self.refresh()

    def watch_log_y(self, log_y: bool) -> None:
        self._lines_key = None
        self.scales = self._scales()
        self._set_subtitle()

    def _set_subtitle(self) -> None:
        """In the border (never cut off): a log axis, and a scale that changes."""
        notes = ["log y"] if self.log_y else []
        if len(self.scales) > 1:
            notes.append(f"{BOUNDARY} y scale per phase")
        subtitle = " · ".join(notes)
        if self.border_subtitle != subtitle:
            self.border_subtitle = subtitle

    def _scales(self) -> list[Scale]:
        if not self.log_y and self.y_max is None and self.band is None:
            split = split_scales(self.series, self.segments, self.x_range)
            if split is not None:
                return split
        return [Scale(*self.x_range, *self._y_range(), tuple(g.name for g in self.segments))]

    def _y_range(self) -> tuple[float, float]:
        chunks = [np.asarray(s.points, dtype=np.float64).reshape(-1, 2)[:, 1]
                  for s in self.series]
        if self.band is not None:
            pts = np.asarray(self.band.points, dtype=np.float64).reshape(-1, 4)
            chunks += [pts[:, 1], pts[:, 3]]
        values = np.concatenate(chunks) if chunks else np.zeros(0)
        if self.log_y:
            positive = values[values > 0]
            lo = 10 ** math.floor(math.log10(float(positive.min()) if positive.size else 1.0))
            hi = 10 ** math.ceil(math.log10(float(positive.max()) if positive.size else 1.0))
            return lo, max(hi, lo * 10)
        if self.y_max is not None:
            return 0.0, self.y_max
        top = float(values.max()) if values.size else 1.0
        return 0.0, (top or 1.0) * HEADROOM

    def lines(self, width: int, height: int) -> list[list[tuple[str, str]]]:
        """The chart as rows of (text, color) runs: color "" is plain, "dim" is dim."""
        plot_w = max(4, width - LABEL_W)
        plot_h = max(1, height - 2)
        items: list[LegendItem] = []
        if self.band is not None and len(self.band.points):
            _x, low, middle, high = self.band.points[-1][:4]
            unit = self.unit
            items.append(("▒", self.band.color, visible(self.band.name, False),
                          f"{human(low)}–{human(high)}{unit} med {human(middle)}{unit}"))
        for index, s in enumerate(self.series):
            if not s.in_legend:
                continue
            color = s.color or PALETTE[index % len(PALETTE)]
            last = float(s.points[-1][1]) if len(s.points) else None
            items.append(("●", color, visible(s.name, False),
                          f"{human(last) if last is not None else '-'}{self.unit}"))
        rows = [legend_runs(items, width)]
        if not any(len(s.points) for s in self.series) and self.band is None:
            rows.append([("no data in this window", "dim")])
            rows += [[] for _ in range(plot_h - 1)]
        else:
            scales = self.scales or self._scales()
            y_lo, y_hi = scales[0].y_lo, scales[0].y_hi
            if len(scales) == 1:
                canvas = render_canvas(self.series, plot_w, plot_h, self.x_range, (y_lo, y_hi),
                                       self.log_y, self.band)
            else:
                canvas = self._split_canvas(scales, plot_w, plot_h)
            for r, row in enumerate(canvas):
                label = human(y_hi) if r == 0 else human(y_lo) if r == plot_h - 1 else ""
                rows.append([(f"{label:>{LABEL_W - 1}} ", "dim"), *row])
        left, right = self.x_labels
        gap = " " * max(1, plot_w - len(left) - len(right))
        rows.append([(" " * LABEL_W + left + gap + right, "dim")])
        return rows

    def _split_canvas(self, scales: list[Scale], width: int, height: int
                      ) -> list[list[tuple[str, str]]]:
        """The series drawn with each stretch on its own scale (values as a fraction of
        its top; lines are not joined across a scale change), a dotted column where the
        scale changes and the new top beside it."""
        parts: list[Series] = []
        for index, s in enumerate(self.series):
            color = s.color or PALETTE[index % len(PALETTE)]
            pts = np.asarray(s.points, dtype=np.float64).reshape(-1, 2)
            for k, scale in enumerate(scales):
                last = k == len(scales) - 1
                keep = (pts[:, 0] >= scale.x_lo) & ((pts[:, 0] < scale.x_hi) | last)
                if keep.any():
                    chunk = pts[keep].copy()
                    chunk[:, 1] = chunk[:, 1] / scale.y_hi
                    parts.append(Series(s.name, chunk, color))
        canvas = render_canvas(parts, width, height, self.x_range, (0.0, 1.0), False)
        x0, x1 = self.x_range
        fx = (width * 2 - 1) / (x1 - x0) if x1 > x0 else 0.0
        rows = [_cells(row) for row in canvas]
        tagged_to = 0  # a tag never covers the one before it (many short ramp steps)
        for scale in scales[1:]:
            col = min(width - 1, max(0, int(round((scale.x_lo - x0) * fx)) >> 1))
            for cells in rows:
                if cells[col][0] == " ":
                    cells[col] = (BOUNDARY, "dim")
            tag = BOUNDARY + human(scale.y_hi)
            if width - col >= len(tag) and col >= tagged_to:
                rows[0][col: col + len(tag)] = [(ch, "dim") for ch in tag]
                tagged_to = col + len(tag) + 1
        return [_runs_of(cells) for cells in rows]

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
