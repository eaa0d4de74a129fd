"""The HTML report a colleague reads: its summary's numbers are `compare`'s, it opens
offline (plotly.js inlined, no external src/href), its tables have human headers, and
every name from the store is escaped, in tables and charts alike."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from loadtower.store import StoreReader, StoreWriter
from loadtower.store.report_html import render
from tests.store.report_run import LEVELS, write_two_target_run
from tests.store.synth import T0


def cli(*args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "loadtower", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


class Page(HTMLParser):
    """The page's tables by the id of their wrapping div, its links and its scripts."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self.links: list[str] = []
        self.scripts: list[str] = []
        self.headers: list[str] = []
        self._div: str | None = None
        self._row: list[str] | None = None
        self._cell: list[str] | None = None
        self._in_script = False
        self._in_th = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        for name in ("src", "href", "action", "data", "srcset"):
            if found.get(name):
                self.links.append(str(found[name]))
        if tag == "div" and found.get("id"):
            self._div = found["id"]
            self.tables[self._div] = []
        elif tag == "tr":
            self._row = []
        elif tag in ("td", "th"):
            self._cell = []
            self._in_th = tag == "th"
        elif tag == "script":
            self._in_script = True
            self.scripts.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append("".join(self._cell))
            if self._in_th:
                self.headers.append("".join(self._cell))
            self._cell = None
        elif tag == "tr" and self._row is not None:
            if self._div is not None:
                self.tables[self._div].append(self._row)
            self._row = None
        elif tag == "table":
            self._div = None
        elif tag == "script":
            self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)
        if self._in_script:
            self.scripts[-1] += data


def parse(html: str) -> Page:
    page = Page()
    page.feed(html)
    return page


@pytest.fixture(scope="module")
def two_targets(tmp_path_factory: pytest.TempPathFactory) -> dict:
    path = Path(tmp_path_factory.mktemp("report")) / "s.duckdb"
    run_id = write_two_target_run(path)
    out = path.parent / "r.html"
    done = cli("report", "--store", str(path), run_id, "--out", str(out))
    assert done.returncode == 0, done.stderr
    return {"path": path, "run_id": run_id, "html": out.read_text("utf-8")}


def test_summary_numbers_are_compares(two_targets: dict) -> None:
    """The answer (each target's rate at its target) and the workload table hold the
    figures `loadtower compare RUN` (and `--curves`) prints for the same run."""
    store, run_id = str(two_targets["path"]), two_targets["run_id"]
    done = cli("compare", "--store", store, run_id, "--json")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    totals = {(r["target"], r["phase"]): r for r in rows if r["op"] == "total"}
    page = parse(two_targets["html"])
    answer = {row[0]: row for row in page.tables["answer"][1:]}
    assert set(answer) == {"cassandra", "clickhouse"}
    curves = cli("compare", "--store", store, run_id, "--curves", "--json")
    assert curves.returncode == 0, curves.stderr
    at_target = {r["target"]: r for r in json.loads(curves.stdout)["at_target"]}
    for target in ("cassandra", "clickhouse"):  # compare's rate at the target, as printed
        assert answer[target][1] == f"{at_target[target]['rate']:,.1f}"
        assert answer[target][2] == "p99 <= 100 ms"
        assert answer[target][4] == at_target[target]["source"]
    # cassandra passed every step: its rate is its best step's, as compare's rows give it
    best = max(LEVELS, key=lambda level: totals[("cassandra", f"saturation@{level}")]["ops_per_s"])
    assert answer["cassandra"][1] == f"{totals[('cassandra', f'saturation@{best}')]['ops_per_s']:,.1f}"
    # the headline per workload phase and study 4's table: compare's total rows
    headlines = {(r[0], r[1]): r for r in page.tables["headlines"][1:]}
    workloads = {r[0]: r for r in page.tables["workloads"][1:]}
    assert page.tables["workloads"][0] == ["Workload", "cassandra (ops/s)", "clickhouse (ops/s)"]
    for i, target in enumerate(("cassandra", "clickhouse")):
        mix = totals[(target, "mix")]
        assert headlines[("mix", target)][3] == f"{mix['ops_per_s']:,.1f}"
        assert headlines[("mix", target)][4] == f"{mix['p99_ms']:,.2f}"
        assert workloads["mix"][1 + i] == f"{mix['ops_per_s']:,.1f}"
    # the text `compare` prints ends with the same workload table
    text = cli("compare", "--store", store, run_id).stdout
    tail = text[text.index("Throughput per workload (ops/s)"):]
    assert workloads["mix"][1] in tail and workloads["mix"][2] in tail
    # the winner by how much, in words
    rates = {t: float(answer[t][1].replace(",", "")) for t in answer}
    top = max(rates, key=lambda t: rates[t])
    other = min(rates, key=lambda t: rates[t])
    assert f"{rates[top] / rates[other]:.2f}×" in two_targets["html"]


