"""Unit tests of the dashboard's building blocks: the braille chart (legend, band of
many nodes), the phase timeline, the status line, seeking, the log pane's append-only
updates, and the store-change check that drives the live screen."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text

from loadtower.store import StoreWriter
from loadtower.store.live_feed import PhaseRow, Snapshot, snapshot, store_version
from loadtower.tui.widgets.chart import Band, LineChart, Series, human, legend_runs, render_canvas
from loadtower.tui.widgets.panels import (
    TOP_NODES,
    _continues,
    agent_table,
    node_series,
    phase_progress,
)
from loadtower.tui.widgets.seek import parse_seek
from loadtower.tui.widgets.status_line import fit
from loadtower.tui.widgets.timeline import Phase, TimelineData, legend, timeline_rows


def cells(rows: list[list[tuple[str, str]]]) -> list[str]:
    return ["".join(text for text, _color in row) for row in rows]


def dots(rows: list[list[tuple[str, str]]]) -> int:
    return sum(bin(ord(ch) - 0x2800).count("1") for line in cells(rows) for ch in line
               if ch != " ")


def test_chart_joins_neighbours_and_not_gaps() -> None:
    flat = [Series("a", [(float(x), 5.0) for x in range(10)])]
    rows = render_canvas(flat, 10, 2, (0.0, 9.0), (0.0, 10.0), log_y=False)
    assert all(len(line) == 10 for line in cells(rows))
    assert dots(rows) == 20  # one dot per pixel column: a continuous line
    gap = [Series("a", [(0.0, 5.0), (1.0, 5.0), (8.0, 5.0), (9.0, 5.0)])]
    rows = render_canvas(gap, 10, 2, (0.0, 9.0), (0.0, 10.0), log_y=False)
    assert dots(rows) < 10  # the gap of 7 steps is not bridged


def test_chart_colours_and_log_scale() -> None:
    two = [Series("low", [(0.0, 1.0), (1.0, 1.0)], "#111111"),
           Series("high", [(0.0, 1000.0), (1.0, 1000.0)], "#222222")]
    rows = render_canvas(two, 4, 3, (0.0, 1.0), (1.0, 1000.0), log_y=True)
    colors = [{c for text, c in row if text.strip()} for row in rows]
    assert colors[0] == {"#222222"} and colors[-1] == {"#111111"}
    # linear: 1 and 1000 on a 0..1000 axis, the low line sits on the bottom row
    rows = render_canvas(two, 4, 3, (0.0, 1.0), (0.0, 1000.0), log_y=False)
    assert {c for text, c in rows[-1] if text.strip()} == {"#111111"}


def test_chart_labels() -> None:
    assert [human(v) for v in (0, 0.25, 12.5, 950, 1200, 3.4e6)] == [
        "0", "0.25", "12.5", "950", "1.2k", "3.4M"]


def keys(*names: str) -> list[tuple[float, str]]:
    return [(float(i), n) for i, n in enumerate(names)]


def test_log_pane_appends_only_new_lines() -> None:
    shown = keys("a", "b", "c")
    # the list slid on by one (its oldest line dropped off): one new line
    assert _continues(shown, keys("a", "b", "c", "d")[1:]) == 2
    assert _continues(shown, keys("a", "b", "c")) == 3  # nothing new
    assert _continues([], keys("a")) == 0
    # more new lines than the list holds arrived at once: all are new
    newer = [(10.0, "x"), (11.0, "y")]
    assert _continues(shown, newer) == 0
    # a seek back: the pane is rewritten
    assert _continues(shown, keys("a")) is None
    assert _continues(shown, [(0.5, "other")]) is None


def test_store_version_changes_with_each_commit(tmp_path: Path) -> None:
    path = tmp_path / "s.duckdb"
    assert store_version(path) == (0, 0, 0, 0)
    writer = StoreWriter(path, flush_every_s=3600)
    try:
        run = writer.start_run("v", "v", None, None, {}, {}, {})
        before = store_version(path)
        assert before != (0, 0, 0, 0)
        assert store_version(path) == before  # no commit, no change
        writer.event(run, 1.0, "warning", "x" * 4000)
        writer.flush()
        assert store_version(path) != before
    finally:
        writer.close()



def plain(runs: list[tuple[str, str]]) -> str:
    return "".join(text for text, _style in runs)


def test_legend_whole_then_shortened_then_more() -> None:
    items = [("●", "#1", "insert", "2.71 ms"), ("●", "#2", "read", "4.02 ms"),
             ("●", "#3", "update", "2.71 ms")]
    whole = "● insert 2.71 ms  ● read 4.02 ms  ● update 2.71 ms  "
    assert plain(legend_runs(items, 60)) == whole  # as before when it fits
    # long names are shortened with … before any item is left out
    many = [("●", "#1", f"cassandra-node-{i}", "45%") for i in range(3)]
    shortened = plain(legend_runs(many, 50))
    assert shortened.count("…") == 3 and "more" not in shortened
    assert len(shortened.rstrip()) <= 50
    # far too many: the first that fit, then how many more
    crowd = [("●", "#1", f"db{i}", "45.0%") for i in range(64)]
    runs = legend_runs(crowd, 46)
    text = plain(runs)
    assert text.startswith("● db0 45.0%") and text.endswith(" more")
    shown = text.count("●")
    assert f"+{64 - shown} more" in text and len(text) <= 46
    assert plain(legend_runs(crowd, 4)) == "+64 "  # never wider than the room


def test_many_nodes_are_a_band_and_the_busiest() -> None:
    nodes = {f"db{n:02}": [(t, float(n + t % 3), 50.0) for t in range(100, 130)]
             for n in range(64)}
    lines, band = node_series(nodes, 1)
    assert band is not None and band.name == "64 nodes"
    assert [s.name for s in lines] == ["median", "db63", "db62", "db61", "db60", "db59"]
    assert len(lines) == 1 + TOP_NODES and not lines[0].in_legend
    first = list(band.points[0])
    assert first == [100.0, 1.0, 32.5, 64.0]  # t=100: db00 at 1 .. db63 at 64, median 32.5
    few = {f"db{n}": nodes[f"db{n:02}"] for n in range(3)}
    lines, band = node_series(few, 1)
    assert band is None and [s.name for s in lines] == ["db0", "db1", "db2"]


def test_band_is_shaded_between_low_and_high_only() -> None:
    band = Band("all", [(0.0, 40.0, 50.0, 60.0), (9.0, 40.0, 50.0, 60.0)], "#555555")
    rows = render_canvas([], 10, 10, (0.0, 9.0), (0.0, 100.0), False, band)
    shaded = [r for r, row in enumerate(rows) if any(t.strip() for t, _c in row)]
    assert shaded and min(shaded) >= 3 and max(shaded) <= 6  # 40..60 of 0..100, 10 rows
    assert {c for row in rows for t, c in row if t.strip()} == {"#555555"}
    # a line through the band keeps its colour where it runs
    line = [Series("hot", [(0.0, 50.0), (9.0, 50.0)], "#ff0000")]
    rows = render_canvas(line, 10, 10, (0.0, 9.0), (0.0, 100.0), False, band)
    assert any(c == "#ff0000" for row in rows for _t, c in row)


def test_chart_legend_of_a_band() -> None:
    chart = LineChart("node CPU", "%", y_max=100)
    nodes = {f"db{n:02}": [(t, float(n), 50.0) for t in range(10)] for n in range(64)}
    lines, band = node_series(nodes, 1)
    chart.set_data(lines, (0.0, 9.0), ("a", "b"), band)
    legend_row = "".join(t for t, _c in chart.lines(60, 8)[0])
    assert legend_row.startswith("▒ 64 nodes 0–63.0% med 31.5%  ● db63 63.0%")
    assert "more" in legend_row and "median" not in legend_row


def timeline(**kw: object) -> TimelineData:
    base = dict(start=0.0, end=40.0, cursor=20.0,
                phases=(Phase("load", 0.0, 10.0), Phase("ycsb-a", 10.0, 40.0)),
                markers=((0.0, "phase_start"), (10.0, "phase_start"), (15.0, "warning"),
                         (30.0, "fault")))
    base.update(kw)
    return TimelineData(**base)  # type: ignore[arg-type]


def test_timeline_bar_markers_and_clocks() -> None:
    rows = timeline_rows(timeline(), 40, 3)
    bar, markers, clocks = (plain(r) for r in rows)
    assert bar.startswith(" load 10s ") and bar[10:21] == " ycsb-a 30s"
    assert len(bar) == len(markers) == len(clocks) == 40
    assert markers[0] == "│" and markers[10] == "│" and markers[15] == "!"
    assert markers[20] == "▲" and markers[30] == "×"
    assert clocks.startswith("00:00:00") and clocks.endswith("00:00:40")
    assert "00:00:20" in clocks  # at the cursor
    # played part bright, the rest dark; a later event is dim
    styles = {text: style for text, style in rows[0]}
    assert any("on #2f7fa8" in st for st in styles.values())
    assert any("on #3a2a50" in st for st in styles.values())
    assert next(st for t, st in rows[1] if t == "×").endswith("dim")
    assert legend(timeline()) == "× fault  ! warning  │ phase"


def test_timeline_short_phases_and_live() -> None:
    data = timeline(phases=(Phase("a-very-long-phase-name", 0.0, 30.0),
                            Phase("tiny", 30.0, 30.5), Phase("end", 30.5, 40.0)))
    bar = plain(timeline_rows(data, 20, 2)[0])
    assert len(bar) == 20 and "…" in bar  # names cut with …, every phase has a cell
    live = plain(timeline_rows(timeline(show_cursor=False), 40, 2)[1])
    assert "▲" not in live  # a live run is always at its end


def test_status_line_keeps_the_important_parts() -> None:
    parts = [(0, Text("■ ENDED")), (0, Text("completed")), (3, Text("fixture")),
             (4, Text("20260921-141320-aaaa")), (1, Text("phase ycsb-a")),
             (0, Text("496 ops/s")), (2, Text("window 1 min"))]
    assert str(fit(parts, 200)) == ("■ ENDED  completed  fixture  20260921-141320-aaaa  "
                                    "phase ycsb-a  496 ops/s  window 1 min")
    assert str(fit(parts, 60)) == "■ ENDED  completed  phase ycsb-a  496 ops/s  window 1 min"
    assert str(fit(parts, 32)) == "■ ENDED  completed  496 ops/s"
    assert str(fit(parts, 5)) == "■ EN…"


def snap_at(first: float, last: float, cursor: float) -> Snapshot:
    return Snapshot(run={"name": "r", "status": "completed"}, cursor=cursor, first_ts=first,
                    last_ts=last, window=60,
                    phases=[PhaseRow(0, "warm-up", "run", first, last)])


def test_phase_progress_of_its_planned_length() -> None:
    """The live header's phase part: seconds into the phase at the cursor, of its plan."""
    def at(cursor: float, *rows: PhaseRow) -> str:
        return phase_progress(Snapshot(run={"name": "r", "status": "running"}, cursor=cursor,
                                       first_ts=100, last_ts=cursor, window=60,
                                       phases=list(rows)))

    load = PhaseRow(0, "load", "load", 100.0, 130.0)  # as long as its inserts: no plan
    steady = PhaseRow(1, "steady", "run", 130.5, None, 60.0, True)
    scale = PhaseRow(2, "grow", "scale_out", 200.0, None, 10.0, False)
    assert at(110, load, steady) == " 10s"
    assert at(142, load, steady) == " 12s/60s"
    assert at(250, load, steady, scale) == " 50s/10s+"  # a floor: it lasts as long as its work
    assert at(99, load) == ""  # before the first phase


