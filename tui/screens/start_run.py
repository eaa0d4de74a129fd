"""Start a scenario against an inventory from the TUI: pick, validate, start.

The scenario is typed, chosen from the built-in list, or picked from a directory tree
(.toml files); so is the inventory. Every change is validated as you go (after a short
pause in typing), with the same checks as `loadtower validate`; Start is enabled only
for a plan that passed them."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.timer import Timer
from textual.widgets import Button, Input, Label, Select, Static

from loadtower.defaults import default_sandbox_dir
from loadtower.errors import LoadtowerError
from loadtower.scenarios.control_api import builtin_scenarios as scenario_names
from loadtower.scenarios.control_api import control_path, plan_lines, start_run
from loadtower.store.terminal_text import visible
from loadtower.tui.widgets.file_picker import FilePicker, start_folder

TYPING_PAUSE_S = 0.4  # validate once typing stops for this long

Values = tuple[str, Path, list[str]]
PLAN_WIDTH = 88  # the plan box's inner width (the dialog is 96 wide)


def lines_text(lines: list[str]) -> Text:
    """The plan's lines (control_api.plan_lines) as shown: never read as markup (a
    scenario named "x[/]" is shown as written), control characters spelled out."""
    return Text(visible("\n".join(lines)), no_wrap=True, overflow="ignore")


def error_text(message: object) -> Text:
    return Text(visible(message), style="red")


def builtin_scenarios() -> list[str]:
    return scenario_names()


class StartRun(ModalScreen[tuple[str, Path] | None]):
    DEFAULT_CSS = """
    StartRun { align: center middle; }
    StartRun > Vertical { width: 96; max-width: 100%; height: auto; max-height: 100%; border: thick $accent; background: $surface; padding: 0 2; }
    StartRun .row { height: auto; }
    StartRun .row Input { width: 1fr; }
    StartRun .row Button { min-width: 10; margin-left: 1; }
    StartRun #start-builtin { width: 26; margin-left: 1; }
    StartRun #start-plan-box { height: 1fr; min-height: 4; margin-top: 1; }
    StartRun #start-plan { height: auto; }
    StartRun #start-buttons { height: auto; align: right middle; margin-top: 1; }
    StartRun #start-buttons Button { margin-left: 2; }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, store: Path) -> None:
        super().__init__()
        self.store = store
        self.valid = False
        self._validating = False  # a validation is under way
        self._timer: Timer | None = None  # a validation waiting for typing to stop

    def compose(self) -> ComposeResult:
        inventory = Path(default_sandbox_dir()) / "inventory.toml"
        with Vertical():
            yield Label("Scenario: a file, or a built-in scenario")
            with Horizontal(classes="row"):
                yield Input(value="quickstart", id="start-scenario")
                yield Select([(name, name) for name in builtin_scenarios()], prompt="built-in",
                             id="start-builtin", value="quickstart", allow_blank=True)
                yield Button("Browse", id="browse-scenario")
            yield Label("Inventory file")
            with Horizontal(classes="row"):
                yield Input(value=str(inventory) if inventory.exists() else "",
                            id="start-inventory")
                yield Button("Browse", id="browse-inventory")
            yield Label("Overrides (KEY=VALUE separated by spaces, e.g. phases[1].duration=20s)")
            yield Input(value="", id="start-overrides")
            with VerticalScroll(id="start-plan-box"):  # a long plan scrolls, never cut off
                yield Static("", id="start-plan", markup=False)
            with Horizontal(id="start-buttons"):
                yield Button("Validate", id="validate")
                yield Button("Start", id="start", variant="success", disabled=True)

    def on_mount(self) -> None:
        self.validate_now()

    @property
    def up_to_date(self) -> bool:
        """No validation is waiting or running (tests wait for this)."""
        return self._timer is None and not self._validating

    def _values(self) -> Values:
        scenario = self.query_one("#start-scenario", Input).value.strip()
        overrides = self.query_one("#start-overrides", Input).value.split()
        return scenario, Path(self.query_one("#start-inventory", Input).value.strip()), overrides

    # ------------------------------------------------------------------ picking
    def on_input_changed(self, event: Input.Changed) -> None:
        self.valid = False
        self.query_one("#start", Button).disabled = True
        if event.input.id == "start-scenario":
            builtin = self.query_one("#start-builtin", Select)
            name = event.value.strip()
            wanted = name if name in builtin_scenarios() else Select.NULL
            if builtin.value != wanted:
                with builtin.prevent(Select.Changed):
                    builtin.value = wanted
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.set_timer(TYPING_PAUSE_S, self.validate_now)

    def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.id == "start-builtin" and event.value is not Select.NULL:
            self.query_one("#start-scenario", Input).value = str(event.value)

    def _browse(self, box_id: str, title: str) -> None:
        box = self.query_one(f"#{box_id}", Input)

        def picked(path: Path | None) -> None:
            if path is not None:
                box.value = str(path)  # validated as any other change

        self.app.push_screen(FilePicker(title, start_folder(box.value)), picked)

    # ------------------------------------------------------------------ validating
    def validate_now(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self._validating = True
        self.validate_plan(self._values())

    @work(thread=True, exclusive=True, group="validate")
    def validate_plan(self, values: Values) -> None:
        scenario, inventory, overrides = values
        if not scenario or not str(inventory) or str(inventory) == ".":
            text = Text("pick a scenario and an inventory file", style="yellow")
            ok = False
        else:
            try:
                lines = plan_lines(scenario, inventory, overrides, PLAN_WIDTH)
                text, ok = lines_text(lines), True
            except LoadtowerError as exc:  # not markup: the message may hold [brackets]
                text, ok = error_text(exc), False
            except Exception as exc:  # noqa: BLE001 - a bug in a renderer: shown, no crash
                text = error_text(f"cannot show the plan: {type(exc).__name__}: {exc}")
                ok = False
        self.app.call_from_thread(self._validated, values, text, ok)

    def _validated(self, values: Values, text: Text, ok: bool) -> None:
        if values != self._values():  # the fields changed meanwhile: that check follows
            return
        self._validating = False
        self._show(text, ok)

    def _show(self, text: Text, ok: bool) -> None:
        self.valid = ok
        self.query_one("#start-plan", Static).update(text)
        self.query_one("#start", Button).disabled = not ok

    # ------------------------------------------------------------------ starting
    def on_button_pressed(self, event: Button.Pressed) -> None:
        button = event.button.id
        if button == "validate":
            self.validate_now()
        elif button == "browse-scenario":
            self._browse("start-scenario", "Scenario file")
        elif button == "browse-inventory":
            self._browse("start-inventory", "Inventory file")
        elif button == "start" and self.valid:
            event.button.disabled = True
            self.query_one("#start-plan", Static).update("starting ...")
            self.start(self._values())

    @work(thread=True, exclusive=True)
    def start(self, values: Values) -> None:
        scenario, inventory, overrides = values
        extra = [arg for item in overrides for arg in ("--set", item)]
        try:
            started = start_run(scenario, inventory, self.store, extra)
        except LoadtowerError as exc:
            self.app.call_from_thread(self._show, error_text(exc), False)
            return
        getattr(self.app, "started_runs", []).append(started)
        control = control_path(self.store, started.run_id)
        self.app.call_from_thread(self.dismiss, (started.run_id, control))

    def action_cancel(self) -> None:
        self.dismiss(None)
