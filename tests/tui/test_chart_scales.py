"""The chart's y scales per phase (or ramp step): split where neighbouring stretches
differ by more than SCALE_STEP, one scale otherwise, and the marks where it changes."""

from __future__ import annotations

from loadtower.tui.widgets.chart import (
    BOUNDARY,
    HEADROOM,
    LineChart,
    Series,
    Span,
    human,
    split_scales,
)


def flat(x0: int, x1: int, value: float) -> list[tuple[float, float]]:
    return [(float(x), value) for x in range(x0, x1)]


def test_a_load_spike_and_a_slow_run_get_a_scale_each() -> None:
    series = [Series("read", flat(0, 5, 10_000) + flat(5, 20, 500))]
    spans = [Span(0, 5, "load"), Span(5, 20, "run")]
    scales = split_scales(series, spans, (0.0, 20.0))
    assert scales is not None and [s.names for s in scales] == [("load",), ("run",)]
    assert (scales[0].x_lo, scales[0].x_hi, scales[1].x_lo, scales[1].x_hi) == (0, 5, 5, 20)
    assert scales[0].y_hi == 10_000 * HEADROOM and scales[1].y_hi == 500 * HEADROOM


def test_like_rates_share_one_scale() -> None:
    series = [Series("read", flat(0, 5, 900) + flat(5, 20, 700))]
    assert split_scales(series, [Span(0, 5, "a"), Span(5, 20, "b")], (0.0, 20.0)) is None
    # one stretch in view: nothing to split
    assert split_scales(series, [Span(0, 5, "a"), Span(5, 20, "b")], (6.0, 20.0)) is None


def test_stretches_without_data_or_with_zeros_take_a_neighbours_scale() -> None:
    series = [Series("read", flat(0, 5, 0) + flat(10, 15, 100) + flat(15, 20, 5000))]
    spans = [Span(0, 5, "idle"), Span(5, 10, "gap"), Span(10, 15, "s@100"),
             Span(15, 20, "s@5000")]
    scales = split_scales(series, spans, (0.0, 20.0))
    assert scales is not None
    assert [s.names for s in scales] == [("idle", "gap", "s@100"), ("s@5000",)]


def test_the_chart_marks_each_change_and_tags_never_overlap() -> None:
    chart = LineChart("throughput")
    points, spans = [], []
    for step in range(12):  # a ramp four-fold up each second: a scale per step
        points += flat(step, step + 1, 4.0 ** step)
        spans.append(Span(step, step + 1, f"s@{4 ** step}"))
    chart.set_data([Series("read", points)], (0.0, 12.0), ("a", "b"), segments=spans)
    assert len(chart.scales) == 12
    rows = ["".join(t for t, _c in row) for row in chart.lines(60, 12)]
    top = rows[1]
    assert top.count(BOUNDARY) >= 3  # tags that fit, none over another
    for scale in chart.scales[1:]:
        tag = BOUNDARY + human(scale.y_hi)
        assert top.count(tag) <= 1
    assert sum(r.count(BOUNDARY) for r in rows[2:-1]) >= 11  # every change is marked


def test_log_scale_and_fixed_tops_never_split() -> None:
    series = [Series("read", flat(0, 5, 10_000) + flat(5, 20, 5))]
    spans = [Span(0, 5, "load"), Span(5, 20, "run")]
    chart = LineChart("latency")
    chart.set_data(series, (0.0, 20.0), segments=spans)
    assert len(chart.scales) == 2
    chart.log_y = True
    chart.watch_log_y(True)
    assert len(chart.scales) == 1
    cpu = LineChart("cpu", y_max=100)
    cpu.set_data(series, (0.0, 20.0), segments=spans)
    assert [(s.y_lo, s.y_hi) for s in cpu.scales] == [(0.0, 100)]
