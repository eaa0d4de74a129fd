"""The report's charts as plotly.js figures (dicts: ``data``, ``layout``), from the rows the
store's read API gives. Drawing is plotly_inline's; the page's layout is report_html's.

Readable first: each phase is a small chart of its own (its own throughput scale, so a
load's 22k ops/s does not flatten a 10 ops/s mix), latency axes are logarithmic, each
node has its own CPU/RAM chart, engines are bars side by side. Every name from the store
(op, phase, host, target) goes through `text` (the report's escaping) before it is put
in a figure: plotly.js reads a few HTML tags and entities in its labels.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from loadtower.store.engine_compare import TOTAL
from loadtower.store.ramp_steps import SEP, ramp_of
from loadtower.store.workload_throughput import OPS, ROWS, phase_unit, rate_of, workload_totals

Figure = dict[str, Any]
Text = Callable[[str], str]

COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
          "#17becf", "#7f7f7f", "#bcbd22"]  # fmt: skip
# ops get colors of their own, so that an op is never read as an engine
OP_COLORS = ["#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f",
             "#d62728"]  # fmt: skip
LOG_MS = {"type": "log", "title": {"text": "ms (log)"}, "automargin": True}


def _num(v: Any) -> float | None:
    """A plottable number: None for a missing, NaN or infinite value, or a latency <= 0
    (a log axis cannot place it)."""
    if v is None or isinstance(v, bool):
        return None
    f = float(v)
    return f if math.isfinite(f) else None


def _pos(v: Any) -> float | None:
    f = _num(v)
    return f if f is not None and f > 0 else None


def color_of(names: list[str], palette: list[str] = COLORS) -> dict[str, str]:
    return {name: palette[i % len(palette)] for i, name in enumerate(names)}


def display_phase(name: str, names: set[str]) -> str:
    """The phase a per-second row is drawn in: a ramp step's is its ramp."""
    return ramp_of(name, names) or name


def phase_figures(
    ops: list[dict[str, Any]], phases: list[dict[str, Any]], text: Text
) -> list[tuple[str, Figure]]:
    """Per phase with ops (a ramp with all its steps): throughput per op on its own scale
    (top) and p99 per op on a log axis (bottom), seconds from the phase's first second."""
    names = {p["name"] for p in phases}
    grouped: dict[str, list[dict[str, Any]]] = {}
    for row in ops:
        grouped.setdefault(display_phase(row["phase"], names), []).append(row)
    op_names = sorted({r["op"] for r in ops})
    colors = color_of(op_names, OP_COLORS)
    out = []
    for phase, rows in grouped.items():
        t0 = min(r["ts"] for r in rows)
        data: list[dict[str, Any]] = []
        for op in op_names:
            mine = [r for r in rows if r["op"] == op]
            if not mine:
                continue
            xs = [r["ts"] - t0 for r in mine]
            style = {"color": colors[op]}
            data.append({"type": "scatter", "mode": "lines", "name": text(op), "x": xs,
                         "y": [_num(r["ops"]) for r in mine], "line": style,
                         "legendgroup": text(op), "xaxis": "x", "yaxis": "y"})  # fmt: skip
            data.append({"type": "scatter", "mode": "lines", "name": text(op), "x": xs,
                         "y": [_pos(r["p99_ms"]) for r in mine], "line": style,
                         "legendgroup": text(op), "showlegend": False, "xaxis": "x2",
                         "yaxis": "y2"})  # fmt: skip
        shapes = _step_marks(rows, names, t0, text)
        layout = {
            "title": {"text": f"<b>{text(phase)}</b>", "x": 0.01, "font": {"size": 13}},
            "yaxis": {"domain": [0.56, 1.0], "title": {"text": "ops/s"}, "rangemode": "tozero",
                      "automargin": True},
            "yaxis2": {**LOG_MS, "domain": [0.0, 0.44], "title": {"text": "p99 ms (log)"}},
            "xaxis": {"anchor": "y", "showticklabels": False},
            "xaxis2": {"anchor": "y2", "matches": "x", "title": {"text": "s from phase start"}},
            "legend": {"orientation": "h", "y": -0.25, "font": {"size": 10}},
            "shapes": shapes,
        }  # fmt: skip
        out.append((phase, {"data": data, "layout": layout}))
    return out


