"""Sinks: a line that arrives twice (live and from an agent's spool) is stored once;
error classes are announced as events; windows count errors by class."""

from __future__ import annotations

from pathlib import Path

from loadtower.orchestrator.sinks import Sinks
from loadtower.scenarios.plan import load_plan
from loadtower.store import StoreReader, StoreWriter
from tests.orchestrator.test_live_stats import _line

INVENTORY = """
[hosts.db1]
address = "127.0.0.1"
roles = ["db"]
engine = "cassandra"
[hosts.agent1]
address = "127.0.0.1"
roles = ["agent"]
"""
SCENARIO = """
name = "sinks"
[[phases]]
type = "run"
rate = 10
duration = "5s"
"""


def _sinks(tmp_path: Path) -> tuple[Sinks, StoreWriter, str]:
    (tmp_path / "inv.toml").write_text(INVENTORY)
    (tmp_path / "sc.toml").write_text(SCENARIO)
    plan = load_plan(tmp_path / "sc.toml", tmp_path / "inv.toml")
    writer = StoreWriter(tmp_path / "store.duckdb")
    run_id = writer.start_run("sinks", "sinks", SCENARIO, INVENTORY, {}, {}, {})
    return Sinks(writer, run_id, plan), writer, run_id


def test_a_line_is_stored_once_however_often_it_arrives(tmp_path: Path) -> None:
    sinks, writer, run_id = _sinks(tmp_path)
    lines = [{**_line("agent1/0", 100 + n, "read", [1000] * 10), "seq": n + 1} for n in range(4)]
    stored = [sinks.interval(dict(line)) for line in lines]  # live
    stored += [sinks.interval(dict(line)) for line in reversed(lines)]  # backfilled again
    stored.append(sinks.interval({**lines[0], "seq": None}))  # no seq: always taken
    assert stored == [True] * 4 + [False] * 4 + [True]
    assert sinks.duplicates == 4
    writer.close()
    rows = StoreReader(tmp_path / "store.duckdb").op_seconds(run_id)
    assert [(r["ts"], r["ops"]) for r in rows] == [(100, 20), (101, 10), (102, 10), (103, 10)]


def test_error_classes_are_announced_and_counted_by_class(tmp_path: Path) -> None:
    sinks, writer, run_id = _sinks(tmp_path)
    sinks.interval(_line("agent1/0", 200, "read", [1000], errors=3))  # class "Timeout"
    sinks.interval(_line("agent1/0", 201, "read", [1000], errors=2))  # same class: quiet
    sinks.interval(_line("agent1/0", 260, "read", [1000], errors=1))  # 59 s later: again
    window = sinks.stats.window(200, 261)
    assert window.errors == 6 and window.errors_by_class == {"Timeout": 6}
    writer.close()
    events = [e for e in StoreReader(tmp_path / "store.duckdb").events(run_id)
              if e["kind"] == "errors"]
    assert [(e["ts"], e["message"]) for e in events] == [
        (200.0, "3 Timeout errors at agent agent1/0 (the first in this run)"),
        (260.0, "1 Timeout errors at agent agent1/0 (again)"),
    ]


def test_an_agent_above_90_percent_cpu_is_warned_about_once_per_window(tmp_path: Path) -> None:
    """Over 90 % CPU warns; the same agent again within WARN_EVERY_S (by the lines' own
    seconds) does not; after it, or another agent, does. 90 % itself is not above."""
    from loadtower.orchestrator.sinks import AGENT_CPU_WARN, WARN_EVERY_S

    sinks, writer, run_id = _sinks(tmp_path)
    seen = [
        ("agent1/0", 100, 95.0),  # warns
        ("agent1/0", 101, 99.0),  # within the window: quiet
        ("agent1/0", 100 + int(WARN_EVERY_S) - 1, 97.0),  # still within: quiet
        ("agent1/1", 110, 93.0),  # another agent: warns
        ("agent1/0", 120, AGENT_CPU_WARN),  # not above: quiet
        ("agent1/0", 100 + int(WARN_EVERY_S), 91.0),  # the window has passed: warns again
    ]
    for agent, ts, cpu in seen:
        sinks.interval({**_line(agent, ts, "read", [1000]), "cpu_pct": cpu})
    writer.close()
    warnings = [e for e in StoreReader(tmp_path / "store.duckdb").events(run_id)
                if e["kind"] == "warning"]
    assert [(e["ts"], e["data"]["agent"], e["data"]["cpu_pct"]) for e in warnings] == [
        (100.0, "agent1/0", 95.0),
        (110.0, "agent1/1", 93.0),
        (100.0 + WARN_EVERY_S, "agent1/0", 91.0),
    ]
    assert warnings[0]["message"].startswith("agent agent1/0 at 95% CPU: its latency figures")
    assert {e["host"] for e in warnings} == {"h"}
    agents = StoreReader(tmp_path / "store.duckdb").agent_samples(run_id)
    assert len(agents) == len(seen)  # every line's CPU is recorded, warned or not


