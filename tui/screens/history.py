"""A scenario's run history: its completed runs in time order with one figure each, the
change points marked where a new level starts (store/history.py, as `loadtower history`
prints it)."""

from __future__ import annotations

import time
from pathlib import Path

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static

from loadtower.errors import LoadtowerError
from loadtower.store.history import History, run_history
from loadtower.store.terminal_text import visible

METRICS = ("p99", "p50", "p999", "ops_per_s", "error_rate")  # the order "m" steps through
COLUMNS = ("#", "run", "started (UTC)", "settings", "figure", "change point")


def figure(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    if unit == "ms":
        return f"{value:.2f}"  # as the runs list, compare and the report print it
    return f"{value:.4f}" if unit == "" else f"{value:,.1f}"


class HistoryScreen(Screen):
    DEFAULT_CSS = """
    HistoryScreen #history-title { height: auto; padding: 0 1; }
    HistoryScreen #history-status { height: 1; padding: 0 1; color: $text-muted; }
    HistoryScreen DataTable { height: 1fr; }
    """
    BINDINGS = [
        Binding("m", "metric", "Metric", tooltip="Follow the next figure: p99, p50, p999, "
                "ops/s, error rate"),
        Binding("s", "same_settings", "Same settings", tooltip="Show only the runs with the "
                "most common settings, or every run"),
        Binding("enter", "open", "Open", tooltip="The run under the cursor (its replay)"),
        Binding("escape", "app.pop_screen", "Back"),
    ]

    def __init__(self, store: Path, scenario: str) -> None:
        super().__init__()
        self.store = store
        self.scenario = scenario
        self.metric_index = 0
        self.same_settings = False
        self.history: History | None = None

    @property
    def metric(self) -> str:
        return METRICS[self.metric_index]

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="history-title")
        yield DataTable(id="history", cursor_type="row", zebra_stripes=True)
        yield Static(id="history-status")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one(DataTable).add_columns(*COLUMNS)
        self.query_one(DataTable).focus()
        self.load()

    @work(thread=True, exclusive=True, group="history")
    def load(self) -> None:
        """Read the history off the UI thread; one line on the screen when it cannot."""
        try:
            history = run_history(self.store, self.scenario, self.metric,
                                  same_settings=self.same_settings)  # fmt: skip
        except LoadtowerError as exc:
            self.app.call_from_thread(self._failed, str(exc).splitlines()[0])
            return
        self.app.call_from_thread(self._show, history)

    def _failed(self, message: str) -> None:
        self.query_one(DataTable).clear()
        self.query_one("#history-status", Static).update(Text(visible(message, False)))

    def _show(self, history: History) -> None:
        self.history = history
        starts = {c.index: c for c in history.change_points}
        unit = f" ({history.unit})" if history.unit else ""
        self.query_one("#history-title", Static).update(Text(visible(
            f"History of {history.scenario}: {history.metric}{unit} of phase {history.phase}, "
            f"every op; ▲ marks the run where a new level starts", False)))
        table = self.query_one(DataTable)
        table.clear()
        for run in history.runs:
            change = starts.get(run.index)
            mark = Text("")
            if change is not None:
                style = "bold red" if change.direction == "regression" else "bold green"
                mark = Text(f"▲ {change.direction} {change.change_pct:+.1f}%", style=style)
            started = time.strftime("%Y-%m-%d %H:%M", time.gmtime(run.started)) \
                if run.started else ""
            table.add_row(
                str(run.index), visible(run.id, False), started,
                run.settings + (" *" if run.differs else ""),
                Text(figure(run.value, history.unit), justify="right"), mark, key=run.id,
            )  # fmt: skip
        points = len(history.change_points)
        differ = sum(r.differs for r in history.runs)
        self.query_one("#history-status", Static).update(Text(visible(
            f"{len(history.runs)} completed runs, {points} change point"
            f"{'' if points == 1 else 's'}"
            + (f", {differ} with other settings (*)" if differ else "")
            + ("  only the most common settings" if self.same_settings else ""), False)))

    def action_metric(self) -> None:
        self.metric_index = (self.metric_index + 1) % len(METRICS)
        self.load()

    def action_same_settings(self) -> None:
        self.same_settings = not self.same_settings
        self.load()

    def action_open(self) -> None:
        table = self.query_one(DataTable)
        if table.row_count:
            run_id = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
            self.app.open_run(run_id)  # type: ignore[attr-defined]

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_open()
