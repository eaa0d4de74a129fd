"""A deterministic store with one run of two targets (ycsb-suite's shape: Cassandra, then
MongoDB, two workloads each, MongoDB with errors by class), written through the real
StoreWriter with real HDR histograms, for the engines screen's tests and snapshot."""

from __future__ import annotations

import random
from pathlib import Path

from hdrh.histogram import HdrHistogram

T0 = 1_790_100_000
RUN_SUITE, RUN_SUITE_2 = "20260922-181000-5e17", "20260922-191000-5e18"
SCENARIO = 'name = "ycsb-suite"\n[targets.cassandra]\nengine = "cassandra"\n' \
           '[targets.mongodb]\nengine = "mongodb"\n'
# target, workload, op -> (ops per second, median us, errors by class per second)
WORKLOADS = {
    "load": {"insert": (400, 800, {})},
    "ycsb-a": {"read": (200, 900, {}), "update": (200, 1100, {})},
}
SLOWER = {"cassandra": 1.0, "mongodb": 2.5}  # run 2: MongoDB 3x slower than Cassandra
MONGO_ERRORS = {("ycsb-a", "update", 3): {"MongoNetwork": 2, "MongoTimeout": 1},
                ("ycsb-a", "read", 5): {"MongoNetwork": 1}}
SECONDS = 8


def _hist(rng: random.Random, count: int, median_us: float) -> str:
    hist = HdrHistogram(1, 60_000_000, 3)
    for _ in range(count):
        hist.record_value(max(1, int(rng.lognormvariate(0, 0.6) * median_us)))
    return hist.encode().decode()


def _write_suite(w: object, run_id: str, t0: int, seed: int, mongo_slow: float) -> None:
    rng = random.Random(seed)
    w.start_run("ycsb-suite", "ycsb-suite", SCENARIO, "", {"loadtower": "0.1.0"}, {}, {},  # type: ignore[attr-defined]
                run_id=run_id, started=float(t0))
    start = t0
    number = 0
    for target in SLOWER:
        slow = mongo_slow if target == "mongodb" else SLOWER[target]
        for workload, ops_of in WORKLOADS.items():
            name = f"{target}:{workload}"
            params = {"type": "run", "engine": target, "target": target}
            w.phase_started(run_id, number, name, "run", float(start), params)  # type: ignore[attr-defined]
            for sec in range(SECONDS):
                ops = {}
                for op, (rate, median, _none) in ops_of.items():
                    errors = (MONGO_ERRORS.get((workload, op, sec), {})
                              if target == "mongodb" else {})
                    n = rate + rng.randint(-20, 20)
                    h = _hist(rng, n - sum(errors.values()), median * slow)
                    ops[op] = {"ops": n, "errors": errors, "late": 0,
                               "service_hist": h, "response_hist": h}
                w.add_interval(run_id, {  # type: ignore[attr-defined]
                    "type": "interval", "agent": "agent1/0", "host": "agent1",
                    "ts": start + sec, "phase": name, "cpu_pct": 20.0, "ops": ops})
            w.phase_ended(run_id, number, float(start + SECONDS), {})  # type: ignore[attr-defined]
            start += SECONDS + 2
            number += 1
    w.end_run(run_id, "completed", None, ended=float(start))  # type: ignore[attr-defined]


def build_engines_store(path: Path) -> Path:
    """Two ycsb-suite runs an hour apart (the second's MongoDB slower)."""
    from loadtower.store import StoreWriter

    with StoreWriter(path) as w:
        _write_suite(w, RUN_SUITE, T0, 17, SLOWER["mongodb"])
        _write_suite(w, RUN_SUITE_2, T0 + 3600, 18, 3.0)
    return path