def _step_marks(
    rows: list[dict[str, Any]], names: set[str], t0: float, text: Text
) -> list[dict[str, Any]]:
    """A dotted line where each of a ramp's steps starts, labelled with its level."""
    starts: dict[str, float] = {}
    for r in rows:
        if ramp_of(r["phase"], names) is not None:
            starts[r["phase"]] = min(starts.get(r["phase"], r["ts"]), r["ts"])
    return [
        {"type": "line", "xref": "x", "yref": "paper", "x0": ts - t0, "x1": ts - t0, "y0": 0,
         "y1": 1, "line": {"dash": "dot", "color": "#999", "width": 1},
         "label": {"text": text(SEP + label.rsplit(SEP, 1)[-1]), "textposition": "end",
                   "font": {"size": 10, "color": "#666"}, "textangle": 0, "xanchor": "left"}}
        for label, ts in sorted(starts.items(), key=lambda kv: kv[1])
    ]  # fmt: skip


def node_figures(
    nodes: list[dict[str, Any]], bands: list[tuple[float, float, str]], text: Text
) -> list[tuple[str, Figure]]:
    """Per node: CPU and RAM used (%, 0-100) over the run, phases shaded."""
    hosts: dict[str, list[dict[str, Any]]] = {}
    for row in nodes:
        hosts.setdefault(str(row["host"]), []).append(row)
    shapes = [
        {"type": "rect", "xref": "x", "yref": "paper", "x0": a, "x1": b, "y0": 0, "y1": 1,
         "fillcolor": "#f2f2f2" if i % 2 == 0 else "#e6eef7", "line": {"width": 0},
         "layer": "below"}
        for i, (a, b, _name) in enumerate(bands)
    ]  # fmt: skip
    out = []
    for host, rows in hosts.items():
        xs = [r["ts"] for r in rows]
        data = [
            {"type": "scatter", "mode": "lines", "name": "CPU %", "x": xs,
             "y": [_num(r["cpu_pct"]) for r in rows], "line": {"color": COLORS[0]}},
            {"type": "scatter", "mode": "lines", "name": "RAM used %", "x": xs,
             "y": [_num(r["mem_pct"]) for r in rows], "line": {"color": COLORS[1]}},
        ]  # fmt: skip
        layout = {
            "title": {"text": f"<b>{text(host)}</b>", "x": 0.01, "font": {"size": 13}},
            "yaxis": {"range": [0, 105], "title": {"text": "%"}},
            "xaxis": {"title": {"text": "s from run start"}},
            "legend": {"orientation": "h", "y": -0.3, "font": {"size": 10}},
            "shapes": shapes,
        }
        out.append((host, {"data": data, "layout": layout}))
    return out


def curve_figure(points: list[dict[str, Any]], target_p99_ms: float | None, text: Text) -> Figure:
    """Study 2's figure: p90 and p99 against achieved ops/s, one color per target (p99
    solid, p90 dashed), failed steps marked x, the latency target dotted."""
    targets = list(dict.fromkeys(str(p["target"]) for p in points))
    colors = color_of(targets)
    data = []
    for target in targets:
        mine = [p for p in points if str(p["target"]) == target]
        symbols = ["circle" if p["passed"] is not False else "x" for p in mine]
        for key, dash in (("p99_ms", "solid"), ("p90_ms", "dash")):
            data.append({
                "type": "scatter", "mode": "lines+markers",
                "name": f"{text(target)} {key[:3]}", "x": [_num(p["ops_per_s"]) for p in mine],
                "y": [_pos(p[key]) for p in mine],
                "text": [text(str(p["label"])) for p in mine],
                "line": {"color": colors[target], "dash": dash},
                "marker": {"symbol": symbols, "size": 8},
            })  # fmt: skip
    shapes = []
    if target_p99_ms:
        shapes.append({"type": "line", "xref": "paper", "x0": 0, "x1": 1, "y0": target_p99_ms,
                       "y1": target_p99_ms, "line": {"dash": "dot", "color": "#d62728"},
                       "label": {"text": f"target p99 {target_p99_ms:g} ms",
                                 "textposition": "end", "font": {"size": 10}}})  # fmt: skip
    layout = {
        "title": {"text": "<b>Latency against throughput</b> (x: failed step)", "x": 0.01},
        "xaxis": {"title": {"text": "Achieved throughput (ops/s)"}, "rangemode": "tozero"},
        "yaxis": LOG_MS,
        "shapes": shapes,
    }
    return {"data": data, "layout": layout}


