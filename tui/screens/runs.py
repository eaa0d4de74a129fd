"""Every run in the store: filter, sort, open (live or replay), mark two to compare, delete,
and the history of a run's scenario."""

from __future__ import annotations

import time
from pathlib import Path

from rich.cells import cell_len
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Input, Static

from loadtower.errors import LoadtowerError
from loadtower.store import delete_run
from loadtower.store.engine_compare import run_sides
from loadtower.store.runs_list import RunListing, list_runs
from loadtower.store.terminal_text import visible
from loadtower.tui.screens.history import HistoryScreen
from loadtower.tui.widgets.confirm import Confirm

COLUMNS = ("name", "id", "scenario", "status", "started (UTC)", "length", "peak ops/s", "p99 ms")
FITTED = (0, 2)  # name and scenario: cut short (…) when the table is wider than the screen
MIN_FITTED = 8
MARK = "● "
SORTS = ("started", "name", "status", "duration", "peak_ops", "p99_ms")
RELOAD_S = 5.0
STATUS_STYLE = {"running": "bold green", "completed": "", "failed": "bold red",
                "interrupted": "yellow"}


def duration(run: RunListing) -> float:
    end = run.ended or (time.time() if run.status == "running" else run.started)
    return float(end) - float(run.started)


def fitted_widths(cells: list[tuple[str, ...]], width: int, padding: int = 1) -> dict[int, int]:
    """Widths for the FITTED columns so that every column fits in `width` cells (no
    horizontal scrolling at 100 columns); {} when everything fits as it is."""
    need = [max([cell_len(label)] + [cell_len(row[i]) for row in cells])
            for i, label in enumerate(COLUMNS)]
    over = sum(need) + 2 * padding * len(COLUMNS) - width
    if width <= 0 or over <= 0:
        return {}
    widths = {i: need[i] for i in FITTED}
    while over > 0:
        widest = max(FITTED, key=lambda i: widths[i])
        if widths[widest] <= MIN_FITTED:
            break  # a very narrow terminal: the table scrolls sideways
        widths[widest] -= 1
        over -= 1
    return widths


class RunsTable(DataTable):
    """The runs; enter opens the run under the cursor (shown in the footer)."""

    BINDINGS = [Binding("enter", "screen.open", "Open")]


