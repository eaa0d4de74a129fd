"""Every run in the store: filter, sort, open (live or replay), mark two to compare, delete."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Input, Static

from loadtower.tui.runs_data import list_runs
from loadtower.tui.widgets.confirm import Confirm

COLUMNS = ("name", "id", "scenario", "status", "started (UTC)", "length", "peak ops/s", "p99 ms")
MARK = "● "
SORTS = ("started", "name", "status", "duration", "peak_ops", "p99_ms")
RELOAD_S = 5.0
STATUS_STYLE = {"running": "bold green", "completed": "", "failed": "bold red",
                "interrupted": "yellow"}


def duration(run: dict[str, Any]) -> float:
    end = run["ended"] or (time.time() if run["status"] == "running" else run["started"])
    return float(end) - float(run["started"])


class RunsScreen(Screen):
    DEFAULT_CSS = """
    RunsScreen #filter { dock: top; margin: 0 1; display: none; }
    RunsScreen #filter.visible { display: block; }
    RunsScreen #runs-status { height: 1; padding: 0 1; color: $text-muted; }
    RunsScreen DataTable { height: 1fr; }
    """
    BINDINGS = [
        Binding("enter", "open", "Open"),
        Binding("space", "mark", "Mark"),
        Binding("c", "compare", "Compare"),
        Binding("slash", "filter", "Filter"),
        Binding("o", "sort", "Sort"),
        Binding("d", "delete", "Delete"),
        Binding("r", "reload", "Reload", show=False),
        Binding("N", "app.start_run", "Start run"),
        Binding("2", "app.sql", "SQL"),
    ]

    def __init__(self, store: Path) -> None:
        super().__init__()
        self.store = store
        self.runs: list[dict[str, Any]] = []
        self.marked: list[str] = []
        self.sort_index = 0
        self.filter_text = ""

    def compose(self) -> ComposeResult:
        yield Header()
        yield Input(placeholder="filter: name, scenario or status (enter to keep, escape to clear)",
                    id="filter")
        yield DataTable(id="runs", cursor_type="row", zebra_stripes=True)
        yield Static(id="runs-status")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one(DataTable).add_columns(*COLUMNS)
        self.query_one(DataTable).focus()
        self.reload()
        self.set_interval(RELOAD_S, self._auto_reload)

    def _auto_reload(self) -> None:
        if self.is_current:  # not while a dashboard or the SQL console covers this screen
            self.reload()

    def on_screen_resume(self) -> None:
        self.reload()

    @work(thread=True, exclusive=True, group="runs")
    def reload(self) -> None:
        runs = list_runs(self.store)
        self.app.call_from_thread(self._show, runs)

    def action_reload(self) -> None:
        self.reload()

    def visible(self) -> list[dict[str, Any]]:
        text = self.filter_text.lower()
        rows = [r for r in self.runs if not text or text in
                f"{r['name']} {r['scenario']} {r['status']} {r['id']}".lower()]
        key = SORTS[self.sort_index]
        getter = duration if key == "duration" else (lambda r: r[key] or 0)
        return sorted(rows, key=getter, reverse=key in ("started", "duration", "peak_ops",
                                                        "p99_ms"))

    def _show(self, runs: list[dict[str, Any]]) -> None:
        self.runs = runs
        if hasattr(self.app, "known_runs"):
            self.app.known_runs = runs  # for the command palette
        table = self.query_one(DataTable)
        current = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value \
            if table.row_count else None
        table.clear()
        for run in self.visible():
            name = (Text(MARK + run["name"], style="bold magenta") if run["id"] in self.marked
                    else Text(run["name"]))
            p99 = f"{run['p99_ms']:.2f}" if run["p99_ms"] is not None else "-"
            table.add_row(
                name, run["id"], run["scenario"],
                Text(run["status"], style=STATUS_STYLE.get(run["status"], "")),
                time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(run["started"])),
                Text(f"{duration(run):,.0f} s", justify="right"),
                Text(f"{run['peak_ops']:,.0f}", justify="right"), Text(p99, justify="right"),
                key=run["id"],
            )
        if current is not None and current in table.rows:
            table.move_cursor(row=table.get_row_index(current))
        sort = SORTS[self.sort_index]
        self.query_one("#runs-status", Static).update(
            f"{table.row_count} of {len(runs)} runs in {self.store}  sorted by {sort}"
            + (f"  filter '{self.filter_text}'" if self.filter_text else "")
            + (f"  marked: {', '.join(self.marked)}" if self.marked else "")
        )

    def selected(self) -> dict[str, Any] | None:
        table = self.query_one(DataTable)
        if not table.row_count:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        return next((r for r in self.runs if r["id"] == key), None)

    def action_open(self) -> None:
        run = self.selected()
        if run is not None:
            self.app.open_run(run["id"], live=run["status"] == "running")  # type: ignore[attr-defined]

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_open()

    def action_mark(self) -> None:
        run = self.selected()
        if run is None:
            return
        if run["id"] in self.marked:
            self.marked.remove(run["id"])
        else:
            self.marked = (self.marked + [run["id"]])[-2:]
        self._show(self.runs)

    def action_compare(self) -> None:
        if len(self.marked) != 2:
            self.notify("mark two runs with space first", severity="warning")
            return
        self.app.open_compare(*self.marked)  # type: ignore[attr-defined]

    def action_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.add_class("visible")
        box.focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        self.filter_text = event.value
        self._show(self.runs)

    def key_escape(self) -> None:
        box = self.query_one("#filter", Input)
        if box.has_focus:
            box.value = ""
            box.remove_class("visible")
            self.query_one(DataTable).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if not event.value:
            event.input.remove_class("visible")
        self.query_one(DataTable).focus()

    def action_sort(self) -> None:
        self.sort_index = (self.sort_index + 1) % len(SORTS)
        self._show(self.runs)

    def action_delete(self) -> None:
        run = self.selected()
        if run is None:
            return
        if run["status"] == "running":
            self.notify("a running run cannot be deleted; stop it first", severity="error")
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self._delete(run["id"])

        self.app.push_screen(
            Confirm(f"Delete run {run['id']} ({run['name']}) and all its samples?", "Delete"),
            answered,
        )

    @work(thread=True, group="delete")
    def _delete(self, run_id: str) -> None:
        from loadtower.store import delete_run

        try:
            delete_run(self.store, run_id)
        except Exception as exc:  # noqa: BLE001 - shown to the operator, the app goes on
            self.app.call_from_thread(self.notify, f"delete failed: {exc}", severity="error")
            return
        self.app.call_from_thread(self.notify, f"deleted run {run_id}")
        self.reload()