def _bars(rows: list[dict[str, Any]], x_key: str, key: str, colors: dict[str, str],
          axis: str, show: bool, text: Text, hover_key: str | None = None,
          ) -> list[dict[str, Any]]:  # fmt: skip
    """One bar trace per side; `hover_key`: each row's hover text (its value, unit said)."""
    out = []
    for side, color in colors.items():
        mine = [r for r in rows if r["target"] == side]
        bar = {
            "type": "bar", "name": text(side), "x": [text(str(r[x_key])) for r in mine],
            "y": [_num(r[key]) for r in mine], "marker": {"color": color},
            "legendgroup": text(side), "showlegend": show, "xaxis": f"x{axis}",
            "yaxis": f"y{axis}",
        }  # fmt: skip
        if hover_key is not None:
            bar |= {"hovertext": [r[hover_key] for r in mine], "hoverinfo": "name+x+text"}
        out.append(bar)
    return out


def engine_figures(rows: list[dict[str, Any]], text: Text) -> list[tuple[str, Figure]]:
    """Study 1's table as bars: per workload phase run on two or more targets, each op's
    throughput, median and p90 (log) per engine side by side."""
    sides = list(dict.fromkeys(r["target"] for r in rows))
    colors = color_of(sides)
    out = []
    for phase in dict.fromkeys(r["phase"] for r in rows):
        mine = [r for r in rows if r["phase"] == phase and r["op"] != TOTAL]
        if SEP in phase or len({r["target"] for r in mine}) < 2:
            continue
        data = []
        panels = (("ops_per_s", "Throughput (ops/s)", False), ("median_ms", "Median (ms, log)",
                  True), ("p90_ms", "p90 (ms, log)", True))  # fmt: skip
        layout: dict[str, Any] = {
            "title": {"text": f"<b>{text(phase)}</b>: per op and engine", "x": 0.01},
            "barmode": "group", "legend": {"orientation": "h", "y": -0.2},
        }  # fmt: skip
        for i, (key, title, log) in enumerate(panels):
            axis = "" if i == 0 else str(i + 1)
            data += _bars(mine, "op", key, colors, axis, i == 0, text)
            layout[f"xaxis{axis}"] = {"domain": [i / 3 + 0.03, (i + 1) / 3 - 0.03],
                                      "anchor": f"y{axis}"}  # fmt: skip
            layout[f"yaxis{axis}"] = {"anchor": f"x{axis}", "title": {"text": title},
                                      **({"type": "log"} if log else {})}  # fmt: skip
        out.append((phase, {"data": data, "layout": layout}))
    return out


