"""Seeking in a replay: a prompt, and what its answer means."""

from __future__ import annotations

import math
import re

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label

from loadtower.store.live_feed import Snapshot

DAY = 86_400
CLOCK = re.compile(r"(\d{1,2}):(\d{2})(?::(\d{2}))?")
OFFSET = re.compile(r"(?:\d+(?:\.\d+)?(?:ms|h|m|s))+|\d+(?:\.\d+)?")
PART = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)?")
UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "": 1.0}


def offset(text: str) -> float:
    """Seconds of '90', '90s', '2m', '1m30s', '1h2m' (as the dashboard writes them)."""
    text = text.strip().lower()
    if not OFFSET.fullmatch(text):
        raise ValueError(f"not a duration: {text!r}")
    return sum(float(n) * UNITS[unit] for n, unit in PART.findall(text))


def clock_time(text: str, snap: Snapshot) -> float | None:
    """A clock time as the dashboard shows them (HH:MM:SS or HH:MM, UTC) on the run's
    day: of the times of day that fall in the run, the one nearest the cursor (a run
    over midnight, or over days); else the nearest to the run (seeking clamps it)."""
    found = CLOCK.fullmatch(text)
    if found is None:
        return None
    hours, minutes, seconds = (int(v) if v else 0 for v in found.groups())
    if hours > 23 or minutes > 59 or seconds > 59:
        return None
    of_day = hours * 3600 + minutes * 60 + seconds
    first_day = math.floor(snap.first_ts / DAY) * DAY
    days = math.ceil((snap.last_ts - first_day) / DAY) + 1
    candidates = [first_day + k * DAY + of_day for k in range(-1, days + 1)]
    inside = [c for c in candidates if snap.first_ts <= c <= snap.last_ts]
    if inside:
        return min(inside, key=lambda c: abs(c - snap.cursor))
    return min(candidates, key=lambda c: max(snap.first_ts - c, c - snap.last_ts))


def parse_seek(answer: str, snap: Snapshot) -> float | None:
    """A time to seek to: a clock time as shown (14:13:41, or 14:13), an offset from the
    start ('90s', '1m30s', 't+90s'), '+10s'/'-10s' from the cursor, a phase name, or a
    ramp step's label ('saturation@40': where its data starts)."""
    text = answer.strip()
    for phase in snap.phases:
        if phase.name == text and phase.started is not None:
            return phase.started
    for stretch in snap.stretches:
        if stretch.label == text:
            return stretch.first
    if ":" in text:
        return clock_time(text, snap)
    try:
        if text[:2].lower() == "t+":
            return snap.first_ts + offset(text[2:])
        if text[:1] in "+-":
            seconds = offset(text[1:])
            return snap.cursor + (seconds if text[0] == "+" else -seconds)
        return snap.first_ts + offset(text)
    except ValueError:
        return None


class SeekPrompt(ModalScreen[str | None]):
    DEFAULT_CSS = """
    SeekPrompt { align: center middle; }
    SeekPrompt > Vertical { width: 64; height: auto; border: thick $accent; background: $surface; padding: 1 2; }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, now: str = "1m30s") -> None:
        super().__init__()
        self.now = now

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("Seek to a clock time (14:13:41), an offset from the start (1m30s), "
                        "+10s / -10s, or a phase or step name")
            yield Input(placeholder=self.now, id="seek-input")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)