def test_a_phase_rows_planned_length_from_its_stored_params(tmp_path: Path) -> None:
    store = tmp_path / "p.duckdb"
    writer = StoreWriter(store)
    writer.start_run("r", "r", None, None, {}, {}, {}, run_id="r1", started=100.0)
    plans: list[dict[str, object]] = [{"planned_s": 60.0, "planned_exact": True},
                                       {"planned_s": 8, "planned_exact": False}, {},
                                       {"planned_s": "60"}, {"planned_s": float("nan")}]
    for i, params in enumerate(plans):
        writer.phase_started("r1", i, f"p{i}", "run", 100.0 + i, {"type": "run"} | params)
    writer.event("r1", 101.0, "run", "x")
    writer.close()
    snap = snapshot(store, "r1", None, 0)
    assert [(p.planned, p.planned_exact) for p in snap.phases] == [
        (60.0, True), (8.0, False), (None, True), (None, True), (None, True)]


def test_seek_by_clock_time_offset_and_phase() -> None:
    day = 1_790_035_200  # 2026-09-22 00:00:00 UTC
    snap = snap_at(day - 600, day + 600, day)  # 23:50:00 .. 00:10:00
    assert parse_seek("23:55:00", snap) == day - 300
    assert parse_seek("00:05", snap) == day + 300  # over midnight: the next day
    assert parse_seek("12:00:00", snap) in (day - 43_200, day + 43_200)  # outside: clamped later
    assert parse_seek("24:00:00", snap) is None and parse_seek("1:2", snap) is None
    assert parse_seek("t+1m30s", snap) == day - 600 + 90
    assert parse_seek("1m30s", snap) == day - 600 + 90
    assert parse_seek("-10s", snap) == day - 10 and parse_seek("+1m", snap) == day + 60
    assert parse_seek("warm-up", snap) == day - 600
    assert parse_seek("soon", snap) is None


