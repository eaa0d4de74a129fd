"""Two runs side by side per phase and op, with their throughput and p99 overlaid.

Each phase and op is one table row two lines high: run A's figure over run B's, and
the change from A to B beside them, so the table fits a 100-column terminal."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from loadtower.errors import LoadtowerError
from loadtower.store.terminal_text import markup_safe, visible
from loadtower.tui.feed import snapshot
from loadtower.tui.widgets.chart import LineChart, Series

SIGNIFICANCE = ("[dim]Δ from A to B, in colour when significant (Welch's t-test over "
                "per-second samples, p < 0.01): red is worse[/]")
COLUMNS = ("phase", "op", "run", "ops/s", "Δ ops", "p50 ms", "p90 ms", "p99 ms", "Δ p99",
           "max ms", "errors", "sig")


def _num(value: Any, digits: int = 2) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def _pair(a: Any, b: Any, digits: int = 2) -> Text:
    """A's figure over B's, right-aligned."""
    return Text(f"{_num(a, digits)}\n{_num(b, digits)}", justify="right")


def _change(value: float | None, significant: bool, worse_if_up: bool) -> Text:
    if value is None:
        return Text("-")
    worse = value > 0 if worse_if_up else value < 0
    style = ("bold red" if worse else "bold green") if significant else "dim"
    return Text(f"{value:+.1f}%", style=style, justify="right")


def table_rows(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """One tuple of cells per phase and op (cells are two lines: A over B)."""
    out = []
    for r in rows:
        out.append((
            Text(visible(r["phase"], False)), Text(visible(r["op"], False)),
            Text("A\nB", style="bold"),
            _pair(r["ops_per_s_a"], r["ops_per_s_b"], 1),
            _change(r["ops_change_pct"], r["significant_ops"], worse_if_up=False),
            _pair(r["p50_ms_a"], r["p50_ms_b"]), _pair(r["p90_ms_a"], r["p90_ms_b"]),
            _pair(r["p99_ms_a"], r["p99_ms_b"]),
            _change(r["p99_change_pct"], r["significant_p99"], worse_if_up=True),
            _pair(r["max_ms_a"], r["max_ms_b"]),
            _pair(r["errors_a"] or 0, r["errors_b"] or 0, 0),
            Text("*", style="bold") if r["significant"] else Text(""),
        ))
    return out


class CompareScreen(Screen):
    DEFAULT_CSS = """
    CompareScreen #compare-title { height: auto; padding: 0 1; }
    CompareScreen #compare-table { height: auto; max-height: 50%; }
    CompareScreen #compare-charts { height: 1fr; min-height: 8; }
    """
    BINDINGS = [
        Binding("escape", "back", "Back", tooltip="Back to the runs"),
        Binding("L", "log_scale", "Log scale", tooltip="p99 chart on a log scale, or not"),
    ]

    def __init__(self, store: Path, run_a: str, run_b: str) -> None:
        super().__init__()
        self.store, self.run_a, self.run_b = store, run_a, run_b
        self.rows: list[dict[str, Any]] = []
        self.error: str | None = None

    def compose(self) -> ComposeResult:
        yield Static(
            f"[b]A[/b] {markup_safe(self.run_a)}   vs   [b]B[/b] {markup_safe(self.run_b)}\n"
            + SIGNIFICANCE,
            id="compare-title",
        )
        yield DataTable(id="compare-table", cursor_type="row", zebra_stripes=True)
        with Horizontal(id="compare-charts"):
            yield LineChart("ops/s over the run (A, B)", id="compare-ops")
            yield LineChart("p99 ms over the run (A, B)", " ms", id="compare-p99")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one(DataTable).add_columns(*COLUMNS)
        self.load()

    @work(thread=True, exclusive=True)
    def load(self) -> None:
        from loadtower.store import compare_runs

        try:
            rows = compare_runs(self.store, self.run_a, self.run_b)
            snaps = [snapshot(self.store, run, None, 0) for run in (self.run_a, self.run_b)]
        except (LoadtowerError, KeyError, duckdb.Error) as exc:  # a run deleted meanwhile
            message = (f"no run {exc.args[0]} in {self.store}" if isinstance(exc, KeyError)
                       else (str(exc).splitlines() or [type(exc).__name__])[0])
            self.app.call_from_thread(self._failed, message)
            return
        self.app.call_from_thread(self._show, rows, snaps)

    def _failed(self, message: str) -> None:
        """The runs cannot be compared: say why, in place of the figures."""
        self.error = message
        title = Text.assemble(
            ("A", "bold"), f" {visible(self.run_a, False)}   vs   ", ("B", "bold"),
            f" {visible(self.run_b, False)}\n",
            (f"cannot compare: {visible(message, False)}", "bold red"))
        self.query_one("#compare-title", Static).update(title)

    def _show(self, rows: list[dict[str, Any]], snaps: list[Any]) -> None:
        self.rows = rows
        table = self.query_one(DataTable)
        for row in table_rows(rows):
            table.add_row(*row, height=2)
        title = "  vs  ".join(
            f"[b]{label}[/b] {markup_safe(s.run['name'])} {markup_safe(s.run['id'])} "
            f"{markup_safe(s.run['status'])} "
            f"{s.last_ts - s.first_ts:,.0f} s" for label, s in zip("AB", snaps, strict=True))
        self.query_one("#compare-title", Static).update(title + "\n" + SIGNIFICANCE)
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
