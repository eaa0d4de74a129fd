"""Two runs side by side per phase and op, with their throughput and p99 overlaid."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from loadtower.tui.feed import snapshot
from loadtower.tui.widgets.chart import LineChart, Series

COLUMNS = ("phase", "op", "ops/s A", "ops/s B", "Δ ops", "p50 A", "p50 B", "p90 A", "p90 B",
           "p99 A", "p99 B", "Δ p99", "max A", "max B", "err A", "err B", "sig")


def _num(value: Any, digits: int = 2) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def _change(value: float | None, significant: bool, worse_if_up: bool) -> Text:
    if value is None:
        return Text("-")
    worse = value > 0 if worse_if_up else value < 0
    style = ("bold red" if worse else "bold green") if significant else "dim"
    return Text(f"{value:+.1f}%", style=style)


def table_rows(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    out = []
    for r in rows:
        out.append((
            r["phase"], r["op"], _num(r["ops_per_s_a"], 1), _num(r["ops_per_s_b"], 1),
            _change(r["ops_change_pct"], r["significant_ops"], worse_if_up=False),
            _num(r["p50_ms_a"]), _num(r["p50_ms_b"]), _num(r["p90_ms_a"]), _num(r["p90_ms_b"]),
            _num(r["p99_ms_a"]), _num(r["p99_ms_b"]),
            _change(r["p99_change_pct"], r["significant_p99"], worse_if_up=True),
            _num(r["max_ms_a"]), _num(r["max_ms_b"]), f"{r['errors_a'] or 0:,}",
            f"{r['errors_b'] or 0:,}", "*" if r["significant"] else "",
        ))
    return out


class CompareScreen(Screen):
    DEFAULT_CSS = """
    CompareScreen #compare-title { height: 2; padding: 0 1; }
    CompareScreen #compare-table { height: 1fr; }
    CompareScreen #compare-charts { height: 1fr; }
    """
    BINDINGS = [Binding("escape", "back", "Back"), Binding("L", "log_scale", "Log scale")]

    def __init__(self, store: Path, run_a: str, run_b: str) -> None:
        super().__init__()
        self.store, self.run_a, self.run_b = store, run_a, run_b
        self.rows: list[dict[str, Any]] = []

    def compose(self) -> ComposeResult:
        yield Static(
            f"[b]A[/b] {self.run_a}   vs   [b]B[/b] {self.run_b}\n"
            "[dim]Δ in colour when significant (Welch's t-test over per-second samples, "
            "p < 0.01); red is worse[/]",
            id="compare-title",
        )
        yield DataTable(id="compare-table", cursor_type="row", zebra_stripes=True)
        with Horizontal(id="compare-charts"):
            yield LineChart("ops/s over the run (A, B)", id="compare-ops")
            yield LineChart("p99 ms over the run (A, B)", " ms", id="compare-p99")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(DataTable).add_columns(*COLUMNS)
        self.load()

    @work(thread=True, exclusive=True)
    def load(self) -> None:
        from loadtower.store import compare_runs

        rows = compare_runs(self.store, self.run_a, self.run_b)
        snaps = [snapshot(self.store, run, None, 0) for run in (self.run_a, self.run_b)]
        self.app.call_from_thread(self._show, rows, snaps)

    def _show(self, rows: list[dict[str, Any]], snaps: list[Any]) -> None:
        self.rows = rows
        table = self.query_one(DataTable)
        for row in table_rows(rows):
            table.add_row(*row)
        ops, p99 = [], []
        longest = 1.0
        for label, snap in zip(("A", "B"), snaps, strict=True):
            per_ts: dict[int, tuple[int, float]] = {}
            for points in snap.ops.values():
                for p in points:
                    n, worst = per_ts.get(p.ts, (0, 0.0))
                    per_ts[p.ts] = (n + p.ops, max(worst, p.p99_ms))
            t0 = snap.first_ts
            longest = max(longest, snap.last_ts - t0)
            ops.append(Series(label, [(ts - t0, v[0]) for ts, v in sorted(per_ts.items())]))
            p99.append(Series(label, [(ts - t0, v[1]) for ts, v in sorted(per_ts.items())]))
        labels = ("0s", f"{longest:,.0f}s")
        self.query_one("#compare-ops", LineChart).set_data(ops, (0.0, longest), labels)
        self.query_one("#compare-p99", LineChart).set_data(p99, (0.0, longest), labels)

    def action_back(self) -> None:
        if len(self.app.screen_stack) > 1:
            self.app.pop_screen()

    def action_log_scale(self) -> None:
        chart = self.query_one("#compare-p99", LineChart)
        chart.log_y = not chart.log_y
