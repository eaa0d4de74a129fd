"""Small inline SVG line charts for the HTML report (no JavaScript, no network)."""

from __future__ import annotations

from loadtower.store.html_text import escape

COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf"]
W, H, PAD_L, PAD_R, PAD_T, PAD_B = 860, 240, 60, 150, 24, 30


def _nice_max(v: float) -> float:
    if v <= 0:
        return 1.0
    step = 10 ** len(str(int(v))) / 10 if v >= 1 else 1
    return (int(v / step) + 1) * step if v >= 1 else v * 1.1


def line_chart(
    title: str,
    series: dict[str, list[tuple[float, float]]],
    unit: str,
    bands: list[tuple[float, float, str]] | None = None,
) -> str:
    """An SVG chart of named (x, y) series; `bands` shade phases (start, end, label)."""
    points = [p for pts in series.values() for p in pts if p[1] is not None]
    out = [f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
           f'viewBox="0 0 {W} {H}"><title>{escape(title)}</title>',
           f'<text x="{PAD_L}" y="16" font-size="13" font-weight="bold">{escape(title)}</text>']  # fmt: skip
    if not points:
        out.append(f'<text x="{W / 2}" y="{H / 2}" text-anchor="middle">no data</text></svg>')
        return "".join(out)
    x0, x1 = min(p[0] for p in points), max(p[0] for p in points)
    x1 = x1 if x1 > x0 else x0 + 1
    ymax = _nice_max(max(p[1] for p in points))
    pw, ph = W - PAD_L - PAD_R, H - PAD_T - PAD_B

    def sx(x: float) -> float:
        return PAD_L + (x - x0) / (x1 - x0) * pw

    def sy(y: float) -> float:
        return PAD_T + ph - y / ymax * ph

    for i, (start, end, label) in enumerate(bands or []):
        a, b = sx(max(start, x0)), sx(min(end, x1))
        if b > a:
            fill = "#f2f2f2" if i % 2 == 0 else "#e6eef7"
            out.append(f'<rect x="{a:.1f}" y="{PAD_T}" width="{b - a:.1f}" height="{ph}" '
                       f'fill="{fill}"/><text x="{a + 3:.1f}" y="{PAD_T + 11}" font-size="10" '
                       f'fill="#666">{escape(label)}</text>')  # fmt: skip
    for k in range(5):
        y = ymax * k / 4
        out.append(f'<line x1="{PAD_L}" x2="{PAD_L + pw}" y1="{sy(y):.1f}" y2="{sy(y):.1f}" '
                   f'stroke="#ddd"/><text x="{PAD_L - 4}" y="{sy(y) + 4:.1f}" font-size="10" '
                   f'text-anchor="end">{y:g}</text>')  # fmt: skip
    out.append(f'<text x="{PAD_L}" y="{H - 8}" font-size="10">0 s</text>'
               f'<text x="{PAD_L + pw}" y="{H - 8}" font-size="10" text-anchor="end">'
               f'{x1 - x0:.0f} s</text><text x="12" y="{PAD_T + ph / 2}" font-size="10" '
               f'transform="rotate(-90 12 {PAD_T + ph / 2})">{escape(unit)}</text>')  # fmt: skip
    for i, (name, pts) in enumerate(series.items()):
        color = COLORS[i % len(COLORS)]
        path = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in pts if y is not None)
        out.append(f'<polyline fill="none" stroke="{color}" stroke-width="1.3" points="{path}"/>')
        ly = PAD_T + 12 + 14 * i
        out.append(f'<rect x="{W - PAD_R + 10}" y="{ly - 8}" width="10" height="3" '
                   f'fill="{color}"/><text x="{W - PAD_R + 24}" y="{ly - 4}" font-size="11">'
                   f'{escape(name)}</text>')  # fmt: skip
    out.append("</svg>")
    return "".join(out)