def workload_figure(rows: list[dict[str, Any]], text: Text) -> Figure | None:
    """Study 4's figure: each workload phase's throughput (ops/s) per engine, a panel per
    workload on its own scale; a load where an engine loads blocks of rows in rows/s
    (workload_throughput.rate_of: a block load's rows/s, a row-per-op load's ops/s), its
    axis and bars saying so. None when the run has fewer than two targets."""
    totals = workload_totals(rows)
    sides = list(dict.fromkeys(r["target"] for r in totals))
    if len(sides) < 2:
        return None
    colors = color_of(sides)
    workloads = list(dict.fromkeys(r["phase"] for r in totals))
    data: list[dict[str, Any]] = []
    layout: dict[str, Any] = {"title": {"text": "<b>Throughput per workload and engine</b> "
                                                "(ops/s, a load of blocks of rows in rows/s; "
                                                "each on its own scale)", "x": 0.01},
                              "barmode": "group", "legend": {"orientation": "h", "y": -0.2}}  # fmt: skip
    width = 1 / len(workloads)
    for i, phase in enumerate(workloads):
        axis = "" if i == 0 else str(i + 1)
        mine = [r for r in totals if r["phase"] == phase]
        unit = phase_unit(mine)
        bars = [{**r, "bar_x": _panel_label(phase, unit), "bar_rate": rate_of(r, unit),
                 "bar_text": _rate_text(r, unit)} for r in mine]  # fmt: skip
        data += _bars(bars, "bar_x", "bar_rate", colors, axis, i == 0, text, "bar_text")
        layout[f"xaxis{axis}"] = {"domain": [i * width + 0.02, (i + 1) * width - 0.02],
                                  "anchor": f"y{axis}"}  # fmt: skip
        layout[f"yaxis{axis}"] = {"anchor": f"x{axis}", "rangemode": "tozero"}
        if i == 0 or unit == ROWS:
            layout[f"yaxis{axis}"]["title"] = {"text": unit}
    return {"data": data, "layout": layout}


def _panel_label(phase: str, unit: str) -> str:
    """A workload panel's x label (raw: `_bars` escapes it): its phase, ``load (rows/s)``
    when it compares rows."""
    return phase + (f" ({ROWS})" if unit == ROWS else "")


def _rate_text(row: dict[str, Any], unit: str) -> str:
    """A bar's hover text: ``1,000.0 rows/s (10.0 ops/s, blocks of rows)``, ``500.0 rows/s
    (a row per op)``, ``500.0 ops/s``; the figures as workload_throughput prints them."""
    if unit == OPS:
        return f"{row['ops_per_s']:,.1f} {OPS}"
    if row.get("rows_per_s") is None:
        return f"{rate_of(row, unit):,.1f} {ROWS} (a row per op)"
    return f"{rate_of(row, unit):,.1f} {ROWS} ({row['ops_per_s']:,.1f} {OPS}, blocks of rows)"


def ttl_figure(summary: list[dict[str, Any]], text: Text) -> Figure | None:
    """Study 3's figure: per table, the read p99 of its first read phase (before) and its
    last (after), on a linear axis (two bars read as a ratio), the tombstones per read
    (p99) above them; None without two read phases on a table (the tables come from
    an engine's tombstones figures, table_reads.py)."""
    by_table: dict[str, list[dict[str, Any]]] = {}
    for row in summary:
        if row.get("tombstones_table") and row["op"] == "read":
            by_table.setdefault(str(row["tombstones_table"]), []).append(row)
    pairs = {t: (rows[0], rows[-1]) for t, rows in by_table.items() if len(rows) >= 2}
    if not pairs:
        return None
    data = []
    for index, (name, color) in enumerate((("before", COLORS[0]), ("after", COLORS[3]))):
        chosen = [pair[index] for pair in pairs.values()]
        data.append({
            "type": "bar", "name": name, "x": [text(t) for t in pairs],
            "y": [_num(r["p99_ms"]) for r in chosen], "marker": {"color": color},
            "text": [f"{text(str(r['phase']))}: {_num(r['p99_ms']) or 0:.1f} ms, tombstones/read "
                     f"p99 {_num(r.get('tombstones_p99')) or 0:g}" for r in chosen],
            "textposition": "outside", "cliponaxis": False,
        })  # fmt: skip
    layout = {"title": {"text": "<b>Read p99 before and after, per table</b> (its first and "
                                "last read phase)", "x": 0.01},
              "barmode": "group", "uniformtext": {"minsize": 10, "mode": "show"},
              "yaxis": {"title": {"text": "p99 (ms)"}, "rangemode": "tozero"}}  # fmt: skip
    return {"data": data, "layout": layout}
