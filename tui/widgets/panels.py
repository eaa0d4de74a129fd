"""Applying a Snapshot to the dashboard's panels: one render path for live and replay."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from rich.text import Text
from textual.widgets import RichLog

from loadtower.store.live_feed import Snapshot
from loadtower.store.terminal_text import visible
from loadtower.tui.widgets.chart import Band, LineChart, Series, Span
from loadtower.tui.widgets.event_list import Item
from loadtower.tui.widgets.timeline import Phase, TimelineData, duration

MAX_NODE_LINES = 8  # more nodes than this: the busiest few as lines, all as a band
TOP_NODES = 5
RANK_SAMPLES = 10  # "busiest" = highest mean over this many newest seconds
MEDIAN_COLOR = "#9aa5b1"
HOT_CPU = 90.0  # an agent above this is saturated: its latency figures are suspect
STATUS_STYLE = {"running": "bold green", "completed": "bold green", "failed": "bold red",
                "interrupted": "bold yellow"}


def clock(ts: float) -> str:
    return time.strftime("%H:%M:%S", time.gmtime(ts))


PERCENTILE_SETS = (("p99",), ("p90",), ("p50",), ("p50", "p90", "p99"))


def phase_progress(snap: Snapshot) -> str:
    """" 12s/60s": seconds into the phase at the cursor, of its planned length ("/8s+": a
    floor, the phase lasts as long as its work); " 12s" with no plan (a load)."""
    row = next((p for p in reversed(snap.phases)
                if p.started is not None and p.started <= snap.cursor), None)
    if row is None or row.started is None:
        return ""
    into = f" {max(0.0, snap.cursor - row.started):,.0f}s"
    if row.planned is None:
        return into
    return into + f"/{row.planned:,.0f}s" + ("" if row.planned_exact else "+")


def node_series(nodes: dict[str, list[tuple[int, float, float]]], column: int,
                what: str = "nodes") -> tuple[list[Series], Band | None]:
    """One line per node while they are few. Many: a band from the lowest to the highest
    node at each second with its median as a grey line, and the TOP_NODES busiest
    (highest over their newest RANK_SAMPLES seconds) as lines over it."""
    hosts = sorted(h for h, pts in nodes.items() if pts)
    if len(hosts) <= MAX_NODE_LINES:
        return [Series(h, [(p[0], p[column]) for p in nodes[h]]) for h in hosts], None
    arrays = {h: np.asarray(nodes[h], dtype=np.float64).reshape(-1, 3) for h in hosts}
    recent = {h: float(a[-RANK_SAMPLES:, column].mean()) for h, a in arrays.items()}
    top = sorted(hosts, key=lambda h: (-recent[h], h))[:TOP_NODES]
    both = np.concatenate(list(arrays.values()))
    ts, values = both[:, 0], both[:, column]
    order = np.lexsort((values, ts))
    ts, values = ts[order], values[order]
    seconds, first, count = np.unique(ts, return_index=True, return_counts=True)
    low, high = values[first], values[first + count - 1]
    middle = (values[first + (count - 1) // 2] + values[first + count // 2]) / 2
    band = Band(f"{len(hosts)} {what}", np.column_stack([seconds, low, middle, high]))
    median = Series("median", np.column_stack([seconds, middle]), MEDIAN_COLOR,
                    in_legend=False)
    lines = [Series(h, arrays[h][:, [0, column]]) for h in top]
    return [median, *lines], band


def fill_charts(snap: Snapshot, throughput: LineChart, latency: LineChart, cpu: LineChart,
                memory: LineChart, percentiles: tuple[str, ...] = ("p99",)) -> None:
    x = snap.x_range
    labels = (clock(x[0]), clock(x[1]))
    spans = [Span(s.first, s.end, s.label) for s in snap.stretches]  # a scale per phase
    throughput.set_data(
        [Series(op, [(p.ts, p.ops) for p in pts]) for op, pts in sorted(snap.ops.items())], x,
        labels, segments=spans,
    )
    lat: list[Series] = []
    for op, pts in sorted(snap.ops.items()):
        for pct in percentiles:
            name = op if len(percentiles) == 1 else f"{op} {pct}"
            lat.append(Series(name, [(p.ts, getattr(p, f"{pct}_ms")) for p in pts]))
    latency.border_title = f"latency {'/'.join(percentiles)} (ms)"
    latency.set_data(lat, x, labels, segments=spans)
    for chart, column, title in ((cpu, 1, "node CPU (%)"), (memory, 2, "node memory (%)")):
        lines, band = node_series(snap.nodes, column)
        chart.border_title = title if band is None else f"{title} · top {TOP_NODES} + range"
        chart.set_data(lines, x, labels, band)


def _continues(shown: list[tuple[float, str]], keys: list[tuple[float, str]]) -> int | None:
    """How many lines at the front of `keys` are the last lines of `shown` (`keys` is
    the newest part of a growing list whose older lines drop off its front); None when
    `keys` does not go on from `shown` (a replay seek back)."""
    if not shown:
        return 0
    for pos in range(max(0, len(shown) - len(keys)), len(shown)):
        if shown[pos] == keys[0] and shown[pos:] == keys[: len(shown) - pos]:
            return len(shown) - pos
    if keys and keys[0][0] > shown[-1][0]:
        return 0  # all new (more new lines than the list holds came at once)
    return None


def fill_log(log: RichLog, shown: list[tuple[float, str]], items: list[tuple[float, Text]],
             keep: int = 2000) -> None:
    """Append only what is new; rewrite when the cursor went back (replay seek)."""
    keys = [(ts, str(text)) for ts, text in items]
    if not keys:
        if shown:
            log.clear()
            shown.clear()
        return
    start = _continues(shown, keys)
    if start is None:
        log.clear()
        shown.clear()
        start = 0
    for (_ts, text), key in zip(items[start:], keys[start:], strict=True):
        log.write(text)
        shown.append(key)
    if len(shown) > 2 * keep:
        del shown[:-keep]


def event_items(snap: Snapshot) -> list[Item]:
    return [(float(e["ts"]), e["kind"], e["message"]) for e in snap.events]


def log_lines(snap: Snapshot) -> list[tuple[float, Text]]:
    out = []
    for entry in snap.logs:
        line = Text(f"{clock(entry['ts'])} {visible(entry['host'], False)} ", style="dim")
        line.append(visible(entry["text"]), style="red" if entry["stream"] == "stderr" else "")
        out.append((entry["ts"], line))
    return out


def run_end(snap: Snapshot) -> float:
    """The end of the run's timeline: its newest second, or a later phase end."""
    ends = [p.ended for p in snap.phases if p.ended is not None]
    return max([snap.last_ts, *ends])


