"""Typing a run phase's new load: a prompt, and what its answer means."""

from __future__ import annotations

import math
import re

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label

from loadtower.store.terminal_text import visible

NUMBER = re.compile(r"(\d+(?:\.\d*)?|\.\d+)([km]?)")
SCALE = {"": 1.0, "k": 1e3, "m": 1e6}
WHAT = {"rate": "a rate in ops/s above 0 (1000, 1,500, 2.5k)",
        "users": "a whole number of users above 0 (8, 1,000)"}


def parse_level(kind: str, answer: str) -> float | None:
    """The level typed for `kind` ("rate": ops/s, "users"): a number above 0, with
    thousands separators and a k or M suffix if wanted; users a whole number. None when
    it is not one."""
    found = NUMBER.fullmatch(answer.strip().lower().replace(",", "").replace("_", ""))
    if found is None:
        return None
    value = float(found.group(1)) * SCALE[found.group(2)]
    if not math.isfinite(value) or value <= 0 or (kind == "users" and value != int(value)):
        return None
    return value


class SteerPrompt(ModalScreen[str | None]):
    DEFAULT_CSS = """
    SteerPrompt { align: center middle; }
    SteerPrompt > Vertical { width: 64; height: auto; border: thick $accent; background: $surface; padding: 1 2; }
    SteerPrompt Label { width: 1fr; }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, kind: str, phase: str, now: str) -> None:
        super().__init__()
        self.kind, self.phase, self.now = kind, phase, now

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(f"Phase {visible(self.phase, False)} runs at {self.now}. New "
                        f"{self.kind}: {WHAT[self.kind]}", markup=False)
            yield Input(placeholder=self.now, id="steer-input")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)
