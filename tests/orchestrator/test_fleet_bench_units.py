"""bench/fleet.py's synthetic workers send lines the orchestrator's real consumers take:
a line as the master prints it goes through LocustLoad's dispatch into Sinks, LiveStats
and the store with every op counted, and the bench's probe times it on both sides."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import duckdb

from loadtower.orchestrator.load_controller import LocustLoad
from loadtower.orchestrator.sinks import Sinks
from loadtower.scenarios.plan import load_plan
from loadtower.store import StoreWriter

BENCH = Path(__file__).resolve().parents[2] / "bench"


def _bench(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"fleet_bench_{name}", BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_a_synthetic_line_reaches_live_stats_and_the_store_with_its_ops(tmp_path: Path) -> None:
    workers, fleet = _bench("fleet_workers"), _bench("fleet")
    (tmp_path / "inv.toml").write_text(fleet.INVENTORY)
    (tmp_path / "sc.toml").write_text(fleet.SCENARIO)
    plan = load_plan(tmp_path / "sc.toml", tmp_path / "inv.toml")
    writer = StoreWriter(tmp_path / "store.duckdb")
    run_id = writer.start_run("fleet", "fleet", None, None, {}, {}, {})
    sinks = Sinks(writer, run_id, plan)
    probe = fleet.Probe(sinks, writer)
    load = LocustLoad(None, plan, run_id, sinks)
    [ops_a, ops_b] = workers.op_templates(3, 40, count=2)
    lines = [workers.interval_line("bench/0", "bench", "run", 1_000 + n, ops, n + 1, 1_001.5 + n)
             for n, ops in enumerate((ops_a, ops_b))]
    for line in lines:  # as the master prints it, as the orchestrator reads it
        load._dispatch(json.loads(json.dumps(line, separators=(",", ":"))))
    phase = sinks.stats.phase("run")
    assert phase.ops == 2 * 3 * 40 and phase.errors == 0
    assert sinks.stats.phase("run", op="op2").ops == 80
    assert list(probe.live.sent) == [1_001.5, 1_002.5] and len(probe.live) == 2
    assert probe.nbytes >= 2 * 16 + 2 * 8  # its records: two pairs and two handed times
    writer.close()
    assert sorted(probe.stored.sent) == [1_001.5, 1_002.5]
    assert all(delay >= 0 for delay in probe.stored.delay)
    with duckdb.connect(str(tmp_path / "store.duckdb"), read_only=True) as con:
        rows = con.execute("SELECT ts, op, ops FROM op_intervals WHERE run_id = ? "
                           "ORDER BY ts, op", [run_id]).fetchall()
        bad = con.execute("SELECT count(*) FROM events WHERE kind = 'bad_sample'").fetchone()
    assert rows == [(ts, f"op{k}", 40) for ts in (1_000, 1_001) for k in range(3)]
    assert bad == (0,)
