"""The loadtower TUI: runs, live and replayed dashboards, SQL console, compare."""

from __future__ import annotations

from collections.abc import AsyncIterator
from functools import partial
from pathlib import Path

from textual.app import App
from textual.command import DiscoveryHit, Hit, Provider

from loadtower.tui.actions import APP_ACTIONS, bindings

THEMES = ("textual-dark", "nord", "gruvbox", "tokyo-night", "textual-light")


class ActionCommands(Provider):
    """The app's actions (and its runs) in the command palette."""

    def _commands(self) -> list[tuple[str, str, object]]:
        app = self.app
        assert isinstance(app, LoadtowerApp)
        found: list[tuple[str, str, object]] = [
            (a.title, a.help, partial(app.run_action, a.action)) for a in APP_ACTIONS
        ]
        for run in app.known_runs[:50]:
            found.append((f"Open run {run['name']} {run['id']}", f"{run['status']}",
                          partial(app.open_run, run["id"], run["status"] == "running")))
        return found

    async def discover(self) -> AsyncIterator[DiscoveryHit]:
        for title, help_text, callback in self._commands():
            yield DiscoveryHit(title, callback, help=help_text)  # type: ignore[arg-type]

    async def search(self, query: str) -> AsyncIterator[Hit]:
        matcher = self.matcher(query)
        for title, help_text, callback in self._commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), callback, help=help_text)  # type: ignore[arg-type]


class LoadtowerApp(App[None]):
    TITLE = "loadtower"
    BINDINGS = bindings()
    COMMANDS = App.COMMANDS | {ActionCommands}

    def __init__(self, store: Path, open_run: str | None = None, live: bool = False,
                 control_path: Path | None = None) -> None:
        super().__init__()
        self.store = Path(store)
        self.initial = (open_run, live, control_path)
        self.known_runs: list[dict] = []
        self.started_runs: list = []  # runs started from this app (tui.run_process.StartedRun)

    def on_mount(self) -> None:
        from loadtower.tui.screens.runs import RunsScreen

        self.sub_title = str(self.store)
        self.push_screen(RunsScreen(self.store))
        run_id, live, control = self.initial
        if run_id:
            self.open_run(run_id, live, control)

    # ------------------------------------------------------------------ navigation
    def open_run(self, run_id: str, live: bool = False, control_path: Path | None = None) -> None:
        from loadtower.scenarios.orchestrator.control import default_control_path
        from loadtower.tui.screens.dashboard import RunDashboard

        if live and control_path is None:
            control_path = default_control_path(self.store, run_id)
        self.push_screen(RunDashboard(self.store, run_id, live=live, control_path=control_path))

    def open_compare(self, run_a: str, run_b: str) -> None:
        from loadtower.tui.screens.compare import CompareScreen

        self.push_screen(CompareScreen(self.store, run_a, run_b))

    def _to_base(self) -> None:
        while len(self.screen_stack) > 2:
            self.pop_screen()

    def action_runs(self) -> None:
        self._to_base()

    def action_sql(self) -> None:
        from loadtower.tui.screens.sql_console import SqlScreen

        if not isinstance(self.screen, SqlScreen):
            self.push_screen(SqlScreen(self.store))

    def action_start_run(self) -> None:
        from loadtower.tui.screens.start_run import StartRun

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
        if self.screen.query("HelpPanel"):
            self.action_hide_help_panel()
        else:
            self.action_show_help_panel()