def test_engine_figures_become_node_stats_rows(tmp_path: Path) -> None:
    sinks, writer, run_id = _sinks(tmp_path)
    data = {"ts": 100.25, "connections_current": 4, "mem_resident_mb": None, "flag": True,
            "note": "text", "opcounters_delta": {"insert": 10, "query": 2}, "ops_per_s": 12.0}
    assert sinks.node_stats("db1", "mongodb", data) == 4  # numbers only, nested by dots
    assert sinks.node_stats("db1", "mongodb", {"ts": 101.0, "note": "no numbers"}) == 0
    assert data["ts"] == 100.25  # the caller's dict is left as it was
    writer.end_run(run_id, "completed", None)
    writer.close()
    rows = StoreReader(tmp_path / "store.duckdb").node_stats(run_id)
    assert {(r["ts"], r["host"], r["engine"], r["name"], r["value"]) for r in rows} == {
        (100.25, "db1", "mongodb", "connections_current", 4.0),
        (100.25, "db1", "mongodb", "opcounters_delta.insert", 10.0),
        (100.25, "db1", "mongodb", "opcounters_delta.query", 2.0),
        (100.25, "db1", "mongodb", "ops_per_s", 12.0),
    }


def test_a_hosts_merged_line_is_stored_once_and_its_workers_lines_are_not(
    tmp_path: Path,
) -> None:
    """agents/host_merge.py: a merged line names the (agent, seq) lines it holds; stored,
    it marks them all, and a spool's read of any of them stores nothing more. A merged
    line holding a line stored already is left out whole: its other lines are still in
    their spools, for the next read."""
    from loadtower.agents.host_merge import merge_lines
    from loadtower.protocol.hdr_encoding import encode, new_hist

    def line(agent: str, ts: int, values: list[int], seq: int) -> dict:
        out = _line(agent, ts, "read", values)
        hist = new_hist()  # the agents' form: base64 of the uncompressed V2 encoding
        for v in values:
            hist.record_value(v)
        out["ops"]["read"]["service_hist"] = out["ops"]["read"]["response_hist"] = encode(hist)
        return {**out, "seq": seq}

    sinks, writer, run_id = _sinks(tmp_path)
    a, b = line("agent1/0", 300, [1000] * 3, 5), line("agent1/1", 300, [2000] * 2, 9)
    c, d = line("agent1/0", 301, [1000] * 4, 6), line("agent1/1", 301, [1000], 10)
    merged = dict(merge_lines("agent1", [a, b]))  # type: ignore[list-item]
    assert sinks.interval(merged) is True
    assert sinks.interval(dict(merged)) is False  # again
    assert [sinks.interval(dict(x)) for x in (a, b)] == [False, False]  # from the spools
    assert sinks.interval(dict(c)) is True  # c alone first (a spool's read) ...
    assert sinks.interval(dict(merge_lines("agent1", [c, d]))) is False  # type: ignore[list-item]
    assert sinks.interval(dict(d)) is True  # ... d from the spool's next read
    writer.close()
    rows = StoreReader(tmp_path / "store.duckdb").op_seconds(run_id)
    assert [(r["ts"], r["ops"]) for r in rows] == [(300, 5), (301, 5)]
