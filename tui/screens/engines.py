"""The engines of one run with several targets (or of two runs) side by side: study 4's
table, per phase (workload), op type and engine, the rows of
store.engine_compare.engine_table in the very text `loadtower compare RUN` prints
(store.engine_text.engine_lines), so the same quantity reads the same in the CLI, the
report and here. Read in a worker thread; rows keyed by (phase, op, target)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from loadtower.errors import LoadtowerError
from loadtower.store.engine_text import ENGINE_COLUMNS, ENGINE_TEXT_COLUMNS, engine_lines
from loadtower.store.terminal_text import markup_safe, visible

CODES_WIDTH = 26  # "OK 12,345, ReadTimeout 23,": longer return codes fold onto more lines
LEGEND = ("[dim]response time (from the intended start), ms; 'total' merges every op; "
          "return codes: OK and the errors by class[/]")


def engine_key(row: dict[str, Any]) -> str:
    """A row's key in the table: its phase, op and side (unique in engine_table)."""
    return f"{row['phase']}\x1f{row['op']}\x1f{row['target']}"


def engine_row_cells(cells: tuple[str, ...]) -> tuple[Text, ...]:
    """engine_lines' text as DataTable cells: text columns left, figures right."""
    return tuple(
        Text(visible(text, False)) if column in ENGINE_TEXT_COLUMNS
        else Text(text, justify="right")
        for column, text in zip(ENGINE_COLUMNS, cells, strict=True)
    )


def add_engine_columns(table: DataTable) -> None:
    """ENGINE_COLUMNS, keyed by name; the return codes fold so the table fits 120 columns."""
    for column in ENGINE_COLUMNS:
        table.add_column(column, key=column,
                         width=CODES_WIDTH if column == "return codes" else None)


def fill_engine_table(table: DataTable, rows: list[dict[str, Any]],
                      lines: list[tuple[bool, tuple[str, ...]]]) -> None:
    """engine_table's rows (and engine_lines' text of them) into `table`, keyed by row."""
    table.clear()
    for row, (_new_phase, cells) in zip(rows, lines, strict=True):
        table.add_row(*engine_row_cells(cells), key=engine_key(row), height=None)


class EnginesScreen(Screen):
    DEFAULT_CSS = """
    EnginesScreen #engines-title { height: auto; padding: 0 1; }
    EnginesScreen #engines-table { height: 1fr; }
    """
    BINDINGS = [Binding("escape", "back", "Back", tooltip="Back to the runs")]

    def __init__(self, store: Path, run_ids: list[str]) -> None:
        super().__init__()
        self.store, self.run_ids = store, list(run_ids)
        self.rows: list[dict[str, Any]] = []
        self.error: str | None = None

    def _runs_text(self) -> str:
        return "  vs  ".join(markup_safe(r) for r in self.run_ids)

    def compose(self) -> ComposeResult:
        yield Static(f"[b]Engines[/b] {self._runs_text()}   [dim]reading…[/]\n" + LEGEND,
                     id="engines-title")
        yield DataTable(id="engines-table", cursor_type="row", zebra_stripes=True)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        add_engine_columns(self.query_one("#engines-table", DataTable))
        self.load()

    @work(thread=True, exclusive=True)
    def load(self) -> None:
        # deferred: engine_compare loads duckdb, pyarrow and numpy (this screen: textual)
        from loadtower.store.engine_compare import engine_table, run_sides

        try:
            if len(self.run_ids) == 1 and len(run_sides(self.store, self.run_ids[0])) < 2:
                raise LoadtowerError(f"run {self.run_ids[0]} ran one target: mark two runs "
                                     "(space) to compare them")  # fmt: skip
            rows = engine_table(self.store, self.run_ids)
            if not rows:
                raise LoadtowerError(f"no ops stored for run(s) {', '.join(self.run_ids)}")
            lines = engine_lines(rows)
        except LoadtowerError as exc:
            self.app.call_from_thread(self._failed, (str(exc).splitlines() or ["?"])[0])
            return
        self.app.call_from_thread(self._show, rows, lines)

    def _failed(self, message: str) -> None:
        self.error = message
        self.query_one("#engines-title", Static).update(Text.assemble(
            ("Engines", "bold"), f" {visible('  vs  '.join(self.run_ids), False)}\n",
            (f"cannot compare: {visible(message, False)}", "bold red")))

    def _show(self, rows: list[dict[str, Any]],
              lines: list[tuple[bool, tuple[str, ...]]]) -> None:
        self.rows = rows
        fill_engine_table(self.query_one("#engines-table", DataTable), rows, lines)
        sides = list(dict.fromkeys(r["target"] for r in rows))
        self.query_one("#engines-title", Static).update(
            f"[b]Engines[/b] {self._runs_text()}: {markup_safe(', '.join(sides))}\n" + LEGEND)

    def action_back(self) -> None:
        if len(self.app.screen_stack) > 1:
            self.app.pop_screen()
