"""Seeking in a replay: a prompt, and what its answer means."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label

from loadtower.scenarios.durations import parse_duration
from loadtower.tui.feed import Snapshot


def parse_seek(answer: str, snap: Snapshot) -> float | None:
    """'90s' / '1m30s' from the start, '+10s'/'-10s' relative, or a phase name."""
    text = answer.strip()
    for phase in snap.phases:
        if phase["name"] == text and phase["started"] is not None:
            return float(phase["started"])
    try:
        if text[:1] in "+-":
            seconds = parse_duration(text[1:])
            return snap.cursor + (seconds if text[0] == "+" else -seconds)
        return snap.first_ts + parse_duration(text)
    except (ValueError, TypeError):
        return None


class SeekPrompt(ModalScreen[str | None]):
    DEFAULT_CSS = """
    SeekPrompt { align: center middle; }
    SeekPrompt > Vertical { width: 64; height: auto; border: thick $accent; background: $surface; padding: 1 2; }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("Seek to: 1m30s from the start, +10s / -10s, or a phase name")
            yield Input(placeholder="1m30s", id="seek-input")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)