def test_agents_silent_first_then_hottest() -> None:
    agents = [{"agent": f"h{i}/0", "host": f"h{i}", "cpu_pct": cpu, "ops": 10.0,
               "state": "running", "seen": seen}
              for i, (cpu, seen) in enumerate([(20.0, 100), (95.0, 100), (50.0, 80)])]
    snap = Snapshot(run={"name": "r", "status": "running"}, cursor=100.0, first_ts=0.0,
                    last_ts=100.0, window=60, phases=[], agents=agents)
    table = agent_table(snap)
    assert list(table.rows) == ["h2/0", "h1/0", "h0/0"]  # silent (20 s), 95%, 20%
    assert [c.plain for c in table.rows["h1/0"]] == ["h1/0", "95% !", "10", "running"]
    assert table.rows["h2/0"][3].plain == "silent"
    assert table.summary == "1 over 90% CPU · 1 silent"
    odd = dict(agents[0], agent="worker-7", host="h9")
    table = agent_table(Snapshot(run={"status": "completed"}, cursor=100.0, first_ts=0.0,
                                 last_ts=100.0, window=60, phases=[], agents=[odd]))
    assert table.rows["worker-7"][0].plain == "worker-7 (h9)"  # a name without its host
    assert table.summary == "all under 90% CPU"
