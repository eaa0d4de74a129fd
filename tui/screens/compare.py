"""Two runs side by side per phase and op, with their throughput and p99 overlaid.

Each phase and op is one table row two lines high: run A's figure over run B's, and
the change from A to B beside them, so the table fits a 100-column terminal. A ramp is
stored with one phase label per step ("saturation@40"), so its steps are rows of their
own; when the store can tell ramp steps apart (StoreReader.ramp_steps), a second table
shows each step's asked and achieved rate, percentiles and verdict for A and B. When both
runs ran several targets (e.g. two ycsb-suite runs), the engines table of both
(engine_compare.engine_table, as `loadtower compare A B` prints it) shows too. Runs with a
ramp or a search get the latency/throughput curve table (store/curves.py: every step's
achieved ops/s against p50/p90/p99, per system, as `loadtower compare` prints it) and the
rate each system holds at its target."""

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

from loadtower.errors import LoadtowerError
from loadtower.store.engine_text import engine_lines
from loadtower.store.significance import IMPROVEMENT, REGRESSION, TOO_SHORT, interval_text
from loadtower.store.terminal_text import markup_safe, visible
from loadtower.tui.screens.engines import add_engine_columns, fill_engine_table
from loadtower.tui.widgets.chart import LineChart, Series, Span

SIGNIFICANCE = ("[dim]Δ from A to B over its 99% interval (per-second samples' memory "
                "accounted for); in colour when the interval is all one side of 0: red a "
                "regression, green an improvement[/]")
COLUMNS = ("phase", "op", "run", "ops/s", "Δ ops", "p50 ms", "p90 ms", "p99 ms", "Δ p99",
           "max ms", "errors", "verdict")
VERDICT_STYLES = {REGRESSION: "bold red", IMPROVEMENT: "bold green", TOO_SHORT: "yellow"}
CURVE_COLUMNS = ("system", "phase", "step", "asked", "achieved ops/s", "p50 ms", "p90 ms",
                 "p99 ms", "verdict")
STEP_COLUMNS = ("step", "run", "asked", "achieved", "p50 ms", "p90 ms", "p99 ms", "errors",
                "passed", "why")


def _num(value: Any, digits: int = 2) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def _pair(a: Any, b: Any, digits: int = 2) -> Text:
    """A's figure over B's, right-aligned."""
    return Text(f"{_num(a, digits)}\n{_num(b, digits)}", justify="right")


def _change(value: float | None, interval: list[float] | None, verdict: str) -> Text:
    """The change over its 99% interval (or "too short"), coloured by its verdict."""
    if value is None:
        return Text("-")
    below = interval_text(interval) if interval is not None else "too short"
    style = VERDICT_STYLES.get(verdict, "dim")
    return Text(f"{value:+.1f}%\n{below}", style=style, justify="right")


def verdict_cell(row: dict[str, Any]) -> Text:
    """Both verdicts, the words compare prints: ops/s over p99."""
    out = Text()
    for key in ("ops", "p99"):
        verdict = row[f"{key}_verdict"]
        out.append(f"{key} ", style="dim")
        out.append(verdict, style=VERDICT_STYLES.get(verdict, ""))
        out.append("\n" if key == "ops" else "")
    return out


def _verdict(step: dict[str, Any] | None) -> str:
    if step is None:
        return "-"
    return "yes" if step.get("passed") else "no"


def step_rows(steps_a: list[dict[str, Any]], steps_b: list[dict[str, Any]]
              ) -> list[tuple[Any, ...]]:
    """One row per step label (A's order, then B's own), A over B in each cell."""
    by_a = {str(s["label"]): s for s in steps_a}
    by_b = {str(s["label"]): s for s in steps_b}
    labels = list(by_a) + [label for label in by_b if label not in by_a]
    out = []
    for label in labels:
        a, b = by_a.get(label), by_b.get(label)

        def pair(key: str, digits: int = 2, a: Any = a, b: Any = b) -> Text:
            return _pair(a.get(key) if a else None, b.get(key) if b else None, digits)

        why = "\n".join(visible(s.get("why") or "", False) if s else "-" for s in (a, b))
        out.append((
            Text(visible(label, False)), Text("A\nB", style="bold"), pair("asked", 0),
            pair("achieved_ops_per_s", 1), pair("p50_ms"), pair("p90_ms"), pair("p99_ms"),
            pair("errors", 0), Text(f"{_verdict(a)}\n{_verdict(b)}"), Text(why),
        ))
    return out


