"""Unit tests of the dashboard's building blocks: the braille chart, the log pane's
append-only updates, and the store-change check that drives the live screen."""

from __future__ import annotations

from pathlib import Path

from loadtower.store import StoreWriter
from loadtower.tui.feed import store_version
from loadtower.tui.widgets.chart import Series, human, render_canvas
from loadtower.tui.widgets.panels import _continues


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

