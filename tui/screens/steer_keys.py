"""Steering a live run's load from its dashboard: keys (and the palette's entries) that
raise, lower, double, halve or set the current run phase's rate (an open model's total
ops/s) or users (a closed model's), sent through the run's control socket.

Steps: a rate moves along 1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8 x 10^n ops/s (500 -> 600
-> 800 -> 1,000; a rate between two goes to the next one), users by one; double and
halve are exact (users: halve rounds down, at least 1). Each key starts from the level
the store holds, or from the one last asked for while the store has not caught up
with it, so pressing a key twice steps twice.

Which level a key starts from: the store takes the asks one by one, each as a stored
change, so it may show a level from before the asks or one asked earlier in the series.
An `AskSeries` counts the changes the phase had stored when its first ask was made; the
store has every ask once it holds that many more (the level alone cannot tell: `+` then
`-` comes back to the level stored before them, which a stale read also shows).

The footer shows `-+r Rate` (or `-+r Users`): one group, so a 100-column footer keeps
every key; the keys help and the palette name each. A binding per model (rate or
users) on the same keys: the screen's check_action turns
on the current phase's, so the footer and the palette name what a key changes; `+` and
`-` are the replay's speed keys, which a live dashboard turns off (Textual then tries
the key's next binding).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path

from textual import work
from textual.binding import Binding
from textual.notifications import SeverityLevel
from textual.screen import Screen

from loadtower.errors import LoadtowerError
from loadtower.scenarios.control_api import send
from loadtower.store.live_feed import PhaseRow, Snapshot
from loadtower.store.terminal_text import visible
from loadtower.tui.widgets.steer_prompt import WHAT, SteerPrompt, parse_level

SERIES = (1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0)  # a rate's steps, x 10^n
MOVES = ("up", "down", "double", "half")
RATE = Binding.Group("Rate", compact=True)
USERS = Binding.Group("Users", compact=True)
RATE_STEPS = "to the next of 1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8 x 10^n ops/s"


def _bindings(kind: str, group: Binding.Group, words: dict[str, str]) -> list[Binding]:
    what = "rate" if kind == "rate" else "users"
    return [
        Binding("minus", f"steer('{kind}', 'down')", words["down"], group=group,
                tooltip=words["down_help"]),
        Binding("plus,equals_sign", f"steer('{kind}', 'up')", words["up"], group=group,
                tooltip=words["up_help"]),
        Binding("asterisk", f"steer('{kind}', 'double')", words["double"], show=False,
                tooltip=f"Twice the phase's {what}"),
        Binding("slash", f"steer('{kind}', 'half')", words["half"], show=False,
                tooltip=f"Half the phase's {what}" + (
                    " (rounded down, at least 1)" if kind == "users" else "")),
        Binding("r", f"steer_to('{kind}')", words["set"], group=group,
                tooltip=f"Type {WHAT[kind]}"),
    ]


BINDINGS = _bindings("rate", RATE, {
    "up": "Raise the rate", "up_help": f"Raise the phase's rate {RATE_STEPS}",
    "down": "Lower the rate", "down_help": f"Lower the phase's rate {RATE_STEPS}",
    "double": "Double the rate", "half": "Halve the rate", "set": "Set rate"}) + _bindings(
    "users", USERS, {
    "up": "One user more", "up_help": "One user more in the phase's closed model",
    "down": "One user fewer", "down_help": "One user fewer in the phase's closed model",
    "double": "Double the users", "half": "Halve the users", "set": "Set users"})
ACTIONS = ("steer", "steer_to")


def step_rate(value: float, up: bool) -> float:
    """The next rate of SERIES above (or below) `value`."""
    exponent = math.floor(math.log10(value))
    candidates = [float(f"{step * 10.0 ** e:.6g}") for e in range(exponent - 1, exponent + 2)
                  for step in SERIES]
    if up:
        return min(c for c in candidates if c > value * (1 + 1e-9))
    return max(c for c in candidates if c < value * (1 - 1e-9))


def moved(kind: str, value: float, move: str) -> float:
    """`value` of `kind` after `move` (one of MOVES)."""
    if move == "double":
        return value * 2
    if kind == "users":
        users = {"up": value + 1, "down": value - 1, "half": math.floor(value / 2)}[move]
        return float(max(1, users))
    return value / 2 if move == "half" else step_rate(value, move == "up")


def amount(kind: str, value: float) -> str:
    """`rate 1,000 ops/s`, `8 users` (as the run's events write them)."""
    if kind == "rate":
        return f"rate {value:,.10g} ops/s"
    return f"{value:,.10g} user{'' if value == 1 else 's'}"


@dataclass(frozen=True)
class AskSeries:
    """A quick series of asks of one phase's level: `base` stored changes the phase had
    when the first was made, `values` what each ask not refused since asked for."""

    phase: str
    kind: str
    base: int
    values: tuple[float, ...]

    def pending(self, row: PhaseRow) -> bool:
        """Whether `row` (the phase as stored) lacks an ask of this series."""
        return (row.name, row.steer is not None and row.steer[0]) == (self.phase, self.kind) \
            and row.steers < self.base + len(self.values)

    def asked(self, row: PhaseRow, kind: str, value: float) -> AskSeries:
        """This series with `value` asked too, or a new one (of `row`'s phase and `kind`)
        when the store has them all or they were of another phase."""
        if self.pending(row) and self.kind == kind:
            return replace(self, values=(*self.values, value))
        return AskSeries(row.name, kind, row.steers, (value,))

    def refused(self, value: float) -> AskSeries | None:
        """This series without an ask of `value` the run did not store (refused, not
        reached, or already at it); None when no ask is left."""
        if value not in self.values:
            return self
        at = len(self.values) - 1 - self.values[::-1].index(value)
        values = self.values[:at] + self.values[at + 1:]
        return replace(self, values=values) if values else None


class SteerableScreen(Screen):
    """A screen that steers its live run's current phase. The dashboard sets `live`,
    `snap` and `control_path`, calls `steer_bindings_changed` with each new snapshot,
    and shows `steer_level()` on its status line (redrawn by `steer_changed`)."""

    live: bool = False
    snap: Snapshot | None = None
    control_path: Path | None = None
    _asked: AskSeries | None = None  # the asks the store may not have yet
    _steer_shown: str | None = None

    def steer_level(self) -> tuple[str, str, float] | None:
        """(phase, kind, level) of the live run's current phase when its load can be
        steered: the stored level, or the one last asked for while the store lacks one
        of the asks (it lags behind them; AskSeries)."""
        snap = self.snap
        if not self.live or snap is None or snap.run.get("status") != "running":
            return None
        row = snap.steerable()
        if row is None or row.steer is None:
            return None
        kind, level = row.steer
        asked = self._asked
        if asked is not None and (asked.phase, asked.kind) == (row.name, kind):
            if asked.pending(row):
                level = asked.values[-1]
            else:
                self._asked = None  # the store has every ask: the series ends
        return row.name, kind, level

    def check_steer(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Whether a steering action applies now (None: `action` is not one)."""
        if action not in ACTIONS:
            return None
        now = self.steer_level()
        return now is not None and bool(parameters) and parameters[0] == now[1]

    def steer_bindings_changed(self) -> bool:
        """Whether the model the keys steer changed since the last call (a phase with
        another model, or none: the footer then shows other keys)."""
        now = self.steer_level()
        kind = now[1] if now is not None else None
        changed, self._steer_shown = kind != self._steer_shown, kind
        return changed

    def steer_changed(self) -> None:
        """The level asked for changed (the dashboard redraws its status line)."""

    def action_steer(self, kind: str, move: str) -> None:
        """Raise, lower, double or halve the current phase's rate (open model) or users
        (closed model), from the level last set."""
        now = self.steer_level()
        if now is None or now[1] != kind or move not in MOVES:
            return
        phase, _kind, level = now
        value = moved(kind, level, move)
        if value == level:
            self.notify(f"already at {amount(kind, level)}: the fewest there can be",
                        markup=False)
            return
        self._steer(phase, kind, value)

    def action_steer_to(self, kind: str) -> None:
        """Type the current phase's new rate (open model) or users (closed model)."""
        now = self.steer_level()
        if now is None or now[1] != kind:
            return
        phase, _kind, level = now

        def answered(answer: str | None) -> None:
            if not answer or not answer.strip():
                return
            value = parse_level(kind, answer)
            if value is None:
                what = "number of users" if kind == "users" else "rate"
                self.notify(visible(f"not a {what}: '{answer}': type {WHAT[kind]}"),
                            severity="error", markup=False)
                return
            current = self.steer_level()  # the phase may have ended meanwhile
            if current is None or current[:2] != (phase, kind):
                self.notify(visible(f"phase {phase} no longer runs: not changed"),
                            severity="warning", markup=False)
                return
            self._steer(phase, kind, value)

        self.app.push_screen(SteerPrompt(kind, phase, amount(kind, level)), answered)

    def _steer(self, phase: str, kind: str, value: float) -> None:
        if self.control_path is None:
            self.notify("this run has no control socket", severity="error")
            return
        row = self.snap.steerable() if self.snap is not None else None
        if row is None or row.steer is None:
            return
        series = self._asked or AskSeries(phase, kind, row.steers, ())
        self._asked = series.asked(row, kind, value)
        self.steer_changed()
        self._send_steer(self.control_path, kind, value, self._asked)

    @work(exclusive=False, group="control")
    async def _send_steer(self, path: Path, kind: str, value: float, asked: AskSeries) -> None:
        severity: SeverityLevel = "information"
        try:
            reply = await send(path, kind, value=value)
        except (OSError, TimeoutError, LoadtowerError) as exc:
            reply, severity = f"cannot reach the run: {exc}", "error"
        else:
            severity = "information" if reply.startswith("ok") else "warning"
        stored = reply.startswith("ok") and " already runs at " not in reply  # steering.py
        current = self._asked
        if not stored and current is not None and (current.phase, current.kind,
                                                   current.base) == (asked.phase, asked.kind,
                                                                     asked.base):
            self._asked = current.refused(value)  # no change stored for it: not waited for
            self.steer_changed()
        self.notify(visible(reply), severity=severity, markup=False)
