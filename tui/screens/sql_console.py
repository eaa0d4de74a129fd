"""SqlScreen: a read-only SQL console over a loadtower store."""

from __future__ import annotations

import csv
import math
import re
import threading
import time
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static, TextArea, Tree
from textual.worker import get_current_worker

from loadtower.errors import LoadtowerError
from loadtower.store.query_cancel import QueryCancelled
from loadtower.store.terminal_text import visible
from loadtower.tui.widgets.sql_editor import SqlEditor

MAX_SHOWN = 1000
MAX_CELL = 80
_SIMPLE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
TABLES_SQL = ("SELECT table_name, table_type FROM information_schema.tables "
              "WHERE table_schema = 'main' ORDER BY table_name")
COLUMNS_SQL = ("SELECT table_name, column_name, data_type FROM information_schema.columns "
               "WHERE table_schema = 'main' ORDER BY table_name, ordinal_position")


def format_cell(value: Any) -> str:
    """A table cell on one line: floats with at most 4 decimals, line breaks shown as ↵,
    control characters spelled out (\\x1b), long values cut short."""
    if value is None:
        return "NULL"
    if isinstance(value, float | Decimal) and math.isfinite(value):
        text = f"{value:.4f}".rstrip("0").rstrip(".")
        if text in ("0", "-0") and value != 0:
            text = f"{value:.4g}"
        return text
    if isinstance(value, bytes | bytearray | memoryview):
        return f"<{len(bytes(value))} bytes>"
    text = visible(str(value).replace("\r\n", "↵").replace("\n", "↵").replace("\t", " "))
    return text if len(text) <= MAX_CELL else text[: MAX_CELL - 1] + "…"


def cell(value: Any) -> Text:
    """A cell as plain text: stored values are never read as markup."""
    return Text(format_cell(value), no_wrap=True)


def fetch(store: Path, query: str, cap: int, cancel: threading.Event | None = None
          ) -> tuple[list[str], list[tuple], bool]:
    """The columns and at most `cap` rows of `query`, and whether it had more: the
    reader fetches `cap + 1` rows and never reads the rest. Setting `cancel` stops the
    query (QueryCancelled)."""
    columns, rows = _reader(store).sql(query, max_rows=cap + 1, cancel=cancel)
    return list(columns), list(rows[:cap]), len(rows) > cap


def _reader(store: Path) -> Any:
    # deferred: the reader loads duckdb, only when the screen queries
    from loadtower.store import StoreReader

    return StoreReader(store)


def _set_sql_language(editor: TextArea) -> None:
    """SQL highlighting when the tree-sitter grammar is installed, plain text otherwise."""
    try:
        from textual._tree_sitter import TREE_SITTER, get_language

        if "sql" in editor.available_languages and TREE_SITTER and get_language("sql"):
            editor.language = "sql"
    except Exception:  # a missing grammar means plain text, never a crash
        editor.language = None


