"""The run dashboard: the same panels for a live run and for a replay.

A thread worker reads a Snapshot from the store (read-only) and posts it; one handler
draws it. One read at a time: a request made while one runs is served right after
it, and an older snapshot is never drawn over a newer one. Live: the cursor follows
the newest stored second, and the store is read again only when a writer has
committed to it since; when the run ends the status line says how; its current run
phase's rate or users can be steered (steer_keys.py). Replay: a
playback clock moves the cursor (1x..64x), with pause, step, seek (to a clock time,
an offset or a phase) and jumps to phases and events. While another screen covers
the dashboard its clock does no work.

Nothing on the dashboard takes the keyboard from it but the agents table (tab), and
the replay's step keys outrank that table's own (a focused pane never hides them).
"""

from __future__ import annotations

import time
from collections import deque
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import events, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid, Horizontal, Vertical
from textual.message import Message
from textual.widgets import Footer, RichLog

from loadtower.errors import LoadtowerError
from loadtower.scenarios.control_api import send
from loadtower.store.live_feed import WINDOWS, Snapshot, snapshot, store_version
from loadtower.store.terminal_text import visible
from loadtower.tui.screens import steer_keys
from loadtower.tui.screens.steer_keys import SteerableScreen
from loadtower.tui.widgets import panels
from loadtower.tui.widgets.chart import LineChart
from loadtower.tui.widgets.confirm import Confirm
from loadtower.tui.widgets.event_list import EventList
from loadtower.tui.widgets.live_table import LiveTable
from loadtower.tui.widgets.seek import SeekPrompt, parse_seek
from loadtower.tui.widgets.status_line import Part, StatusLine
from loadtower.tui.widgets.timeline import PhaseTimeline

SPEEDS = (1, 2, 4, 8, 16, 32, 64)
TICK_S = 0.25