def curve_rows(points: list[dict[str, Any]]) -> list[tuple[str, ...]]:
    """One row per step (store/curves.py), each system's points by achieved ops/s."""
    out: list[tuple[str, ...]] = []
    for system in dict.fromkeys(p["system"] for p in points):
        mine = [p for p in points if p["system"] == system]
        for p in sorted(mine, key=lambda p: (p["phase"], p["ops_per_s"] or 0.0)):
            verdict = {True: "passed", False: "FAILED", None: "-"}[p["passed"]]
            if p.get("stage"):
                verdict += f" ({p['stage']})"
            out.append((
                visible(system, False), visible(p["phase"], False), visible(p["label"], False),
                _num(p["level"], 0), _num(p["ops_per_s"], 1), _num(p["p50_ms"]),
                _num(p["p90_ms"]), _num(p["p99_ms"]), verdict,
            ))
    return out


def at_target_text(row: dict[str, Any]) -> str:
    """``A east  east:find  p99 <= 50 ms: 812.0 ops/s (search, confirmed)``."""
    rate = row.get("rate")
    answer = "no rate passed" if rate is None else f"{rate:,.1f} ops/s"
    how = row["source"] + (
        "" if row.get("confirmed") is None
        else ", confirmed" if row["confirmed"] else ", NOT confirmed"
    )
    return visible(
        f"at target: {row['system']}  {row['phase']}  {row.get('target_text') or ''}: "
        f"{answer} ({how})",
        False,
    )


TOMBSTONE_COLUMN = "tombstones/read p99"


def has_tombstones(rows: list[dict[str, Any]]) -> bool:
    """Whether either run has an engine's tombstones per read (store/table_reads.py)."""
    return any(r.get(f"tombstones_p99_{side}") is not None for r in rows for side in "ab")


def table_rows(rows: list[dict[str, Any]], tombstones: bool = False) -> list[tuple[Any, ...]]:
    """One tuple of cells per phase and op (cells are two lines: A over B); with
    `tombstones`, a last cell of the tombstones scanned per read (p99) of each."""
    out = []
    for r in rows:
        out.append((
            Text(visible(r["phase"], False)), Text(visible(r["op"], False)),
            Text("A\nB", style="bold"),
            _pair(r["ops_per_s_a"], r["ops_per_s_b"], 1),
            _change(r["ops_change_pct"], r["ops_change_ci_pct"], r["ops_verdict"]),
            _pair(r["p50_ms_a"], r["p50_ms_b"]), _pair(r["p90_ms_a"], r["p90_ms_b"]),
            _pair(r["p99_ms_a"], r["p99_ms_b"]),
            _change(r["p99_change_pct"], r["p99_change_ci_pct"], r["p99_verdict"]),
            _pair(r["max_ms_a"], r["max_ms_b"]),
            _pair(r["errors_a"] or 0, r["errors_b"] or 0, 0),
            verdict_cell(r),
            *((_pair(r.get("tombstones_p99_a"), r.get("tombstones_p99_b"), 1),)
              if tombstones else ()),
        ))
    return out


