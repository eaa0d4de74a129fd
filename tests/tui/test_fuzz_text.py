"""Hypothesis fuzz: random unicode (control characters, format characters, Rich markup,
terminal escapes) in run names, phase names, host names and event text of a seeded
store, shown by the runs screen and the replay dashboard: no exception, and nothing on
the screen that could drive a terminal. Lone surrogates cannot be stored (DuckDB takes
only UTF-8), so they are fuzzed through the dashboard's text functions directly."""

from __future__ import annotations

import asyncio
import tempfile
import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loadtower.store.live_feed import PhaseRow, Snapshot, Stretch
from loadtower.tui.app import LoadtowerApp
from loadtower.tui.screens.dashboard import RunDashboard
from loadtower.tui.screens.runs import RunsScreen
from loadtower.tui.widgets import panels
from loadtower.tui.widgets.event_list import event_text
from loadtower.tui.widgets.timeline import timeline_rows
from tests.tui.helpers import SIZE, screen_text, settle
from tests.tui.hostile_store import HOSTILE_RUN, T0, Texts, build_hostile_store

pytestmark = pytest.mark.timeout(600)
UNSAFE = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}
SNIPPETS = ("\x1b[2J", "\x1b]0;PWNED\x07", "\x1b[31m", "\r", "\x00", "\x7f", "\x9b",
            "\u202e", "\u200b", "\u2028", "[/]", "[link=x]", "[bold]", "[/bold]", "\\", "]")


def texts(surrogates: bool) -> st.SearchStrategy[str]:
    skip = () if surrogates else ("Cs",)
    chars = st.characters(blacklist_categories=skip)
    return st.lists(st.one_of(chars, st.sampled_from(SNIPPETS)), max_size=12).map("".join)


def unsafe_on(text: str) -> list[str]:
    return sorted({repr(ch) for ch in text if ch != "\n" and unicodedata.category(ch) in UNSAFE})


async def _drive(store: Path) -> list[str]:
    app = LoadtowerApp(store)
    shown = []
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, RunsScreen)
        shown.append(screen_text(pilot))
        app.open_run(HOSTILE_RUN)
        await settle(pilot)
        assert isinstance(app.screen, RunDashboard)
        shown.append(screen_text(pilot))
        for key in ("left", "bracketleft", "w"):
            await pilot.press(key)
            await settle(pilot)
            shown.append(screen_text(pilot))
        assert app.is_running
    return shown


@settings(max_examples=6, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(run_name=texts(False), phase_a=texts(False), phase_b=texts(False),
       host=texts(False), event=texts(False))
def test_stored_text_on_the_runs_screen_and_the_replay(
    run_name: str, phase_a: str, phase_b: str, host: str, event: str
) -> None:
    fields = Texts(run_name=run_name, phases=(f"a{phase_a}", f"b{phase_b}"), host=host,
                   agent=f"{host}/0", event=event, log=event)
    with tempfile.TemporaryDirectory(prefix="lt-fuzz-") as folder:
        store = build_hostile_store(Path(folder) / "fuzz.duckdb", fields)
        screens = asyncio.run(asyncio.wait_for(_drive(store), 120))
    for text in screens:
        assert not unsafe_on(text), unsafe_on(text)


@settings(max_examples=40, deadline=None, derandomize=True, database=None)
@given(name=texts(True), phase=texts(True), host=texts(True), message=texts(True))
def test_dashboard_text_with_surrogates(name: str, phase: str, host: str, message: str) -> None:
    snap = Snapshot(
        run={"id": "r", "name": name, "status": "completed"}, cursor=T0 + 5, first_ts=T0,
        last_ts=T0 + 6, window=60,
        phases=[PhaseRow(0, phase, "run", T0, T0 + 6)],
        events=[{"ts": T0 + 1, "kind": "warning", "message": message, "host": host,
                 "phase": phase}],
        agents=[{"agent": f"{host}/0", "host": host, "cpu_pct": 10.0, "ops": 5.0,
                 "state": message, "seen": T0 + 5}],
        logs=[{"ts": T0 + 2, "host": host, "stream": "stderr", "text": message}],
        errors_by_class={message: 1}, stretches=[Stretch(phase, T0, T0 + 6)],
    )
    rendered = [event_text(item).plain for item in panels.event_items(snap)]
    rendered += [text.plain for _ts, text in panels.log_lines(snap)]
    data, _title = panels.timeline(snap, live=False)
    rendered += ["".join(t for t, _s in row) for row in timeline_rows(data, 80, 3)]
    rendered += [c.plain for row in panels.agent_table(snap).rows.values() for c in row]
    rendered += [c.plain for row in panels.error_rows(snap).values() for c in row]
    for text in rendered:
        assert not unsafe_on(text), unsafe_on(text)
