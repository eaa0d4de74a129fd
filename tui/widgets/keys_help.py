"""`?`: the keys of the screen below (all of them, hidden ones too) and the app's keys,
from the same registry the command palette reads (tui/actions.py). The keys a focused
table or log uses to scroll are not listed one by one: one line says what they are."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from loadtower.tui.actions import Action

MOVING = ("↑ ↓ PgUp PgDn Home End move in tables, lists and logs; tab moves the focus; "
          "ctrl+p opens the command palette")


def keys_table(own: list[Action], everywhere: list[Action]) -> Group:
    table = Table.grid(padding=(0, 2))
    table.add_column(justify="right", style="bold", no_wrap=True)
    table.add_column(no_wrap=True)
    table.add_column(style="dim")
    for heading, actions in (("this screen", own), ("everywhere", everywhere)):
        if not actions:
            continue
        if table.row_count:
            table.add_row()
        table.add_row("", Text(heading, style="bold underline"))
        for action in actions:
            table.add_row(Text(action.keys), Text(action.title), Text(action.help))
    return Group(table, Text(""), Text(MOVING, style="dim"))


class KeysHelp(ModalScreen[None]):
    DEFAULT_CSS = """
    KeysHelp { align: center middle; }
    KeysHelp > VerticalScroll {
        width: 92; max-width: 100%; height: auto; max-height: 100%;
        border: round $accent; border-title-color: $text-accent; background: $surface;
        padding: 0 1;
    }
    KeysHelp #keys-table { width: 100%; }
    """
    BINDINGS = [Binding("escape,question_mark", "close", "Close")]

    def __init__(self, own: list[Action], everywhere: list[Action]) -> None:
        super().__init__()
        self.own, self.everywhere = own, everywhere

    def compose(self) -> ComposeResult:
        with VerticalScroll() as box:
            box.border_title = "keys (? or esc closes)"
            yield Static(keys_table(self.own, self.everywhere), id="keys-table")

    def action_close(self) -> None:
        self.dismiss(None)
