"""The self-contained HTML report of one run, for a reader who was not there: a summary
first (what ran, where, the answer), then charts (report_charts.py, drawn by the plotly.js
bundle inlined once: plotly_inline.py), then the tables with human headers
(report_columns.py). Rates are phase_summary's (``phase_rate.py``'s figure); the engines
table and the workload table are the cells ``loadtower compare RUN`` prints.

Every text from the store goes through `_fmt` (HTML-escaped) before it reaches the page,
in tables and in charts alike."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from loadtower.protocol.engine_kinds import KINDS
from loadtower.store import report_charts as charts
from loadtower.store import report_pair
from loadtower.store import report_summary as summary_of
from loadtower.store.curves import latency_curve
from loadtower.store.engine_compare import engine_table
from loadtower.store.engine_text import engine_cells, throughput_text
from loadtower.store.history import change_point_sentence
from loadtower.store.html_text import escape
from loadtower.store.plotly_inline import figure_tag, library_tag
from loadtower.store.reader import StoreReader
from loadtower.store.report_columns import (
    ANSWER_HEADERS,
    ENGINE_HEADERS,
    HEADLINE_HEADERS,
    HOST_HEADERS,
    RESULT_COLUMNS,
    STEP_COLUMNS,
    TEXT_FIELDS,
    TOMBSTONE_COLUMNS,
    Columns,
)
from loadtower.store.workload_throughput import (
    OPS,
    ROWS,
    phase_unit,
    rate_of,
    workload_table,
)

CSS = """body{font-family:system-ui,sans-serif;margin:0;color:#222;background:#fff}
main{max-width:1240px;margin:0 auto;padding:12px 18px}
h1{font-size:22px;margin:8px 0}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ddd}
h3{font-size:15px;margin:18px 0 6px}p,li,dd{line-height:1.45}
.answer{background:#f3f8ee;border-left:4px solid #4a8f29;padding:8px 14px;font-size:15px}
.box{overflow-x:auto;max-width:100%;margin:8px 0}
table.results{border-collapse:collapse;font-size:12px}
table.results td,table.results th{border:1px solid #ccc;padding:2px 6px;text-align:right;
vertical-align:top}
table.results th{background:#f4f4f4;white-space:normal;min-width:40px}
table.results td{white-space:nowrap}table.results td.text{text-align:left;white-space:normal;
overflow-wrap:break-word;max-width:320px}
table.results th.text{text-align:left}
td.passed{color:#2b7a0b}td.failed{color:#b00020;font-weight:bold}
.grid{display:grid;grid-template-columns:repeat(2,minmax(0,1fr));gap:10px}
.chart{width:100%;min-width:0}dl.facts{display:grid;grid-template-columns:max-content 1fr;
gap:2px 14px;margin:6px 0}dl.facts dt{font-weight:bold}dl.facts dd{margin:0}
.note{color:#555;font-size:13px}"""


def _fmt(v: object, column: str = "") -> str:
    if v is None:
        return ""
    if isinstance(v, float) and column.endswith("ops_per_s"):
        return f"{v:,.1f}"  # phase_rate.DECIMALS: as the event, the CLI and compare show it
    return f"{v:,.2f}" if isinstance(v, float) else escape(str(v))


def _label(v: object) -> str:
    """A name in a chart: escaped as in the tables (plotly.js reads entities; `&quot;`
    is not one it knows, `&#34;` is)."""
    return _fmt(str(v)).replace("&quot;", "&#34;")


def _cell(v: object, field: str) -> str:
    if field == "passed" and isinstance(v, bool):
        return f"<td class='{'passed' if v else 'failed'}'>{'Passed' if v else 'Failed'}</td>"
    css = " class='text'" if field in TEXT_FIELDS else ""
    if isinstance(v, int) and not isinstance(v, bool):
        return f"<td{css}>{v:,}</td>"  # counts with thousands separators
    if field == "asked" and isinstance(v, float):
        return f"<td{css}>{v:g}</td>"  # the level as asked: 40, 0.5
    return f"<td{css}>{_fmt(v, field)}</td>"


def _boxed(head: str, body: str) -> str:
    """A table in a box that scrolls sideways inside the page when wider than it."""
    return f"<div class='box'><table class='results'><tr>{head}</tr>{body}</table></div>"


def _table(rows: list[dict[str, Any]], columns: Columns) -> str:
    head = "".join(f"<th{' class=text' if f in TEXT_FIELDS else ''}>{escape(header)}</th>"
                   for f, header in columns)  # fmt: skip
    body = "".join(
        "<tr>" + "".join(_cell(r.get(f), f) for f, _h in columns) + "</tr>" for r in rows
    )
    return _boxed(head, body)


def _text_table(
    headers: tuple[str, ...] | list[str], rows: list[list[str]], text: set[int]
) -> str:
    """A table of ready cells (the CLI's text); the columns numbered in `text` are text
    (left-aligned, wrapped), the others figures."""
    css = [" class='text'" if i in text else "" for i in range(len(headers))]
    head = "".join(f"<th{css[i]}>{_fmt(h)}</th>" for i, h in enumerate(headers))
    body = "".join(
        "<tr>" + "".join(f"<td{css[i]}>{_fmt(c)}</td>" for i, c in enumerate(row)) + "</tr>"
        for row in rows
    )
    return _boxed(head, body)


def _engine_title(engine: str) -> str:
    """A stored engine's title (its kind's), or its stored name when none is registered."""
    return KINDS[engine].title if engine in KINDS else engine


def _tombstones(summary: list[dict[str, Any]], engines: list[str]) -> str:
    """The tombstones scanned per read of the table each phase read, where sampled (the
    figures of `engines`' nodes): a table of its own beside the results (which then fit
    1,280 px)."""
    rows = [r for r in summary if r.get("tombstones_p99") is not None]
    if not rows:
        return ""
    whose = "/".join(_engine_title(e) for e in engines)
    source = f" ({_fmt(whose)}'s figures)" if whose else ""
    title = f"<h3>Tombstones scanned per read{source}</h3>"
    return title + _table(rows, [("phase", "Phase"), ("op", "Op")] + TOMBSTONE_COLUMNS)


class _Figures:
    """Numbered chart elements of one page."""

    def __init__(self) -> None:
        self.count = 0

    def tag(self, figure: dict[str, Any], height: int) -> str:
        self.count += 1
        return figure_tag(f"chart{self.count}", figure, height)

    def grid(self, figures: list[tuple[str, dict[str, Any]]], height: int) -> str:
        return "<div class='grid'>" + "".join(self.tag(f, height) for _n, f in figures) + "</div>"


def _answer(store: Path, run_id: str) -> str:
    found = summary_of.answers(store, run_id)
    if not found:
        return ""

    def rate(v: float | None) -> str:
        return "" if v is None else _fmt(float(v), "ops_per_s")

    def bracket(low: float | None, high: float | None) -> str:
        if low is not None and high is not None:
            return f"{rate(low)} to {rate(high)}"
        if high is not None:
            return f"below {rate(high)}"
        return f"at least {rate(low)}" if low is not None else ""

    rows = [[a.target, rate(a.ops_per_s) or "none", a.criterion, bracket(*a.bracket), a.source]
            for a in found]  # fmt: skip
    best = summary_of.winner(found)
    if best is not None:
        top, second, ratio = best
        line = (f"<b>{_fmt(top.target)}</b> holds <b>{_fmt(top.ops_per_s, 'ops_per_s')} ops/s"
                f"</b> at {_fmt(top.criterion)}: <b>{ratio:.2f}×</b> {_fmt(second.target)}'s "
                f"{_fmt(second.ops_per_s, 'ops_per_s')} ops/s ({(ratio - 1) * 100:+.0f}%).")  # fmt: skip
    else:
        line = " ".join(
            f"<b>{_fmt(a.target)}</b> holds <b>{_fmt(a.ops_per_s, 'ops_per_s')} ops/s</b> at "
            f"{_fmt(a.criterion)}." if a.ops_per_s is not None else
            f"<b>{_fmt(a.target)}</b>: no step met {_fmt(a.criterion)}."
            for a in found
        )  # fmt: skip
    table = _text_table(ANSWER_HEADERS, rows, {0, 2, 4})
    return (f"<h3>The answer: highest throughput at the latency target</h3>"
            f"<p class='answer'>{line}</p><div id='answer'>{table}</div>")  # fmt: skip


def _phase_verdicts(headlines: list[dict[str, Any]], engines: list[dict[str, Any]]) -> list[str]:
    """Per workload phase run on two or more targets: who had the higher throughput and
    the lower p99, by how much. A load where a target loads blocks of rows compares rows/s
    (workload_throughput.rate_of: a block is not a row) and gives no p99 verdict (a
    block's time against a row's); any other phase only among targets with the same op
    types."""
    out = []
    for phase in dict.fromkeys(r["phase"] for r in headlines):
        mine = [r for r in headlines if r["phase"] == phase]
        unit = phase_unit(mine)
        rows = [r for r in mine if rate_of(r, unit)]
        if len(rows) < 2 or (unit == OPS and len(_op_sets(phase, rows, engines)) > 1):
            continue
        text = f"<b>{_fmt(phase)}</b>: {_throughput_verdict(rows, unit)}"
        # a block's p99 is the time of a whole block of rows, a row's of one row: in such
        # a load the two do not compare, and no latency verdict is given
        low = sorted((r for r in rows if r["p99_ms"]), key=lambda r: r["p99_ms"])
        if len(low) >= 2 and unit == OPS:
            text += (f"; lowest p99 {_fmt(low[0]['target'])} ({_fmt(low[0]['p99_ms'])} ms against "
                     f"{_fmt(low[1]['p99_ms'])} ms)")  # fmt: skip
        out.append(f"<li>{text}</li>")
    return out


def _op_sets(phase: str, rows: list[dict[str, Any]],
             engines: list[dict[str, Any]]) -> set[frozenset[str]]:  # fmt: skip
    """The op types each target ran in `phase` (a mix of reads and one of writes count
    different ops)."""
    return {frozenset(e["op"] for e in engines if e["phase"] == phase
                      and e["target"] == r["target"]) for r in rows}  # fmt: skip


def _throughput_verdict(rows: list[dict[str, Any]], unit: str) -> str:
    """``A 1.23× the throughput of B``, or ``the row throughput (rows/s)`` for a load of
    blocks of rows."""
    fast = sorted(rows, key=lambda r: -rate_of(r, unit))
    what = "the throughput" if unit == OPS else f"the row throughput ({ROWS})"
    ratio = rate_of(fast[0], unit) / rate_of(fast[1], unit)
    return f"{_fmt(fast[0]['target'])} {ratio:.2f}× {what} of {_fmt(fast[1]['target'])}"


def _headlines(engines: list[dict[str, Any]]) -> str:
    rows = summary_of.phase_headlines(engines)
    if not rows:
        return ""
    cells = [[r["phase"], r["target"], f"{r['ops']:,}", throughput_text(r), _fmt(r["p99_ms"]),
              f"{r['errors']:,}"] for r in rows]  # fmt: skip
    verdicts = _phase_verdicts(rows, engines)
    said = f"<ul>{''.join(verdicts)}</ul>" if verdicts else ""
    return (f"<h3>Each workload phase (throughput over the phase, response time)</h3>{said}"
            f"<div id='headlines'>{_text_table(HEADLINE_HEADERS, cells, {0, 1})}</div>")  # fmt: skip


def _summary(reader: StoreReader, run: dict[str, Any], phases: list[dict[str, Any]],
             engines: list[dict[str, Any]]) -> str:  # fmt: skip
    run_id = run["id"]
    started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(run["started"] or 0))
    took = (run["ended"] - run["started"]) if run["ended"] and run["started"] else None
    phase_items = "".join(
        f"<li>{_fmt(p['name'])} ({_fmt(p['type'] or '')}): "
        f"{_fmt((p['ended'] or p['started']) - p['started'])} s{_phase_notes(p)}</li>"
        for p in phases if p["started"] is not None
    )  # fmt: skip
    about = summary_of.description(run.get("scenario_text"))
    facts = [
        ("Scenario", _fmt(run["scenario"] or "")),
        ("Status", f"<b>{_fmt(run['status'] or '')}</b>"
                   + (f": {_fmt(run['reason'])}" if run["reason"] else "")),
        ("Started", f"{started}" + (f", took {took:,.0f} s" if took else "")),
        ("Tools", _fmt(summary_of.tool_versions(run)) or "not recorded"),
    ]  # fmt: skip
    hosts = [[h.name, h.engine, h.version, h.facts] for h in summary_of.hosts(run)]
    where = _text_table(HOST_HEADERS, hosts, {0, 1, 2, 3}) if hosts else "<p>no host facts stored</p>"
    return (
        "<h2>Summary</h2>"
        + (f"<p>{_fmt(about)}</p>" if about else "")
        + "<dl class='facts'>" + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in facts)
        + f"</dl><h3>Where it ran</h3>{where}"
        + _answer(reader.path, run_id)
        + _headlines(engines)
        + f"<h3>Phases</h3><ul>{phase_items}</ul>"
    )  # fmt: skip


def _phase_notes(phase: dict[str, Any]) -> str:
    """What the phase's result notes (e.g. its rate steered live), after its length."""
    result = phase.get("result")
    notes = result.get("notes") if isinstance(result, dict) else None
    if not isinstance(notes, list) or not notes:
        return ""
    return " (" + "; ".join(_fmt(str(n)) for n in notes) + ")"


def _target_p99(phases: list[dict[str, Any]]) -> float | None:
    for p in phases:
        result = p["result"] if isinstance(p["result"], dict) else {}
        params = p["params"] if isinstance(p["params"], dict) else {}
        value = result.get("target_p99_ms", params.get("target_p99_ms"))
        if isinstance(value, int | float):
            return float(value)
    return None


def _charts(reader: StoreReader, run_id: str, phases: list[dict[str, Any]],
            engines: list[dict[str, Any]], summary: list[dict[str, Any]],
            figures: _Figures) -> str:  # fmt: skip
    drawn = figures.count
    out = []
    points = latency_curve(reader.path, run_id)
    if points:
        out.append(figures.tag(charts.curve_figure(points, _target_p99(phases), _label), 420))
    for _phase, figure in charts.engine_figures(engines, _label):
        out.append(figures.tag(figure, 340))
    workloads = charts.workload_figure(engines, _label)
    if workloads is not None:
        out.append(figures.tag(workloads, 340))
    ttl = charts.ttl_figure(summary, _label)
    if ttl is not None:
        out.append(figures.tag(ttl, 360))
    ops = reader.op_seconds(run_id)
    cards = charts.phase_figures(ops, phases, _label)
    if cards:
        out.append("<h3>Each phase on its own scale (throughput, p99 log)</h3>")
        out.append(figures.grid(cards, 340))
    nodes = reader.node_seconds(run_id)
    times = [r["ts"] for r in ops] + [r["ts"] for r in nodes]
    t0 = min(times) if times else 0.0
    for row in nodes:
        row["ts"] -= t0
    bands = [(p["started"] - t0, (p["ended"] or p["started"]) - t0, p["name"]) for p in phases
             if p["started"] is not None]  # fmt: skip
    hosts = charts.node_figures(nodes, bands, _label)
    if hosts:
        out.append("<h3>Database nodes: CPU and RAM used (phases shaded)</h3>")
        out.append(figures.grid(hosts, 260))
    if figures.count == drawn:
        out.append("<p>no samples stored for this run</p>")
    return "<h2>Charts</h2>" + "".join(out)


def _tables(reader: StoreReader, run_id: str, engines: list[dict[str, Any]],
            summary: list[dict[str, Any]]) -> str:  # fmt: skip
    out = ["<h2>Tables</h2><h3>Results per phase and op</h3>", _table(summary, RESULT_COLUMNS),
           _tombstones(summary, reader.table_reads_engines(run_id))]  # fmt: skip
    if len({r["target"] for r in engines}) >= 2:
        cells = [list(engine_cells(r)) for r in engines]
        out.append("<h2>Engines (response time, ms)</h2>" + _text_table(ENGINE_HEADERS, cells, {0, 1, 2, 12}))
    steps = reader.ramp_steps(run_id)
    if steps:
        out.append(f"<h2>Ramp steps</h2>{_table(steps, STEP_COLUMNS)}")
    headers, rows = workload_table(engines)
    if rows:  # study 4's table ends the report
        out.append("<h2>Throughput per workload (ops/s)</h2><div id='workloads'>"
                   + _text_table(headers, rows, {0}) + "</div>")  # fmt: skip
    return "".join(out)


def _head(title: str) -> str:
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{title}</title>"
            f"<meta name='viewport' content='width=device-width'><style>{CSS}</style>"
            f"{library_tag()}</head><body><main>")  # fmt: skip


def _body(reader: StoreReader, run_id: str, figures: _Figures) -> str:
    """One run's summary, charts and tables."""
    run = reader.run(run_id)
    phases = reader.phases(run_id)
    summary = reader.phase_summary(run_id)
    engines = engine_table(reader.path, [run_id]) if summary else []
    return (
        f"{_summary(reader, run, phases, engines)}"
        f"{_charts(reader, run_id, phases, engines, summary, figures)}"
        f"{_tables(reader, run_id, engines, summary)}"
    )


def history_note(store: Path, run_id: str) -> str | None:
    """'this run sits after a change point at run X (p99 +N%)' when the run's scenario
    history (store/history.py) has a change point at or before it, else None."""
    return change_point_sentence(store, run_id)


def render(reader: StoreReader, run_id: str) -> str:
    run = reader.run(run_id)
    return (
        _head(f"loadtower run {_fmt(run_id)}")
        + f"<h1>Run {_fmt(run_id)}: {_fmt(run['name'] or '')}</h1>"
        + (f"<p><b>{escape(n)}</b></p>" if (n := history_note(reader.path, run_id)) else "")
        + _body(reader, run_id, _Figures())
        + "</main></body></html>"
    )


def render_pair(reader: StoreReader, run_a: str, run_b: str) -> str:
    """Two runs: how B compares with A (compare_runs' rows, both runs' curves on one
    chart), then each run's own report."""
    figures = _Figures()
    head = _head(f"loadtower runs {_fmt(run_a)} and {_fmt(run_b)}")
    return (
        head + f"<h1>Run {_fmt(run_a)} (A) against {_fmt(run_b)} (B)</h1>"
        + report_pair.comparison(reader.path, run_a, run_b, figures.tag, _fmt, _label)
        + f"<h1>A: run {_fmt(run_a)}</h1>" + _body(reader, run_a, figures)
        + f"<h1>B: run {_fmt(run_b)}</h1>" + _body(reader, run_b, figures)
        + "</main></body></html>"
    )  # fmt: skip


def write_report(store: Path, run_id: str, out: Path, run_b: str | None = None) -> None:
    reader = StoreReader(store)
    html = render(reader, run_id) if run_b is None else render_pair(reader, run_id, run_b)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(html, encoding="utf-8")
