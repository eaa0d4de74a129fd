"""Start a scenario against an inventory from the TUI: pick, validate, start."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static

from loadtower.defaults import default_sandbox_dir


class StartRun(ModalScreen[tuple[str, Path] | None]):
    DEFAULT_CSS = """
    StartRun { align: center middle; }
    StartRun > Vertical { width: 90; height: auto; max-height: 100%; border: thick $accent; background: $surface; padding: 1 2; }
    StartRun #start-plan-box { height: 1fr; min-height: 4; margin-top: 1; }
    StartRun #start-plan { height: auto; }
    StartRun Horizontal { height: auto; align: right middle; margin-top: 1; }
    StartRun Button { margin-left: 2; }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, store: Path) -> None:
        super().__init__()
        self.store = store
        self.valid = False

    def compose(self) -> ComposeResult:
        inventory = Path(default_sandbox_dir()) / "inventory.toml"
        with Vertical():
            yield Label("Scenario (a file or a built-in name: quickstart, ycsb-a, recipes-mix, ...)")
            yield Input(value="quickstart", id="start-scenario")
            yield Label("Inventory file")
            yield Input(value=str(inventory) if inventory.exists() else "", id="start-inventory")
            yield Label("Overrides (KEY=VALUE separated by spaces, e.g. phases[1].duration=20s)")
            yield Input(value="", id="start-overrides")
            with VerticalScroll(id="start-plan-box"):  # a long plan scrolls, never cut off
                yield Static("", id="start-plan")
            with Horizontal():
                yield Button("Validate", id="validate")
                yield Button("Start", id="start", variant="success", disabled=True)

    def _values(self) -> tuple[str, Path, list[str]]:
        scenario = self.query_one("#start-scenario", Input).value.strip()
        overrides = self.query_one("#start-overrides", Input).value.split()
        return scenario, Path(self.query_one("#start-inventory", Input).value.strip()), overrides

    def on_input_changed(self) -> None:
        self.valid = False
        self.query_one("#start", Button).disabled = True

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "validate":
            self.validate_plan()
        elif event.button.id == "start" and self.valid:
            event.button.disabled = True
            self.query_one("#start-plan", Static).update("starting ...")
            self.start()

    @work(thread=True, exclusive=True)
    def validate_plan(self) -> None:
        from loadtower.errors import LoadtowerError
        from loadtower.scenarios.plan import load_plan, render_plan

        scenario, inventory, overrides = self._values()
        try:
            plan = load_plan(scenario, inventory, overrides, None)
            text, ok = render_plan(plan), True
        except LoadtowerError as exc:  # not markup: the message may hold [brackets]
            text, ok = Text(str(exc), style="red"), False
        self.app.call_from_thread(self._validated, text, ok)

    def _validated(self, text: object, ok: bool) -> None:
        self.valid = ok
        self.query_one("#start-plan", Static).update(text)  # type: ignore[arg-type]
        self.query_one("#start", Button).disabled = not ok

    @work(thread=True, exclusive=True)
    def start(self) -> None:
        from loadtower.errors import LoadtowerError
        from loadtower.scenarios.orchestrator.control import default_control_path
        from loadtower.tui.run_process import start_headless

        scenario, inventory, overrides = self._values()
        extra = [arg for item in overrides for arg in ("--set", item)]
        try:
            started = start_headless(scenario, inventory, self.store, extra)
        except LoadtowerError as exc:
            self.app.call_from_thread(self._validated, Text(str(exc), style="red"), False)
            return
        getattr(self.app, "started_runs", []).append(started)
        control = default_control_path(self.store, started.run_id)
        self.app.call_from_thread(self.dismiss, (started.run_id, control))

    def action_cancel(self) -> None:
        self.dismiss(None)
