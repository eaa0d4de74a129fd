"""YCSB's workloada file as shipped (scenarios/examples/workloads/workloada.properties)
run as it is: `loadtower run workloada.properties -i INV` on the sandbox takes YCSB's
client defaults (load recordcount records with threadcount in flight, then threadcount
users for the run), says which on stderr, and completes with every op stored."""

from __future__ import annotations

from pathlib import Path

import pytest

from loadtower.scenarios.direct_scenario import DEFAULT_RUN_S
from loadtower.store import StoreReader
from tests.orchestrator.run_helpers import only_run, run_scenario

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

WORKLOADA = Path(__file__).resolve().parents[2] / "scenarios/examples/workloads/workloada.properties"


def test_workloada_as_shipped_runs_with_its_defaults(sandbox: dict, tmp_path: Path) -> None:
    store = tmp_path / "runs.duckdb"
    done = run_scenario(WORKLOADA, Path(sandbox["inventory"]), store, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "default: no target: closed model, 1 users (threadcount)" in done.stderr
    run = only_run(store)
    assert run["status"] == "completed"
    reader = StoreReader(store)
    phases = {p["name"]: p for p in reader.phases(run["id"])}
    assert set(phases) == {"1-load", "run"} and all(p["ended"] for p in phases.values())
    assert phases["run"]["ended"] - phases["run"]["started"] >= DEFAULT_RUN_S - 1
    summary = {(r["phase"], r["op"]): r for r in reader.phase_summary(run["id"])}
    assert summary[("1-load", "insert")]["ops"] == 1000  # recordcount
    read, update = summary[("run", "read")], summary[("run", "update")]
    assert read["errors"] == 0 and update["errors"] == 0
    assert read["ops"] > 0 and update["ops"] > 0  # 50/50, zipfian
