"""The run dashboard: the same panels for a live run and for a replay.

A worker reads a Snapshot from the store (read-only) and posts it; one handler draws
it. Live: the cursor follows the newest stored second. Replay: a playback clock
moves the cursor (1x..64x), with pause, step, seek and jumps to phases and events.
"""

from __future__ import annotations

import time
from pathlib import Path

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid, Horizontal, Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Footer, RichLog, Static

from loadtower.tui.feed import WINDOWS, Snapshot, snapshot
from loadtower.tui.widgets import panels
from loadtower.tui.widgets.chart import LineChart
from loadtower.tui.widgets.confirm import Confirm
from loadtower.tui.widgets.seek import SeekPrompt, parse_seek

SPEEDS = (1, 2, 4, 8, 16, 32, 64)
TICK_S = 0.25


class SnapshotReady(Message):
    def __init__(self, snap: Snapshot) -> None:
        super().__init__()
        self.snap = snap


class RunDashboard(Screen):
    DEFAULT_CSS = """
    RunDashboard #status { height: 1; padding: 0 1; background: $boost; }
    RunDashboard #charts { grid-size: 2 2; height: 1fr; }
    RunDashboard #bottom { height: 11; }
    RunDashboard #events { width: 2fr; border: round $panel; }
    RunDashboard #side { width: 38; }
    RunDashboard #agents, RunDashboard #errors { height: 1fr; border: round $panel; }
    RunDashboard #log { width: 2fr; border: round $panel; }
    """
    BINDINGS = [
        Binding("escape", "back", "Back"),
        Binding("w", "window", "Window"),
        Binding("L", "log_scale", "Log scale"),
        Binding("space", "play_pause", "Play/pause", show=True),
        Binding("plus,equals_sign", "speed(1)", "Faster"),
        Binding("minus", "speed(-1)", "Slower"),
        Binding("right", "step(1)", "Step +1s", show=False),
        Binding("left", "step(-1)", "Step -1s", show=False),
        Binding("shift+right", "step(10)", "Step +10s", show=False),
        Binding("shift+left", "step(-10)", "Step -10s", show=False),
        Binding("bracketright", "jump(1)", "Next phase", key_display="]"),
        Binding("bracketleft", "jump(-1)", "Prev phase", key_display="[", show=False),
        Binding("P", "percentiles", "Percentiles"),
        Binding("g", "seek", "Seek"),
        Binding("s", "stop_run", "Stop run"),
        Binding("n", "skip_phase", "Next phase"),
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
        self._events_shown: list[tuple[float, str]] = []
        self._logs_shown: list[tuple[float, str]] = []
        self._last_tick = time.monotonic()
        self.phase_paused = False
        self.percentile_index = 0

    # ------------------------------------------------------------------ layout
    def compose(self) -> ComposeResult:
        yield Static(id="status")
        with Grid(id="charts"):
            yield LineChart("throughput (ops/s)", id="throughput")
            yield LineChart("latency (ms)", " ms", id="latency")
            yield LineChart("node CPU (%)", "%", y_max=100, id="cpu")
            yield LineChart("node memory (%)", "%", y_max=100, id="memory")
        with Horizontal(id="bottom"):
            yield RichLog(id="events", wrap=False, markup=False, max_lines=2000)
            with Vertical(id="side"):
                yield DataTable(id="agents", cursor_type="none", zebra_stripes=True)
                yield DataTable(id="errors", cursor_type="none")
            yield RichLog(id="log", wrap=False, markup=False, max_lines=2000)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#events", RichLog).border_title = "timeline"
        self.query_one("#log", RichLog).border_title = "host output"
        agents = self.query_one("#agents", DataTable)
        agents.border_title = "agents"
        agents.add_columns("agent", "host", "cpu", "ops/s", "state")
        errors = self.query_one("#errors", DataTable)
        errors.border_title = "errors (window)"
        errors.add_columns("class", "count")
        self.set_interval(TICK_S, self._tick)
        self.refresh_snapshot()

    # ------------------------------------------------------------------ data flow
    def _tick(self) -> None:
        now = time.monotonic()
        elapsed, self._last_tick = now - self._last_tick, now
        if self.live:
            self.refresh_snapshot()
        elif self.playing and self.snap is not None and self.cursor is not None:
            self.cursor += elapsed * SPEEDS[self.speed_index]
            if self.cursor >= self.snap.last_ts:
                self.cursor, self.playing = self.snap.last_ts, False
            self.refresh_snapshot()

    @work(thread=True, exclusive=True, group="snapshot")
    def refresh_snapshot(self) -> None:
        window = WINDOWS[self.window_index]
        snap = snapshot(self.store, self.run_id, None if self.live else self.cursor, window)
        self.post_message(SnapshotReady(snap))

    def on_snapshot_ready(self, message: SnapshotReady) -> None:
        snap = self.snap = message.snap
        if self.cursor is None and not self.live:
            self.cursor = snap.first_ts
        with self.app.batch_update():
            self._draw(snap)

    def _draw(self, snap: Snapshot) -> None:
        q = self.query_one
        panels.fill_charts(snap, q("#throughput", LineChart), q("#latency", LineChart),
                           q("#cpu", LineChart), q("#memory", LineChart),
                           panels.PERCENTILE_SETS[self.percentile_index])
        panels.fill_log(q("#events", RichLog), self._events_shown, panels.event_lines(snap))
        panels.fill_log(q("#log", RichLog), self._logs_shown, panels.log_lines(snap))
        panels.fill_table(q("#agents", DataTable), panels.agent_rows(snap))
        panels.fill_table(q("#errors", DataTable), panels.error_rows(snap))
        q("#status", Static).update(self._status(snap))

    def _status(self, snap: Snapshot) -> str:
        ops, p99, errors = snap.last_second()
        window = WINDOWS[self.window_index]
        mode = "LIVE" if self.live else (
            f"REPLAY {'▶' if self.playing else '⏸'} {SPEEDS[self.speed_index]}x")
        return (
            f"[b]{snap.run['name']}[/b] {self.run_id}  [{'green' if self.live else 'cyan'}]"
            f"{mode}[/]  {snap.run['status']}  phase [b]{snap.phase_at(snap.cursor) or '-'}[/b]"
            f"{' (paused)' if self.phase_paused else ''}  "
            f"t+{snap.cursor - snap.first_ts:,.0f}s/{snap.last_ts - snap.first_ts:,.0f}s  "
            f"[green]{ops:,.0f} ops/s[/]  [yellow]p99 {p99:.2f} ms[/]  "
            f"[{'red' if errors else 'dim'}]errors {errors}[/]  "
            f"window {'whole run' if window == 0 else f'{window // 60} min'}"
        )

    # ------------------------------------------------------------------ actions
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        replay_only = {"play_pause", "speed", "step", "jump", "seek"}
        live_only = {"stop_run", "skip_phase", "pause_phase"}
        if action in replay_only:
            return not self.live
        if action in live_only:
            return self.live
        return True

    def action_back(self) -> None:
        if len(self.app.screen_stack) > 1:
            self.app.pop_screen()

    def action_window(self) -> None:
        self.window_index = (self.window_index + 1) % len(WINDOWS)
        self.refresh_snapshot()

    def action_percentiles(self) -> None:
        self.percentile_index = (self.percentile_index + 1) % len(panels.PERCENTILE_SETS)
        if self.snap is not None:
            self._draw(self.snap)

    def action_log_scale(self) -> None:
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
        if self.snap:
            self.query_one("#status", Static).update(self._status(self.snap))

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
        """Phase starts and notable events, in time order: targets for [ and ]."""
        if self.snap is None:
            return []
        found = {float(p["started"]) for p in self.snap.phases if p["started"] is not None}
        return sorted(found)

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
                    self.notify(f"cannot seek to '{answer}'", severity="error")
                else:
                    self.seek_to(target)

        self.app.push_screen(SeekPrompt(), done)

    def _control(self, command: str, done_message: str) -> None:
        if self.control_path is None:
            self.notify("this run has no control socket", severity="error")
            return
        self._send(command, done_message)

    @work(exclusive=False, group="control")
    async def _send(self, command: str, done_message: str) -> None:
        from loadtower.scenarios.orchestrator.control import send_command

        try:
            reply = await send_command(self.control_path, command)  # type: ignore[arg-type]
        except OSError as exc:
            self.notify(f"cannot reach the run: {exc}", severity="error")
            return
        self.notify(done_message if reply == "ok" else reply)

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
        self.phase_paused = not self.phase_paused
        command = "pause_phase" if self.phase_paused else "resume_phase"
        self._control(command, "phase clock paused" if self.phase_paused else "phase resumed")
