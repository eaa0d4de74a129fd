"""Study 4's table from the store: operations, average/min/max, p95/p99 and the return
codes (errors by class) per workload and engine, the same rows for the CLI and --json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hdrh.histogram import HdrHistogram

from loadtower.store import StoreWriter
from loadtower.store.engine_compare import engine_table
from tests.store.synth import T0, hist

# per target, per second: (latencies of the ok reads, errors by class)
SECONDS = {
    "cassandra": [([500, 700, 900], {}), ([800, 1200], {})],
    "mongodb": [([2000, 2600], {"MongoNetwork": 2}), ([3000], {"MongoTimeout": 1,
                                                               "MongoNetwork": 1})],
}


def _line(ts: int, phase: str, latencies: list[int], errors: dict[str, int]) -> dict:
    count = len(latencies) + sum(errors.values())
    return {
        "type": "interval", "agent": "agent1/0", "host": "agent1", "ts": ts, "phase": phase,
        "cpu_pct": 5.0,
        "ops": {"read": {"ops": count, "errors": errors, "late": 0,
                         "service_hist": hist(latencies), "response_hist": hist(latencies)}},
    }


@pytest.fixture
def store(tmp_path: Path) -> tuple[Path, str]:
    path = tmp_path / "s.duckdb"
    with StoreWriter(path) as writer:
        run = writer.start_run("x", "ycsb-suite", 'engine = "cassandra"\n', "", {}, {}, {})
        for number, (target, seconds) in enumerate(SECONDS.items()):
            name = f"{target}:heavy-write"
            start = T0 + number * 100
            writer.phase_started(run, number, name, "run", float(start),
                                 {"type": "run", "engine": target, "target": target})
            for i, (latencies, errors) in enumerate(seconds):
                writer.add_interval(run, _line(start + i, name, latencies, errors))
            writer.phase_ended(run, number, float(start + len(seconds)), {})
        writer.end_run(run, "completed", None)
    return path, run


def test_rows_hold_study_4s_figures_and_return_codes(store: tuple[Path, str]) -> None:
    path, run = store
    rows = {(r["op"], r["target"]): r for r in engine_table(path, [run])}
    mongo = rows[("read", "mongodb")]
    assert (mongo["ops"], mongo["errors"]) == (7, 4)
    assert mongo["return_codes"] == {"OK": 3, "MongoNetwork": 3, "MongoTimeout": 1}
    assert rows[("total", "mongodb")]["return_codes"] == mongo["return_codes"]
    assert rows[("read", "cassandra")]["return_codes"] == {"OK": 5}
    h = HdrHistogram(1, 60_000_000, 3)
    for v in (500, 700, 900, 800, 1200):
        h.record_value(v)
    cass = rows[("read", "cassandra")]
    assert cass["avg_ms"] == pytest.approx(h.get_mean_value() / 1000.0, rel=1e-12)
    assert (cass["min_ms"], cass["max_ms"]) == (h.get_min_value() / 1000.0,
                                                h.get_max_value() / 1000.0)
    assert cass["p95_ms"] == h.get_value_at_percentile(95) / 1000.0
    assert cass["p99_ms"] == h.get_value_at_percentile(99) / 1000.0


def test_compare_prints_the_table(store: tuple[Path, str], capsys: pytest.CaptureFixture[str]
                                  ) -> None:
    from loadtower.cli import main

    path, run = store
    assert main(["compare", run, "--store", str(path)]) == 0
    out = capsys.readouterr().out
    for word in ("heavy-write", "cassandra", "mongodb", "avg", "p95", "p99", "return codes",
                 "OK 3, MongoNetwork 3, MongoTimeout 1"):
        assert word in out, word
    assert main(["compare", run, "--store", str(path), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["target"] for r in rows} == {"cassandra", "mongodb"}


def test_the_html_report_has_the_same_engines_table(store: tuple[Path, str]) -> None:
    from loadtower.store.engine_compare import codes_text
    from loadtower.store.reader import StoreReader
    from loadtower.store.report_html import render

    path, run = store
    html = render(StoreReader(path), run)
    assert "<h2>Engines (response time, ms)</h2>" in html
    rows = engine_table(path, [run])
    mongo = next(r for r in rows if (r["op"], r["target"]) == ("read", "mongodb"))
    assert codes_text(mongo["return_codes"]) == "OK 3, MongoNetwork 3, MongoTimeout 1"
    assert f"<td class='text'>{codes_text(mongo['return_codes'])}</td>" in html
    assert f"<td>{mongo['p99_ms']:,.2f}</td>" in html
