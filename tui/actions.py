"""One registry of actions: it feeds the key bindings, the footer, the keys help and the
command palette.

The app's own actions are listed here (APP_ACTIONS). A screen's actions are its
BINDINGS: `screen_actions` reads them, so a screen needs no palette- or help-specific
code. Actions a screen's `check_action` turns off (replay keys on a live run, say) are
left out, as the footer leaves them out.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

from textual.actions import parse
from textual.app import App
from textual.binding import Binding, BindingsMap, BindingType
from textual.screen import Screen


@dataclass(frozen=True)
class AppAction:
    key: str
    action: str
    title: str
    help: str
    show: bool = True


# The footer shows the current screen's keys first; of the app's own keys it shows
# only help and quit (the others are in the keys help and the command palette, and
# the runs screen shows "2" and "N" itself), so a 100-column footer is not cut short.
APP_ACTIONS = (
    AppAction("1", "runs", "Runs", "Every run in the store", show=False),
    AppAction("2", "sql", "SQL console", "Query the store with read-only SQL", show=False),
    AppAction("N", "start_run", "Start a run", "Pick a scenario and an inventory, validate, start",
              show=False),
    AppAction("t", "next_theme", "Next theme", "Switch to the next colour theme", show=False),
    AppAction("question_mark", "help", "Keys", "Show the keys of this screen"),
    AppAction("q", "quit", "Quit", "Leave loadtower (running runs go on, headless)"),
)

_APP_BY_ACTION = {a.action: a for a in APP_ACTIONS}


def bindings() -> list[BindingType]:
    return [Binding(a.key, a.action, a.title, show=a.show) for a in APP_ACTIONS]


@dataclass(frozen=True)
class Action:
    """One action as the help and the palette show it, and how to run it."""

    keys: str  # as displayed: "^r / f5"
    title: str
    help: str
    action: str  # as bound: "step(-1)", "app.sql"
    target: str  # "app" or "screen": where `action` runs


def _where(action: str) -> tuple[str, str, tuple[object, ...]]:
    namespace, name, params = parse(action)
    return ("app" if namespace == "app" else "screen"), name, params


def _doc(node: object, name: str) -> str:
    """The first paragraph of the action method's docstring, on one line ("" without one)."""
    method = getattr(node, f"action_{name}", None)
    doc = inspect.getdoc(method) if method is not None else None
    return doc.split("\n\n")[0].replace("\n", " ") if doc else ""


def _enabled(app: App, screen: Screen, action: str) -> bool:
    target, name, params = _where(action)
    node = app if target == "app" else screen
    return bool(node.check_action(name, params))


def _textual_actions(screen: Screen) -> set[str]:
    """Actions bound by Textual's own screen classes (focus moves, copy), not by ours."""
    return {binding.action for cls in type(screen).__mro__
            if cls.__module__.startswith("textual.")
            for _key, binding in BindingsMap(cls.__dict__.get("BINDINGS", []))}


def screen_actions(screen: Screen) -> list[Action]:
    """The screen's own bound actions (hidden ones too) in the order it binds them,
    one entry per action with all its keys."""
    app = screen.app
    keys: dict[str, list[str]] = {}
    first: dict[str, Binding] = {}
    textual_own = _textual_actions(screen)
    for _key, binding in screen._bindings:
        if binding.system or not binding.description or binding.action in textual_own:
            continue
        first.setdefault(binding.action, binding)
        display = app.get_key_display(binding)
        if display not in keys.setdefault(binding.action, []):
            keys[binding.action].append(display)
    out = []
    for action, binding in first.items():
        if not _enabled(app, screen, action):
            continue
        target, name, _params = _where(action)
        node = app if target == "app" else screen
        known = _APP_BY_ACTION.get(name) if target == "app" else None
        if known is not None:  # an app action the screen binds too: its fuller words
            title, help_text = known.title, known.help
        else:
            title, help_text = binding.description, binding.tooltip or _doc(node, name)
        out.append(Action(" / ".join(keys[action]), title, help_text, action, target))
    return out


def app_actions(app: App) -> list[Action]:
    out = []
    for item in APP_ACTIONS:
        binding = Binding(item.key, item.action, item.title)
        out.append(Action(app.get_key_display(binding), item.title, item.help, item.action, "app"))
    return out


def all_actions(screen: Screen) -> list[Action]:
    """The screen's actions, then the app's (an app action the screen binds too, like
    the runs screen's "2", is listed once, under the screen)."""
    own = screen_actions(screen)
    seen = {_where(a.action)[:2] for a in own}
    return own + [a for a in app_actions(screen.app) if ("app", a.action) not in seen]


async def run(screen: Screen, action: Action) -> None:
    """Run `action` as its key would on `screen` (a destructive one still asks first)."""
    if action.target == "app" and "." not in action.action:
        await screen.app.run_action(action.action)
    else:
        await screen.run_action(action.action)