class CompareScreen(Screen):
    DEFAULT_CSS = """
    CompareScreen #compare-title { height: auto; padding: 0 1; }
    CompareScreen #compare-table { height: auto; max-height: 50%; }
    CompareScreen #compare-steps { height: auto; max-height: 30%; display: none; }
    CompareScreen #compare-steps.-shown { display: block; }
    CompareScreen #compare-engines { height: auto; max-height: 40%; display: none; }
    CompareScreen #compare-engines.-shown { display: block; }
    CompareScreen #compare-curves { height: auto; max-height: 30%; display: none; }
    CompareScreen #compare-curves.-shown { display: block; }
    CompareScreen #compare-at-target { height: auto; padding: 0 1; display: none; }
    CompareScreen #compare-at-target.-shown { display: block; }
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
        self.steps: tuple[list[dict[str, Any]], list[dict[str, Any]]] = ([], [])
        self.error: str | None = None
        self.engine_rows: list[dict[str, Any]] = []
        self.curves: dict[str, list[dict[str, Any]]] = {"curves": [], "at_target": []}

    def compose(self) -> ComposeResult:
        yield Static(
            f"[b]A[/b] {markup_safe(self.run_a)}   vs   [b]B[/b] {markup_safe(self.run_b)}\n"
            + SIGNIFICANCE,
            id="compare-title",
        )
        yield DataTable(id="compare-table", cursor_type="row", zebra_stripes=True)
        yield DataTable(id="compare-steps", cursor_type="row", zebra_stripes=True)
        yield DataTable(id="compare-engines", cursor_type="row", zebra_stripes=True)
        yield Static(id="compare-at-target")
        yield DataTable(id="compare-curves", cursor_type="row", zebra_stripes=True)
        with Horizontal(id="compare-charts"):
            yield LineChart("ops/s over the run (A, B)", id="compare-ops")
            yield LineChart("p99 ms over the run (A, B)", " ms", id="compare-p99")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one("#compare-table", DataTable).add_columns(*COLUMNS)
        self.query_one("#compare-steps", DataTable).add_columns(*STEP_COLUMNS)
        add_engine_columns(self.query_one("#compare-engines", DataTable))
        self.query_one("#compare-curves", DataTable).add_columns(*CURVE_COLUMNS)
        self.load()
        self.load_engines()
        self.load_curves()

    @work(thread=True, exclusive=True, group="curves")
    def load_curves(self) -> None:
        """Both runs' latency/throughput curves and rates at target (hidden when none)."""
        # deferred: curves loads duckdb and pyarrow (this screen: textual and numpy)
        from loadtower.store.curves import curves_of

        runs = [self.run_a] + ([self.run_b] if self.run_b != self.run_a else [])
        try:
            found = curves_of(self.store, runs)
        except LoadtowerError:
            return  # the figures' worker says what is wrong with the runs
        self.app.call_from_thread(self._show_curves, found)

    def _show_curves(self, found: dict[str, list[dict[str, Any]]]) -> None:
        self.curves = found
        table = self.query_one("#compare-curves", DataTable)
        for row in curve_rows(found["curves"]):
            table.add_row(*row)
        table.set_class(bool(table.row_count), "-shown")
        lines = [at_target_text(r) for r in found["at_target"]]
        answer = self.query_one("#compare-at-target", Static)
        answer.update(Text("\n".join(lines)))
        answer.set_class(bool(lines), "-shown")

    @work(thread=True, exclusive=True, group="engines")
    def load_engines(self) -> None:
        """The engines table when both runs ran several targets (else it stays hidden)."""
        # deferred: engine_compare loads duckdb and pyarrow (this screen: textual and numpy)
        from loadtower.store.engine_compare import engine_table, run_sides

        runs = [self.run_a, self.run_b]
        try:
            if any(len(run_sides(self.store, run)) < 2 for run in runs):
                return
            rows = engine_table(self.store, runs)
        except LoadtowerError:
            return  # the figures' worker says what is wrong with the runs
        self.app.call_from_thread(self._show_engines, rows, engine_lines(rows))

    def _show_engines(self, rows: list[dict[str, Any]],
                      lines: list[tuple[bool, tuple[str, ...]]]) -> None:
        self.engine_rows = rows
        table = self.query_one("#compare-engines", DataTable)
        fill_engine_table(table, rows, lines)
        table.set_class(bool(table.row_count), "-shown")

    @work(thread=True, exclusive=True)
    def load(self) -> None:
        # deferred: compare_view loads duckdb and pyarrow (this screen: textual and numpy)
        from loadtower.store.compare_view import compare_view

        try:
            view = compare_view(self.store, self.run_a, self.run_b)
        except (LoadtowerError, KeyError) as exc:  # a run deleted meanwhile
            message = (f"no run {exc.args[0]} in {self.store}" if isinstance(exc, KeyError)
                       else (str(exc).splitlines() or [type(exc).__name__])[0])
            self.app.call_from_thread(self._failed, message)
            return
        self.app.call_from_thread(self._show, view.rows, list(view.snapshots), view.steps)

    def _failed(self, message: str) -> None:
        """The runs cannot be compared: say why, in place of the figures."""
        self.error = message
        title = Text.assemble(
            ("A", "bold"), f" {visible(self.run_a, False)}   vs   ", ("B", "bold"),
            f" {visible(self.run_b, False)}\n",
            (f"cannot compare: {visible(message, False)}", "bold red"))
        self.query_one("#compare-title", Static).update(title)

    def _show(self, rows: list[dict[str, Any]], snaps: list[Any],
              steps: tuple[list[dict[str, Any]], list[dict[str, Any]]] = ([], [])) -> None:
        self.rows, self.steps = rows, steps
        table = self.query_one("#compare-table", DataTable)
        tombstones = has_tombstones(rows)
        if tombstones and len(table.columns) == len(COLUMNS):
            table.add_column(TOMBSTONE_COLUMN)  # where an engine sampled them (table_reads.py)
        for row in table_rows(rows, tombstones):
            table.add_row(*row, height=2)
        step_table = self.query_one("#compare-steps", DataTable)
        for row in step_rows(*steps):
            step_table.add_row(*row, height=2)
        step_table.set_class(bool(step_table.row_count), "-shown")
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
        first = snaps[0]  # A's phases and steps: a y scale for each far from its neighbours
        spans = [Span(s.first - first.first_ts, s.end - first.first_ts, s.label)
                 for s in first.stretches]
        self.query_one("#compare-ops", LineChart).set_data(ops, (0.0, longest), labels,
                                                           segments=spans)
        self.query_one("#compare-p99", LineChart).set_data(p99, (0.0, longest), labels,
                                                           segments=spans)

    def action_back(self) -> None:
        if len(self.app.screen_stack) > 1:
            self.app.pop_screen()

    def action_log_scale(self) -> None:
        chart = self.query_one("#compare-p99", LineChart)
        chart.log_y = not chart.log_y