def timeline(snap: Snapshot, live: bool) -> tuple[TimelineData, str]:
    """The timeline's data and its title ("timeline · 2 phases · 36s")."""
    started = [(p, p.started) for p in snap.phases if p.started is not None]
    end = run_end(snap)
    start = min([snap.first_ts, *(at for _p, at in started)])
    phases = tuple(
        Phase(visible(p.name, False), at, p.ended if p.ended is not None else max(end, at))
        for p, at in sorted(started, key=lambda item: (item[1], item[0].idx)))
    data = TimelineData(start, end, snap.cursor, phases, tuple(snap.markers),
                        show_cursor=not live)
    count = f"{len(phases)} phase{'' if len(phases) == 1 else 's'}"
    return data, f"timeline · {count} · {duration(end - start)}"


@dataclass(frozen=True)
class AgentTable:
    rows: dict[str, tuple[Text, ...]]
    title: str
    summary: str


def agent_table(snap: Snapshot) -> AgentTable:
    """The agents, silent ones first, then the hottest (by its own CPU) first; an agent
    over HOT_CPU in the warning style. Agents are named host/index: the host is shown
    apart only when the name does not say it."""
    found = []
    running = snap.run.get("status") == "running"
    for a in snap.agents:
        stale = snap.cursor - float(a["seen"]) > 5
        state = "silent" if stale and running else str(a["state"])
        cpu = float(a["cpu_pct"] or 0)
        found.append((state != "silent", -cpu, visible(a["agent"], False),
                      visible(a["host"], False), cpu, float(a["ops"] or 0),
                      visible(state, False)))
    found.sort()
    rows: dict[str, tuple[Text, ...]] = {}
    hot = silent = 0
    for _ok, _neg, agent, host, cpu, ops, state in found:
        name = agent if agent.startswith(f"{host}/") or not host else f"{agent} ({host})"
        warn = cpu > HOT_CPU
        hot += warn
        silent += state == "silent"
        rows[agent] = (
            Text(name, style="yellow" if warn else ""),
            Text(f"{cpu:.0f}%" + (" !" if warn else ""), style="bold yellow" if warn else ""),
            Text(f"{ops:,.0f}", justify="right"),
            Text(state, style="bold red" if state == "silent" else "dim" if state == "running"
                 else "yellow"),
        )
    summary = []
    if hot:
        summary.append(f"{hot} over {HOT_CPU:.0f}% CPU")
    if silent:
        summary.append(f"{silent} silent")
    title = f"agents · {len(found)}" + (" · hottest first" if len(found) > 1 else "")
    return AgentTable(rows, title, " · ".join(summary) or (f"all under {HOT_CPU:.0f}% CPU"
                                                            if found else ""))


def error_rows(snap: Snapshot) -> dict[str, tuple[Text, ...]]:
    """Errors by class in the window, the most frequent first."""
    if not snap.errors_by_class:
        return {"(none)": (Text("(none)", style="dim"), Text("0", style="dim"))}
    ordered = sorted(snap.errors_by_class.items(), key=lambda kv: (-kv[1], kv[0]))
    return {k: (Text(visible(k, False), style="red"), Text(f"{v:,}", justify="right"))
            for k, v in ordered}
