"""The loadtower TUI: runs, live and replayed dashboards, SQL console, compare."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from textual.app import App, SystemCommand
from textual.screen import Screen

from loadtower.scenarios.control_api import control_path as default_control_path
from loadtower.store.terminal_text import visible
from loadtower.tui.actions import all_actions, bindings, screen_actions
from loadtower.tui.palette import ActionCommands
from loadtower.tui.screens.engines import EnginesScreen
from loadtower.tui.screens.sql_console import SqlScreen
from loadtower.tui.screens.start_run import StartRun
from loadtower.tui.widgets.keys_help import KeysHelp

if TYPE_CHECKING:
    from loadtower.scenarios.control_api import StartedRun
    from loadtower.store.runs_list import RunListing

THEMES = ("textual-dark", "nord", "gruvbox", "tokyo-night", "textual-light")
REPLACED_SYSTEM_COMMANDS = {"Keys", "Quit"}  # ours: the keys help and a quit that says more


class LoadtowerApp(App[None]):
    TITLE = "loadtower"
    BINDINGS = bindings()
    COMMANDS = App.COMMANDS | {ActionCommands}

    def __init__(self, store: Path, open_run: str | None = None, live: bool = False,
                 control_path: Path | None = None) -> None:
        super().__init__()
        self.store = Path(store)
        self.initial = (open_run, live, control_path)
        self.known_runs: list[RunListing] = []
        self.started_runs: list[StartedRun] = []  # runs started from this app
        self.sql_history: list[str] = []  # the SQL console's queries, kept while the app runs

    def on_mount(self) -> None:
        # deferred: the runs screen loads duckdb, pyarrow and numpy (the app itself: textual)
        from loadtower.tui.screens.runs import RunsScreen

        self.sub_title = visible(self.store, False)
        self.push_screen(RunsScreen(self.store))
        run_id, live, control = self.initial
        if run_id:
            self.open_run(run_id, live, control)

    # ------------------------------------------------------------------ navigation
    def open_run(self, run_id: str, live: bool = False, control_path: Path | None = None) -> None:
        # deferred: the dashboard loads duckdb and numpy (the app itself: textual)
        from loadtower.tui.screens.dashboard import RunDashboard

        if live and control_path is None:
            control_path = default_control_path(self.store, run_id)
        self.push_screen(RunDashboard(self.store, run_id, live=live, control_path=control_path))

    def open_compare(self, run_a: str, run_b: str) -> None:
        # deferred: the compare screen loads numpy (the app itself: textual)
        from loadtower.tui.screens.compare import CompareScreen

        self.push_screen(CompareScreen(self.store, run_a, run_b))

    def open_engines(self, run_id: str) -> None:
        """The engines table of one run with several targets."""
        self.push_screen(EnginesScreen(self.store, [run_id]))

    def _to_base(self) -> None:
        while len(self.screen_stack) > 2:
            self.pop_screen()

    def action_runs(self) -> None:
        self._to_base()

    def action_sql(self) -> None:
        if not isinstance(self.screen, SqlScreen):
            self.push_screen(SqlScreen(self.store, history=self.sql_history))

    def action_start_run(self) -> None:
        def started(result: tuple[str, Path] | None) -> None:
            if result:
                self.open_run(result[0], live=True, control_path=result[1])

        self.push_screen(StartRun(self.store), started)

    def action_next_theme(self) -> None:
        names = [t for t in THEMES if t in self.available_themes]
        current = names.index(self.theme) if self.theme in names else -1
        self.theme = names[(current + 1) % len(names)]
        self.notify(f"theme: {self.theme}")

    def action_help(self) -> None:
        if isinstance(self.screen, KeysHelp):
            self.screen.dismiss(None)
            return
        own = screen_actions(self.screen)
        self.push_screen(KeysHelp(own, all_actions(self.screen)[len(own):]))

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        for command in super().get_system_commands(screen):
            if command.title not in REPLACED_SYSTEM_COMMANDS:
                yield command
