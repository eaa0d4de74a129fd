"""One registry of the app's actions: it feeds the key bindings, the footer, the
help panel and the command palette."""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding


@dataclass(frozen=True)
class AppAction:
    key: str
    action: str
    title: str
    help: str
    show: bool = True


# The footer shows the current screen's keys first; of the app's own keys it shows
# only help and quit (the others are in the help panel and the command palette, and
# the runs screen shows "2" and "N" itself), so a 100-column footer is not cut short.
APP_ACTIONS = (
    AppAction("1", "runs", "Runs", "Every run in the store", show=False),
    AppAction("2", "sql", "SQL console", "Query the store with read-only SQL", show=False),
    AppAction("N", "start_run", "Start a run", "Pick a scenario and an inventory, validate, start",
              show=False),
    AppAction("t", "next_theme", "Theme", "Switch to the next colour theme", show=False),
    AppAction("question_mark", "help", "Keys", "Show the key bindings of this screen"),
    AppAction("q", "quit", "Quit", "Leave loadtower (running runs go on, headless)"),
)


def bindings() -> list[Binding]:
    return [Binding(a.key, a.action, a.title, show=a.show) for a in APP_ACTIONS]