class OutputLog(RichLog, can_focus=False):
    """Host command output, wrapped to the pane (again when the pane's width changes);
    scrolled with the mouse, it never takes the dashboard's keys."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.texts: deque[Text] = deque(maxlen=self.max_lines)
        self._wrapped_at = 0

    def write(self, content: Any, *args: Any, **kwargs: Any) -> OutputLog:
        if isinstance(content, Text) and self._size_known:  # (else written again later)
            self.texts.append(content)
        super().write(content, *args, **kwargs)
        return self

    def clear(self) -> OutputLog:
        self.texts.clear()
        super().clear()
        return self

    def on_resize(self, event: events.Resize) -> None:  # RichLog's own runs after this
        width = self.scrollable_content_region.width
        if self._wrapped_at and width != self._wrapped_at and self.texts:
            texts = list(self.texts)
            self.clear()
            for text in texts:
                self.write(text)
        self._wrapped_at = width


class SnapshotReady(Message):
    def __init__(self, snap: Snapshot | None, seq: int, error: str | None = None) -> None:
        super().__init__()
        self.snap, self.seq, self.error = snap, seq, error


class RunDashboard(SteerableScreen):
    DEFAULT_CSS = """
    RunDashboard #status { height: 1; padding: 0 1; background: $boost; }
    RunDashboard #charts { grid-size: 2 2; height: 1fr; min-height: 12; }
    RunDashboard.-tall PhaseTimeline { height: 5; }
    RunDashboard #bottom { height: 10; }
    RunDashboard.-tall #bottom { height: 15; }
    RunDashboard #events, RunDashboard #log, RunDashboard #agents, RunDashboard #errors {
        border: round $panel; border-title-color: $text-accent;
        border-subtitle-color: $text-muted; scrollbar-size-vertical: 1;
    }
    RunDashboard #events { width: 3fr; min-width: 24; }
    RunDashboard #agents { width: 40; height: 1fr; overflow-x: hidden; }
    RunDashboard.-wide #agents { width: 48; }
    RunDashboard #right { width: 2fr; min-width: 22; }
    RunDashboard #errors { height: auto; max-height: 7; overflow-x: hidden; }
    RunDashboard.-tall #errors { max-height: 9; }
    RunDashboard #log { height: 1fr; overflow-x: hidden; overflow-y: auto; }
    RunDashboard Footer.-compact FooterLabel { margin: 0 1 0 0; }
    """
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (140, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (40, "-tall")]
    AUTO_FOCUS = ""  # nothing focused at first: the footer shows the dashboard's keys
    SPEED = Binding.Group("Speed", compact=True)
    STEP = Binding.Group("Step", compact=True)
    JUMP = Binding.Group("Jump", compact=True)
    BINDINGS = [
        Binding("escape", "back", "Back"),
        Binding("w", "window", "Window"),
        # chart options: in the keys help and the palette, not the footer (100 columns)
        Binding("L", "log_scale", "Log scale", show=False),
        Binding("P", "percentiles", "Percentiles", show=False),
        Binding("space", "play_pause", "Play"),
        Binding("minus", "speed(-1)", "Slower", group=SPEED),
        Binding("plus,equals_sign", "speed(1)", "Faster", group=SPEED),
        *steer_keys.BINDINGS,  # live: the current run phase's rate or users, on - + * / r
        Binding("left", "step(-1)", "Step -1s", group=STEP, priority=True),
        Binding("right", "step(1)", "Step +1s", group=STEP, priority=True),
        Binding("shift+left", "step(-10)", "Step -10s", show=False, priority=True),
        Binding("shift+right", "step(10)", "Step +10s", show=False, priority=True),
        Binding("bracketleft", "jump(-1)", "Previous phase or event", key_display="[",
                group=JUMP),
        Binding("bracketright", "jump(1)", "Next phase or event", key_display="]", group=JUMP),
        Binding("g", "seek", "Seek"),
        Binding("s", "stop_run", "Stop run"),
        Binding("n", "skip_phase", "Skip phase"),
        Binding("p", "pause_phase", "Pause phase"),
    ]

    def __init__(self, store: Path, run_id: str, live: bool = False,
                 control_path: Path | None = None) -> None:
        super().__init__()
        self.store, self.run_id, self.live = store, run_id, live
        self.control_path = control_path
        self.window_index = 0
        self.speed_index = 0
        self.playing = False
        self.cursor: float | None = None  # replay position (seconds since epoch)
        self.snap: Snapshot | None = None
        self._logs_shown: list[tuple[float, str]] = []
        self._last_tick = time.monotonic()
        self.phase_paused = False
        self.percentile_index = 0
        self._wanted = 0  # number of the newest snapshot request
        self._answered = 0  # number of the newest request answered (drawn or failed)
        self._loading = False  # a read is under way (one at a time)
        self._version: tuple[int, ...] | None = None  # the store as last read (live)
        self._error: str | None = None
        self.hidden_ticks = 0  # ticks skipped while another screen covered this one

    # ------------------------------------------------------------------ layout
    def compose(self) -> ComposeResult:
        yield StatusLine(id="status")
        with Grid(id="charts"):
            yield LineChart("throughput (ops/s)", id="throughput")
            yield LineChart("latency (ms)", " ms", id="latency")
            yield LineChart("node CPU (%)", "%", y_max=100, id="cpu")
            yield LineChart("node memory (%)", "%", y_max=100, id="memory")
        yield PhaseTimeline(id="timeline")
        with Horizontal(id="bottom"):
            yield EventList(id="events")
            yield LiveTable(id="agents")
            with Vertical(id="right"):
                yield LiveTable(id="errors")
                yield OutputLog(id="log", wrap=True, markup=False, max_lines=2000,
                                min_width=10)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one("#events", EventList).border_title = "events"
        self.query_one("#log", OutputLog).border_title = "host output"
        agents = self.query_one("#agents", LiveTable)
        agents.border_title = "agents"
        agents.add_columns("agent", "cpu", "ops/s", "state")
        errors = self.query_one("#errors", LiveTable)
        errors.border_title = "errors (window)"
        errors.add_columns("class", "count")
        self.set_interval(TICK_S, self._tick)
        self.refresh_snapshot()

    # ------------------------------------------------------------------ data flow
    def _tick(self) -> None:
        now = time.monotonic()
        elapsed, self._last_tick = now - self._last_tick, now
        if not self.in_view:  # another screen is over this one: no reads, no clock
            self.hidden_ticks += 1
            return
        if self.live:
            if store_version(self.store) != self._version:
                self.refresh_snapshot()
        elif self.playing and self.snap is not None and self.cursor is not None:
            self.cursor += elapsed * SPEEDS[self.speed_index]
            if self.cursor >= self.snap.last_ts:
                self.cursor, self.playing = self.snap.last_ts, False
            self.refresh_snapshot()

    def refresh_snapshot(self) -> None:
        """Ask for a snapshot of the current cursor and window."""
        self._wanted += 1
        if not self._loading:
            self._start_read()

    def _start_read(self) -> None:
        self._loading = True
        if self.live:
            self._version = store_version(self.store)  # before the read: no commit is missed
        self._read(self._wanted, None if self.live else self.cursor, WINDOWS[self.window_index])

    @work(thread=True, group="snapshot")
    def _read(self, seq: int, cursor: float | None, window: int) -> None:
        try:
            snap = snapshot(self.store, self.run_id, cursor, window)
        except KeyError:
            self.post_message(SnapshotReady(None, seq, f"no run {self.run_id} in {self.store}"))
        except LoadtowerError as exc:  # shown, and tried again: never a crash
            self.post_message(SnapshotReady(None, seq, (str(exc).splitlines() or [repr(exc)])[0]))
        else:
            self.post_message(SnapshotReady(snap, seq))

    @property
    def in_view(self) -> bool:
        """On top, or under see-through screens only (a dialog): what the user sees."""
        stack = self.app.screen_stack
        if self not in stack:
            return False
        return all(screen.styles.background.a < 1 for screen in stack[stack.index(self) + 1:])

    @property
    def up_to_date(self) -> bool:
        """Every snapshot asked for has been read and drawn (tests wait for this)."""
        return not self._loading and self._answered == self._wanted

    @property
    def ended(self) -> bool:
        """The run is over (a live dashboard then says how it ended)."""
        return self.snap is not None and self.snap.run.get("status") != "running"

    def on_snapshot_ready(self, message: SnapshotReady) -> None:
        self._loading = False
        self._answered = message.seq
        if message.seq < self._wanted:
            self._start_read()  # asked again meanwhile (seek, window, newer data)
        if message.snap is None:
            if message.error != self._error:
                self._error = message.error
                self.notify(visible(f"cannot read the run: {message.error}"), severity="error",
                            markup=False)
            if self.live:
                self._version = None  # try again on the next tick
            return
        self._error = None
        was_ended = self.ended
        snap = self.snap = message.snap
        if self.cursor is None:
            self.cursor = snap.cursor  # a replay opens at the end of the run
        with self.app.batch_update():
            self._draw(snap)
        steer_changed = self.steer_bindings_changed()  # a phase with another model, or none
        if self.ended != was_ended or steer_changed:
            self.refresh_bindings()  # stop / skip / pause end with the run

    def _draw(self, snap: Snapshot) -> None:
        q = self.query_one
        panels.fill_charts(snap, q("#throughput", LineChart), q("#latency", LineChart),
                           q("#cpu", LineChart), q("#memory", LineChart),
                           panels.PERCENTILE_SETS[self.percentile_index])
        data, title = panels.timeline(snap, self.live)
        q("#timeline", PhaseTimeline).set_data(data, title)
        q("#events", EventList).set_items(panels.event_items(snap))
        panels.fill_log(q("#log", OutputLog), self._logs_shown, panels.log_lines(snap))
        table = panels.agent_table(snap)
        agents = q("#agents", LiveTable)
        agents.show(table.rows)
        agents.border_title, agents.border_subtitle = table.title, table.summary
        q("#errors", LiveTable).show(panels.error_rows(snap))
        self._show_status()

    def _show_status(self) -> None:
        if self.snap is not None:
            self.query_one("#status", StatusLine).parts = tuple(self._status(self.snap))

    def _status(self, snap: Snapshot) -> list[Part]:
        """The status line's parts with their importance (0 is kept longest): the mode
        and how the run stands never leave it."""
        ops, p99, errors = snap.last_second()
        window = WINDOWS[self.window_index]
        status = str(snap.run["status"])
        ended_live = self.live and status != "running"
        label = snap.last_label() if ended_live else ""
        figures = snap.phase_figures(label) if label else None
        if figures is not None:  # the phase's own figures (a last partial second is not it)
            ops, p99, errors = figures
        status_part = Text(status, style=panels.STATUS_STYLE.get(status, "bold"))
        parts: list[Part] = []
        if self.live and status == "running":
            parts.append((0, Text("● LIVE", style="bold green")))
        elif self.live:
            parts += [(0, Text("■ ENDED", style="bold")), (0, status_part)]
        else:
            mode = f"REPLAY {'▶' if self.playing else '⏸'} {SPEEDS[self.speed_index]}x"
            parts += [(0, Text(mode, style="bold cyan")), (0, status_part)]
        phase = Text("phase ")
        phase.append(visible(snap.phase_at(snap.cursor) or "-", False), style="bold")
        step = label if figures is not None and label != snap.phase_at(snap.cursor) \
            else snap.step_at(snap.cursor)
        if step:
            phase.append(" step ")
            phase.append(visible(step, False), style="bold")
        if self.phase_paused:
            phase.append(" (paused)")
        running = self.live and status == "running"
        if running:  # how far into the phase, of its planned length
            phase.append(panels.phase_progress(snap))
        level = self.steer_level()  # the load the operator may steer (live)
        parts += [
            (3, Text(visible(snap.run["name"], False), style="bold")),
            (4, Text(visible(self.run_id, False))),
            (1, phase),
            *([] if level is None else [(1, Text(steer_keys.amount(*level[1:]), style="bold"))]),
            (2, Text(panels.clock(snap.cursor))),
            # live: the time since the start (the end is not known: the phase says its
            # planned length); a replay or an ended run: where the cursor is, of the run
            (1, Text(f"t+{snap.cursor - snap.first_ts:,.0f}s" + (
                "" if running else f"/{snap.last_ts - snap.first_ts:,.0f}s"))),
            (0, Text(f"{ops:,.0f} ops/s" + (" (phase)" if figures is not None else ""),
                     style="green")),
            (0, Text(f"p99 {p99:.2f} ms", style="yellow")),
            (2, Text(f"errors {errors}", style="red" if errors else "dim")),
            (2, Text(f"window {'whole run' if window == 0 else f'{window // 60} min'}")),
        ]
        if snap.run.get("reason") and status != "running":
            parts.append((5, Text(visible(snap.run["reason"], False), style="dim")))
        return parts

    def on_phase_timeline_picked(self, message: PhaseTimeline.Picked) -> None:
        if not self.live:
            self.playing = False
            self.seek_to(message.ts)

    # ------------------------------------------------------------------ actions
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        steer = self.check_steer(action, parameters)
        if steer is not None:
            return steer
        replay_only = {"play_pause", "speed", "step", "jump", "seek"}
        live_only = {"stop_run", "skip_phase", "pause_phase"}
        if action in replay_only:
            return not self.live
        if action in live_only:
            return self.live and not self.ended  # an ended run takes no more commands
        return True

    def steer_changed(self) -> None:
        self._show_status()

    def action_back(self) -> None:
        if len(self.app.screen_stack) > 1:
            self.app.pop_screen()

    def action_window(self) -> None:
        self.window_index = (self.window_index + 1) % len(WINDOWS)
        self.refresh_snapshot()

    def action_percentiles(self) -> None:
        """Latency chart: p99, p90, p50, or all three."""
        self.percentile_index = (self.percentile_index + 1) % len(panels.PERCENTILE_SETS)
        if self.snap is not None:
            self._draw(self.snap)

    def action_log_scale(self) -> None:
        """Latency chart: a log or a linear y axis."""
        chart = self.query_one("#latency", LineChart)
        chart.log_y = not chart.log_y

    def action_play_pause(self) -> None:
        if self.snap and self.cursor is not None and self.cursor >= self.snap.last_ts:
            self.cursor = self.snap.first_ts
        self.playing = not self.playing
        self._last_tick = time.monotonic()
        self.refresh_snapshot()

    def action_speed(self, delta: int) -> None:
        self.speed_index = min(len(SPEEDS) - 1, max(0, self.speed_index + delta))
        self._show_status()

    def seek_to(self, ts: float) -> None:
        if self.snap is not None:
            ts = min(max(ts, self.snap.first_ts), self.snap.last_ts)
        self.cursor = ts
        self.refresh_snapshot()

    def action_step(self, seconds: int) -> None:
        if self.cursor is not None:
            self.playing = False
            self.seek_to(self.cursor + seconds)

    def marks(self) -> list[float]:
        """Phase and ramp step starts and notable events, in time order: targets for [ and ]."""
        if self.snap is None:
            return []
        found = {p.started for p in self.snap.phases if p.started is not None}
        found |= {s.first for s in self.snap.stretches}
        return sorted(found | set(self.snap.marks))

    def action_jump(self, direction: int) -> None:
        if self.cursor is None:
            return
        marks = self.marks()
        ahead = [m for m in marks if m > self.cursor + 0.5] if direction > 0 else [
            m for m in marks if m < self.cursor - 0.5]
        if ahead:
            self.seek_to(ahead[0] if direction > 0 else ahead[-1])

    def action_seek(self) -> None:
        def done(answer: str | None) -> None:
            if answer and self.snap is not None:
                target = parse_seek(answer, self.snap)
                if target is None:
                    self.notify(visible(f"cannot seek to '{answer}'"), severity="error",
                                markup=False)  # as typed: "[/]" is not markup
                else:
                    self.seek_to(target)

        now = panels.clock(self.cursor) if self.cursor is not None else "1m30s"
        self.app.push_screen(SeekPrompt(now), done)

    def _control(self, command: str, done_message: str) -> None:
        if self.control_path is None:
            self.notify("this run has no control socket", severity="error")
            return
        self._send(command, done_message)

    @work(exclusive=False, group="control")
    async def _send(self, command: str, done_message: str) -> None:
        if self.control_path is None:
            return
        try:
            reply = await send(self.control_path, command)
        except (OSError, TimeoutError, LoadtowerError) as exc:
            self.notify(visible(f"cannot reach the run: {exc}"), severity="error", markup=False)
            return
        if reply == "ok" and command in ("pause_phase", "resume_phase"):
            self.phase_paused = command == "pause_phase"
            self._show_status()
        self.notify(visible(done_message if reply == "ok" else reply), markup=False)

    def action_stop_run(self) -> None:
        def answered(yes: bool | None) -> None:
            if yes:
                self._control("stop", "stop requested: the run ends after the current step")

        self.app.push_screen(Confirm(f"Stop run {self.run_id}? Load stops now.", "Stop"), answered)

    def action_skip_phase(self) -> None:
        def answered(yes: bool | None) -> None:
            if yes:
                self._control("skip_phase", "skipping to the next phase")

        self.app.push_screen(Confirm("Skip the rest of the current phase?", "Skip"), answered)

    def action_pause_phase(self) -> None:
        """Pause the phase clock, or resume it (the status line says which, once the run
        has answered)."""
        if self.phase_paused:
            self._control("resume_phase", "phase resumed")
        else:
            self._control("pause_phase", "phase clock paused")