def test_report_opens_offline(two_targets: dict) -> None:
    """No src/href to any host: plotly.js is inlined (one script) and each chart draws
    from data in the page."""
    html = two_targets["html"]
    page = parse(html)
    assert page.links == []
    assert "<link" not in html and "<iframe" not in html and "@import" not in html
    assert not re.search(r"url\(\s*['\"]?https?:", html)
    library = page.scripts[0]
    assert "plotly.js v" in library[:200] and len(library) > 1_000_000
    charts = page.scripts[1:]
    assert charts and all(s.startswith("Plotly.newPlot(") for s in charts)
    # the curves, the engines' bars, the workloads' bars, a chart per phase and per node
    assert len(charts) == 1 + 1 + 1 + 4 + 2
    assert len(html) < 6_000_000  # the bundle (about 4.8 MB) and small figures


def test_tables_have_human_headers(two_targets: dict) -> None:
    page = parse(two_targets["html"])
    for header in ("Throughput (ops/s)", "p99 (ms)", "Duration (s)", "Result", "Engine",
                   "Rate at target (ops/s)"):  # fmt: skip
        assert header in page.headers
    for raw in ("ops_per_s", "p99_ms", "duration_s", "achieved_ops_per_s", "passed",
                "tombstones_table", "return_codes"):  # fmt: skip
        assert raw not in page.headers
    html = two_targets["html"]
    assert html.count("<td class='passed'>Passed</td>") == 5
    assert html.count("<td class='failed'>Failed</td>") == 1
    assert ">True<" not in html and ">False<" not in html


HOSTILE = "<script>alert(1)</script>&\"'\u2028"


def test_names_from_the_store_are_escaped(tmp_path: Path) -> None:
    """A target, op and host named with HTML and script-ending text: escaped in tables,
    JSON-escaped in the charts' scripts, never raw on the page."""
    path = tmp_path / "s.duckdb"
    run_id = write_two_target_run(path, targets=("cass" + HOSTILE, "click</script>"),
                                  host="db" + HOSTILE, op="op" + HOSTILE)  # fmt: skip
    html = render(StoreReader(path), run_id)
    assert "<script>alert" not in html and "</script>&" not in html
    assert "click</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html  # in the tables
    page = parse(html)
    charts = page.scripts[1:]
    assert charts and all(s.startswith("Plotly.newPlot(") and s.endswith(");") for s in charts)
    for script in charts:
        assert "<" not in script and ">" not in script and "\u2028" not in script
    # the names reach the charts escaped twice: as HTML text, then as JSON in a script
    drawn = "".join(charts)
    assert "\\u0026lt;script\\u0026gt;alert(1)" in drawn  # the op's and the host's


def test_two_runs_compared_as_compare_prints_them(tmp_path: Path) -> None:
    """`report A B`: B against A per phase and op with compare's figures, both runs'
    curves on one chart, then each run's report; still offline."""
    from loadtower.store.compare import compare_runs

    path = tmp_path / "s.duckdb"
    run_a = write_two_target_run(path)
    run_b = write_two_target_run(path, op="read")
    out = tmp_path / "pair.html"
    done = cli("report", "--store", str(path), run_a, run_b, "--out", str(out))
    assert done.returncode == 0, done.stderr
    html = out.read_text("utf-8")
    page = parse(html)
    assert page.links == []
    table = page.tables["pair"]
    assert table[0][:4] == ["Phase", "Op", "Throughput A (ops/s)", "Throughput B (ops/s)"]
    expected = compare_runs(path, run_a, run_b)
    assert [(r[0], r[1], r[2], r[3]) for r in table[1:]] == [
        (r["phase"], r["op"], f"{r['ops_per_s_a']:,.1f}", f"{r['ops_per_s_b']:,.1f}")
        for r in expected
    ]
    assert "cassandra (A) p99" in html and "cassandra (B) p99" in html
    assert html.count(f"<h1>A: run {run_a}</h1>") == 1 and html.count("plotly.js v") == 1


def test_a_phase_steered_live_says_so_in_the_phase_list(tmp_path: Path) -> None:
    """A phase's result notes (the operator steered its rate) follow its length in the
    summary's phase list, escaped."""
    path = tmp_path / "s.duckdb"
    run_id = write_two_target_run(path)
    note = "rate steered live: 500 ops/s -> 1,000 ops/s at 12s <b>"
    with StoreWriter(path) as writer:
        writer.phase_ended(run_id, 0, T0 + 6.0, {"notes": [note], "steered": [{"to": 1000.0}]})
    html = render(StoreReader(path), run_id)
    assert ("(rate steered live: 500 ops/s -&gt; 1,000 ops/s at 12s &lt;b&gt;)</li>"
            in html), re.findall(r"<h3>Phases</h3>.{0,300}", html)