class RunsScreen(Screen):
    DEFAULT_CSS = """
    RunsScreen #filter { dock: top; margin: 0 1; display: none; }
    RunsScreen #filter.visible { display: block; }
    RunsScreen #runs-status { height: 1; padding: 0 1; color: $text-muted; }
    RunsScreen DataTable { height: 1fr; }
    """
    BINDINGS = [
        Binding("enter", "open", "Open", tooltip="The run under the cursor: live if running, "
                "else its replay"),
        Binding("space", "mark", "Mark", tooltip="Mark or unmark the run (two to compare)"),
        Binding("c", "compare", "Compare", tooltip="The two marked runs side by side, or "
                "the engines of one run with several targets"),
        Binding("h", "history", "History", show=False, tooltip="The runs of the scenario of "
                "the run under the cursor, in time order, with their change points"),
        Binding("slash", "filter", "Filter", tooltip="Show the runs whose name, scenario, "
                "status or id holds a text"),
        Binding("o", "sort", "Sort", tooltip="Sort by the next key: started, name, status, "
                "length, peak ops/s, p99"),
        Binding("d", "delete", "Delete", tooltip="Delete the run and all its samples (asks "
                "first)"),
        Binding("r", "reload", "Reload", show=False, tooltip="Read the store again"),
        Binding("N", "app.start_run", "Start run"),
        Binding("2", "app.sql", "SQL"),
    ]

    def __init__(self, store: Path) -> None:
        super().__init__()
        self.store = store
        self.runs: list[RunListing] = []
        self.marked: list[str] = []
        self.sort_index = 0
        self.filter_text = ""

    def compose(self) -> ComposeResult:
        yield Header()
        yield Input(placeholder="filter: name, scenario or status (enter to keep, escape to clear)",
                    id="filter")
        yield RunsTable(id="runs", cursor_type="row", zebra_stripes=True)
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

    def on_resize(self) -> None:
        self.call_after_refresh(self._refit)

    def _refit(self) -> None:
        """Draw the rows again for the new width (names cut short to fit, or not)."""
        self._show(self.runs)

    @work(thread=True, exclusive=True, group="runs")
    def reload(self) -> None:
        runs = list_runs(self.store)
        self.app.call_from_thread(self._show, runs)

    def action_reload(self) -> None:
        self.reload()

    def shown_runs(self) -> list[RunListing]:
        text = self.filter_text.lower()
        rows = [r for r in self.runs if not text or text in
                f"{r.name} {r.scenario} {r.status} {r.id}".lower()]
        key = SORTS[self.sort_index]
        getter = duration if key == "duration" else (lambda r: getattr(r, key) or 0)
        return sorted(rows, key=getter, reverse=key in ("started", "duration", "peak_ops",
                                                        "p99_ms"))

    def _show(self, runs: list[RunListing]) -> None:
        self.runs = runs
        present = {r.id for r in runs}
        self.marked = [m for m in self.marked if m in present]  # a deleted run is unmarked
        if hasattr(self.app, "known_runs"):
            self.app.known_runs = runs  # for the command palette
        table = self.query_one(DataTable)
        current = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value \
            if table.row_count else None
        shown = self.shown_runs()
        cells = [self._cells(run) for run in shown]
        widths = fitted_widths(cells, self._room(table, len(cells)), table.cell_padding)
        table.clear()
        for run, row in zip(shown, cells, strict=True):
            texts = [Text(cell) for cell in row]
            for i, width in widths.items():
                texts[i].truncate(width, overflow="ellipsis")
            if run.id in self.marked:
                texts[0].stylize("bold magenta")
            texts[3].stylize(STATUS_STYLE.get(run.status, ""))
            for i in (5, 6, 7):
                texts[i].justify = "right"
            table.add_row(*texts, key=run.id)
        if current is not None and current in table.rows:
            table.move_cursor(row=table.get_row_index(current))
        sort = SORTS[self.sort_index]
        self.query_one("#runs-status", Static).update(Text(visible(
            f"{table.row_count} of {len(runs)} runs in {self.store}  sorted by {sort}"
            + (f"  filter '{self.filter_text}'" if self.filter_text else "")
            + (f"  marked: {', '.join(self.marked)}" if self.marked else ""), False
        )))

    def _cells(self, run: RunListing) -> tuple[str, ...]:
        """One row as plain text (stored names are never read as markup, and their
        control characters are spelled out)."""
        p99 = f"{run.p99_ms:.2f}" if run.p99_ms is not None else "-"
        return (
            (MARK if run.id in self.marked else "") + visible(run.name, False),
            visible(run.id, False), visible(run.scenario, False),
            visible(run.status, False),
            time.strftime("%Y-%m-%d %H:%M", time.gmtime(run.started)),
            f"{duration(run):,.0f} s", f"{run.peak_ops:,.0f}", p99,
        )

    @staticmethod
    def _room(table: DataTable, rows: int) -> int:
        """The width the columns may take: the table's, less a vertical scrollbar when
        the rows will not all fit (0 before the first layout: nothing is cut then)."""
        width = table.size.width
        if rows > table.size.height - 1:
            width -= table.styles.scrollbar_size_vertical
        return width

    def selected(self) -> RunListing | None:
        table = self.query_one(DataTable)
        if not table.row_count:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        return next((r for r in self.runs if r.id == key), None)

    def action_open(self) -> None:
        run = self.selected()
        if run is not None:
            self.app.open_run(run.id, live=run.status == "running")  # type: ignore[attr-defined]

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_open()

    def action_mark(self) -> None:
        run = self.selected()
        if run is None:
            return
        if run.id in self.marked:
            self.marked.remove(run.id)
        else:
            self.marked = (self.marked + [run.id])[-2:]
        self._show(self.runs)

    def action_compare(self) -> None:
        """Two marked runs side by side; else the engines of the one marked run (or of the
        run under the cursor), a run with several targets (e.g. ycsb-suite)."""
        if len(self.marked) == 2:
            self.app.open_compare(*self.marked)  # type: ignore[attr-defined]
            return
        run = self.marked[0] if self.marked else getattr(self.selected(), "id", None)
        if run is None:
            self.notify("mark two runs with space first", severity="warning")
            return
        self._engines_of(run)

    @work(thread=True, exclusive=True, group="engines")
    def _engines_of(self, run_id: str) -> None:
        """The engines screen when the run ran several targets, else a warning (the
        store is read here, off the UI thread)."""
        try:
            sides = len(run_sides(self.store, run_id))
        except LoadtowerError as exc:
            self.app.call_from_thread(self.notify, visible(str(exc).splitlines()[0], False),
                                  severity="error", markup=False)
            return
        if sides > 1:
            self.app.call_from_thread(self.app.open_engines, run_id)  # type: ignore[attr-defined]
            return
        what = "ran one target" if sides else "has no ops stored"
        self.app.call_from_thread(
            self.notify, f"run {visible(run_id, False)} {what}: mark two runs with space to "
            "compare them", severity="warning", markup=False)

    def action_history(self) -> None:
        """The scenario's run history: its runs in time order, change points marked."""
        run = self.selected()
        if run is None or not run.scenario:
            self.notify("no run under the cursor", severity="warning")
            return
        self.app.push_screen(HistoryScreen(self.store, run.scenario))

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
        if run.status == "running":
            self.notify("a running run cannot be deleted; stop it first", severity="error")
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self._delete(run.id)

        self.app.push_screen(
            Confirm(f"Delete run {run.id} ({run.name}) and all its samples?", "Delete"),
            answered,
        )

    @work(thread=True, group="delete")
    def _delete(self, run_id: str) -> None:
        try:
            delete_run(self.store, run_id)
        except Exception as exc:  # noqa: BLE001 - shown to the operator, the app goes on
            self.app.call_from_thread(self.notify, visible(f"delete failed: {exc}"),
                                      severity="error", markup=False)
            return
        self.app.call_from_thread(self.notify, visible(f"deleted run {run_id}"), markup=False)
        self.reload()
