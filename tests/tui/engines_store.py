"""A deterministic store with one run of two targets (ycsb-suite's shape: Cassandra, then
MongoDB, two workloads each, MongoDB with errors by class), written through the real
StoreWriter with real HDR histograms, for the engines screen's tests and snapshot."""

from __future__ import annotations

import random
from pathlib import Path

from hdrh.histogram import HdrHistogram

T0 = 1_790_100_000
RUN_SUITE = "20260922-181000-5e17"
SCENARIO = 'name = "ycsb-suite"\n[targets.cassandra]\nengine = "cassandra"\n' \
           '[targets.mongodb]\nengine = "mongodb"\n'
# target, workload, op -> (ops per second, median us, errors by class per second)
WORKLOADS = {
    "load": {"insert": (400, 800, {})},
    "ycsb-a": {"read": (200, 900, {}), "update": (200, 1100, {})},
}
SLOWER = {"cassandra": 1.0, "mongodb": 2.5}
MONGO_ERRORS = {("ycsb-a", "update", 3): {"MongoNetwork": 2, "MongoTimeout": 1},
                ("ycsb-a", "read", 5): {"MongoNetwork": 1}}
SECONDS = 8


def _hist(rng: random.Random, count: int, median_us: float) -> str:
    hist = HdrHistogram(1, 60_000_000, 3)
    for _ in range(count):
        hist.record_value(max(1, int(rng.lognormvariate(0, 0.6) * median_us)))
    return hist.encode().decode()


def build_engines_store(path: Path) -> Path:
    from loadtower.store import StoreWriter

    rng = random.Random(17)
    with StoreWriter(path) as w:
        w.start_run("ycsb-suite", "ycsb-suite", SCENARIO, "", {"loadtower": "0.1.0"}, {}, {},
                    run_id=RUN_SUITE, started=float(T0))
        start = T0
        number = 0
        for target, slow in SLOWER.items():
            for workload, ops_of in WORKLOADS.items():
                name = f"{target}:{workload}"
                params = {"type": "run", "engine": target, "target": target}
                w.phase_started(RUN_SUITE, number, name, "run", float(start), params)
                for sec in range(SECONDS):
                    ops = {}
                    for op, (rate, median, _none) in ops_of.items():
                        errors = (MONGO_ERRORS.get((workload, op, sec), {})
                                  if target == "mongodb" else {})
                        n = rate + rng.randint(-20, 20)
                        h = _hist(rng, n - sum(errors.values()), median * slow)
                        ops[op] = {"ops": n, "errors": errors, "late": 0,
                                   "service_hist": h, "response_hist": h}
                    w.add_interval(RUN_SUITE, {
                        "type": "interval", "agent": "agent1/0", "host": "agent1",
                        "ts": start + sec, "phase": name, "cpu_pct": 20.0, "ops": ops})
                w.phase_ended(RUN_SUITE, number, float(start + SECONDS), {})
                start += SECONDS + 2
                number += 1
        w.end_run(RUN_SUITE, "completed", None, ended=float(start))
    return path
