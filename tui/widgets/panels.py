"""Applying a Snapshot to the dashboard's panels: one render path for live and replay."""

from __future__ import annotations

import time

from rich.text import Text
from textual.widgets import RichLog

from loadtower.tui.feed import Snapshot
from loadtower.tui.widgets.chart import LineChart, Series

EVENT_STYLE = {"warning": "bold yellow", "phase_start": "cyan", "phase_end": "cyan",
               "scale_out": "magenta", "compaction": "magenta", "action": "magenta",
               "run": "bold", "ramp_step": "green", "ramp_result": "bold green"}


def clock(ts: float) -> str:
    return time.strftime("%H:%M:%S", time.gmtime(ts))


PERCENTILE_SETS = (("p99",), ("p90",), ("p50",), ("p50", "p90", "p99"))


def fill_charts(snap: Snapshot, throughput: LineChart, latency: LineChart, cpu: LineChart,
                memory: LineChart, percentiles: tuple[str, ...] = ("p99",)) -> None:
    x = snap.x_range
    labels = (clock(x[0]), clock(x[1]))
    throughput.set_data(
        [Series(op, [(p.ts, p.ops) for p in pts]) for op, pts in sorted(snap.ops.items())], x,
        labels,
    )
    lat: list[Series] = []
    for op, pts in sorted(snap.ops.items()):
        for pct in percentiles:
            name = op if len(percentiles) == 1 else f"{op} {pct}"
            lat.append(Series(name, [(p.ts, getattr(p, f"{pct}_ms")) for p in pts]))
    latency.border_title = f"latency {'/'.join(percentiles)} (ms)"
    latency.set_data(lat, x, labels)
    hosts = sorted(snap.nodes.items())
    cpu.set_data([Series(h, [(ts, c) for ts, c, _m in pts]) for h, pts in hosts], x, labels)
    memory.set_data([Series(h, [(ts, m) for ts, _c, m in pts]) for h, pts in hosts], x, labels)


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


def event_lines(snap: Snapshot) -> list[tuple[float, Text]]:
    out = []
    for e in snap.events:
        line = Text(f"{clock(e['ts'])} ", style="dim")
        line.append(e["message"], style=EVENT_STYLE.get(e["kind"], ""))
        out.append((e["ts"], line))
    return out


def log_lines(snap: Snapshot) -> list[tuple[float, Text]]:
    out = []
    for entry in snap.logs:
        line = Text(f"{clock(entry['ts'])} {entry['host']} ", style="dim")
        line.append(entry["text"], style="red" if entry["stream"] == "stderr" else "")
        out.append((entry["ts"], line))
    return out


def agent_rows(snap: Snapshot) -> dict[str, tuple[str, ...]]:
    rows = {}
    for a in snap.agents:
        stale = snap.cursor - float(a["seen"]) > 5
        state = "silent" if stale and snap.run.get("status") == "running" else a["state"]
        cpu = float(a["cpu_pct"] or 0)
        rows[a["agent"]] = (a["agent"], a["host"], f"{cpu:.0f}%" + (" !" if cpu > 90 else ""),
                            f"{float(a['ops'] or 0):,.0f}", state)
    return rows


def error_rows(snap: Snapshot) -> dict[str, tuple[str, ...]]:
    if not snap.errors_by_class:
        return {"(none)": ("(none)", "0")}
    return {k: (k, f"{v:,}") for k, v in sorted(snap.errors_by_class.items())}