class SqlScreen(Screen):
    """Schema tree on the left; editor, results and status on the right."""

    DEFAULT_CSS = """
    SqlScreen #sql-schema { width: 34; border-right: solid $primary-darken-2; }
    SqlScreen #sql-main { width: 1fr; }
    SqlScreen #sql-editor { height: 10; }
    SqlScreen #sql-results { height: 1fr; }
    SqlScreen #sql-status { height: 1; padding: 0 1; }
    SqlScreen #sql-status.error { color: $error; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+r", "run", "Run query", priority=True, tooltip="Run the editor's query"),
        Binding("f5", "run", "Run query", priority=True),
        Binding("ctrl+up", "history(-1)", "Prev query", priority=True,
                tooltip="The query before, from this session's history"),
        Binding("ctrl+down", "history(1)", "Next query", priority=True,
                tooltip="The query after, from this session's history"),
        Binding("ctrl+k", "cancel_query", "Cancel", priority=True,
                tooltip="Stop the running query (or export); leaving the console stops it too"),
        Binding("ctrl+e", "export", "Export CSV", priority=True,
                tooltip="Write the whole result to a CSV file in the working directory"),
        Binding("escape", "back", "Back", tooltip="Back to the screen before"),
    ]

    def __init__(self, store: Path, initial_query: str = "",
                 export_dir: Path | None = None, history: list[str] | None = None) -> None:
        """`history`: a list the screen adds its queries to (the app passes its own, so
        the history outlives the screen); the editor opens with its last query."""
        super().__init__()
        self.history: list[str] = history if history is not None else []
        self._history_pos, self._draft = len(self.history), ""
        if not initial_query and self.history:  # ctrl+up goes on to the one before it
            initial_query, self._history_pos = self.history[-1], len(self.history) - 1
        self.store, self.initial_query, self.export_dir = Path(store), initial_query, export_dir
        self.last_query: str | None = None
        self.last_columns: list[str] = []
        self.last_rows: list[tuple] = []
        self.truncated = False
        self.last_error: str | None = None
        # set to stop the running query / export: by the cancel key, a newer query, and
        # leaving the screen (a query left running would hold the store and the app's exit)
        self._cancels: dict[str, threading.Event] = {}
        self.cancelled = 0  # queries and exports stopped (tests)

    def compose(self) -> ComposeResult:
        tree: Tree[tuple[str, str]] = Tree("tables", id="sql-schema")
        tree.show_root = False
        with Horizontal():
            yield tree
            with Vertical(id="sql-main"):
                yield SqlEditor(visible(self.initial_query), id="sql-editor", soft_wrap=True)
                yield DataTable(id="sql-results", zebra_stripes=True)
                yield Static("ctrl+r / F5 runs the query", id="sql-status", markup=False)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        editor = self.query_one("#sql-editor", TextArea)
        _set_sql_language(editor)
        editor.focus()
        self._load_schema()

    @work(thread=True, exclusive=True, group="sql-schema")
    def _load_schema(self) -> None:
        try:
            reader = _reader(self.store)
            tables, columns = reader.sql(TABLES_SQL)[1], reader.sql(COLUMNS_SQL)[1]
        except Exception as exc:  # shown inline
            self._post(self._set_status, f"cannot read the schema: {exc}", True)
            return
        self._post(self._fill_schema, tables, columns)

    def _fill_schema(self, tables: list[tuple], columns: list[tuple]) -> None:
        tree = self.query_one("#sql-schema", Tree)
        tree.clear()
        nodes = {}
        for name, kind in tables:
            label = f"{name} (view)" if "VIEW" in str(kind).upper() else str(name)
            nodes[name] = tree.root.add(Text(visible(label, False)), data=("table", str(name)))
        for table, column, dtype in columns:
            if table in nodes:
                nodes[table].add_leaf(Text(visible(f"{column}  {dtype}", False)),
                                      data=("column", str(table)))

    def on_tree_node_selected(self, event: Tree.NodeSelected) -> None:
        data = event.node.data
        if data and data[0] == "table":
            name = data[1] if _SIMPLE_NAME.match(data[1]) else '"' + data[1].replace('"', '""') + '"'
            self.query_one("#sql-editor", TextArea).load_text(f"SELECT * FROM {name} LIMIT 100")

    def run_query(self, query: str) -> None:
        """Put `query` in the editor and run it in a worker thread."""
        editor = self.query_one("#sql-editor", TextArea)
        if editor.text != visible(query):
            editor.load_text(query)  # (shown with its control characters spelled out)
        query = query.strip()
        if not query:
            self._set_status("nothing to run", True)
            return
        if not self.history or self.history[-1] != query:
            self.history.append(query)
        self._history_pos, self._draft = len(self.history), ""
        self._set_status("running… (ctrl+k cancels)", False)
        self._execute(query, self._new_cancel("query"))

    def _new_cancel(self, what: str) -> threading.Event:
        """A fresh cancel event for `what` ("query", "export"); the one before is set."""
        old = self._cancels.get(what)
        if old is not None:
            old.set()
        event = self._cancels[what] = threading.Event()
        self.refresh_bindings()
        return event

    @property
    def busy(self) -> bool:
        """A query or an export is running."""
        return any(not e.is_set() for e in self._cancels.values())

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel_query":
            return True if self.busy else None  # shown, greyed out while nothing runs
        return True

    def action_cancel_query(self) -> None:
        """Stop the running query (or export)."""
        stopped = self.cancel_all()
        if not stopped:
            self._set_status("no query is running", False)
        else:
            self._set_status("cancelling…", False)

    def cancel_all(self) -> int:
        """Set every running query's and export's cancel event; how many were running."""
        running = [e for e in self._cancels.values() if not e.is_set()]
        for event in running:
            event.set()
        if running and self.is_mounted:
            self.refresh_bindings()  # the footer greys the cancel key out again
        return len(running)

    def on_unmount(self) -> None:
        self.cancel_all()  # the console left (or the app quit): its query stops with it

    def _finished(self, event: threading.Event) -> None:
        event.set()  # (a no-op if cancelled) the cancel key has nothing left to stop
        if self.is_mounted:
            self.refresh_bindings()

    @work(thread=True, exclusive=True, group="sql-query")
    def _execute(self, query: str, cancel: threading.Event) -> None:
        started = time.perf_counter()
        try:
            columns, rows, more = fetch(self.store, query, MAX_SHOWN, cancel)
        except QueryCancelled:
            self.cancelled += 1  # here: the screen may be gone already (left, or the app quit)
            self._post(self._cancelled, cancel, "query", time.perf_counter() - started)
            return
        except LoadtowerError as exc:
            result: tuple = (None, None, False, str(exc))
        except Exception as exc:  # never a traceback, never a crash
            result = (None, None, False, f"{type(exc).__name__}: {exc}")
        else:
            result = (columns, rows, more, None)
        self._post(self._finished, cancel)
        if not get_current_worker().is_cancelled:
            self._post(self._show_result, query, *result,
                       (time.perf_counter() - started) * 1000)

    def _cancelled(self, event: threading.Event, what: str, seconds: float) -> None:
        self._finished(event)
        if self.is_mounted and self._cancels.get(what) is event:  # not a superseded one
            self._set_status(f"{what} cancelled after {seconds:.1f} s", True)

    def _post(self, callback: Any, *args: Any) -> None:
        try:
            self.app.call_from_thread(callback, *args)
        except Exception:  # the app is shutting down
            pass

    def _show_result(self, query: str, columns: list[str] | None, rows: list[tuple] | None,
                     more: bool, error: str | None, elapsed_ms: float) -> None:
        table = self.query_one("#sql-results", DataTable)
        table.clear(columns=True)
        self.last_error = error
        self.last_query = None if error is not None else query
        self.last_columns, self.last_rows, self.truncated = columns or [], rows or [], more
        if error is not None:
            self._set_status(error, True)
            return
        for name in self.last_columns:
            table.add_column(Text(visible(name, keep_newlines=False)))
        table.add_rows([tuple(cell(v) for v in row) for row in self.last_rows])
        if more:
            status = (f"first {len(self.last_rows)} rows shown, the result has more "
                      f"({elapsed_ms:.1f} ms); ctrl+e exports them all")
        else:
            status = f"{len(self.last_rows)} rows in {elapsed_ms:.1f} ms"
        self._set_status(status, False)

    def _set_status(self, message: str, error: bool) -> None:
        status = self.query_one("#sql-status", Static)
        status.set_class(error, "error")
        status.update(Text(visible(message.replace("\n", " ")), style="red" if error else ""))

    def action_run(self) -> None:
        self.run_query(self.query_one("#sql-editor", TextArea).text)

    def action_history(self, step: int) -> None:
        if not self.history:
            return
        editor = self.query_one("#sql-editor", TextArea)
        if self._history_pos == len(self.history):
            self._draft = editor.text
        self._history_pos = max(0, min(len(self.history), self._history_pos + step))
        pos = self._history_pos
        editor.load_text(self.history[pos] if pos < len(self.history) else self._draft)

    def action_export(self) -> None:
        if self.last_query is None:
            self._set_status("nothing to export: run a query first", True)
            return
        folder = self.export_dir if self.export_dir is not None else Path.cwd()
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
        path = folder / f"loadtower-query-{stamp}.csv"
        n = 1
        while path.exists():
            path, n = folder / f"loadtower-query-{stamp}-{n}.csv", n + 1
        self._set_status(f"exporting to {path} …", False)
        shown = None if self.truncated else (list(self.last_columns), self.last_rows)
        self._export(self.last_query, shown, path, self._new_cancel("export"))

    @work(thread=True, exclusive=True, group="sql-export")
    def _export(self, query: str, shown: tuple[list[str], list[tuple]] | None,
                path: Path, cancel: threading.Event) -> None:
        """The whole result: the rows shown, or when they were cut short, the query's
        rows read again."""
        started = time.perf_counter()
        try:
            columns, rows = (shown if shown is not None
                             else _reader(self.store).sql(query, cancel=cancel))
            with path.open("w", newline="", encoding="utf-8") as fh:
                writer = csv.writer(fh)
                writer.writerow(columns)
                writer.writerows(rows)
        except QueryCancelled:
            self.cancelled += 1
            self._post(self._cancelled, cancel, "export", time.perf_counter() - started)
            return
        except (LoadtowerError, OSError) as exc:
            self._post(self._finished, cancel)
            self._post(self._set_status, f"export failed: {exc}", True)
            return
        self._post(self._finished, cancel)
        self._post(self._set_status, f"wrote {len(rows)} rows to {path}", False)

    def action_back(self) -> None:
        if len(self.app.screen_stack) > 1:
            self.app.pop_screen()
