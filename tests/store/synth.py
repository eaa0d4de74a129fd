"""Synthetic but realistic agent interval lines, with the raw latencies kept for checking."""

from __future__ import annotations

import random
from collections import defaultdict

from hdrh.histogram import HdrHistogram

from loadtower.protocol.hdr_encoding import encode

OPS = ("read", "update", "insert")
T0 = 1_763_812_800


def hist(values_us: list[int], agents_form: bool = True) -> str:
    """As the agents send it (uncompressed V2), or as hdrh's `encode` writes it."""
    h = HdrHistogram(1, 60_000_000, 3)
    for v in values_us:
        h.record_value(min(max(v, 1), 60_000_000))
    return encode(h) if agents_form else h.encode().decode()


def make_lines(
    seconds: int = 20,
    agents: int = 4,
    ops: tuple[str, ...] = OPS,
    phase: str = "run",
    start: int = T0,
    scale: float = 1.0,
    seed: int = 1,
    per_second: int = 60,
) -> tuple[list[dict], dict[tuple[int, str], list[int]]]:
    """Interval lines from `agents` agents; raw[(ts, op)] = every response latency (us)."""
    rng = random.Random(seed)
    raw: dict[tuple[int, str], list[int]] = defaultdict(list)
    lines = []
    for ts in range(start, start + seconds):
        for a in range(agents):
            line = {"type": "interval", "agent": f"agent{a % 2}/{a}", "host": f"agent{a % 2}"}
            line.update(ts=ts, phase=phase, cpu_pct=20.0 + a, ops={})
            for k, op in enumerate(ops):
                n = per_second + rng.randrange(per_second // 2)
                mu = 6.5 + 0.4 * k + 0.2 * (a % 2)  # per op and per host differences
                lat = [int(rng.lognormvariate(mu, 0.6) * scale) for _ in range(n)]
                if rng.random() < 0.05:
                    lat.append(int(rng.uniform(50_000, 200_000) * scale))  # a GC pause
                svc = [max(1, v - rng.randrange(50)) for v in lat]
                errors = {"ReadTimeout": 1} if rng.random() < 0.1 else {}
                raw[(ts, op)].extend(lat)
                line["ops"][op] = {
                    "ops": len(lat) + sum(errors.values()),
                    "errors": errors,
                    "late": rng.randrange(3),
                    # both forms the store reads: the agents' and hdrh's compressed one
                    "service_hist": hist(svc, agents_form=a % 2 == 0),
                    "response_hist": hist(lat, agents_form=a % 2 == 0),
                }
            lines.append(line)
    return lines, raw


def node_samples(seconds: int, hosts: int = 3, start: int = T0) -> list[tuple]:
    rows = []
    for ts in range(start, start + seconds):
        for h in range(hosts):
            rows.append((float(ts), f"db{h}", 40.0 + h, 6 << 30, 16 << 30, 1e6, 2e6, 3e6, 4e6))
    return rows


def percentile_us(values: list[int], pct: float) -> int:
    """hdrh's percentile rule on exact values: the value at rank ceil-ish(pct * n)."""
    ordered = sorted(values)
    rank = max(int(pct * len(ordered) / 100 + 0.5), 1)
    return ordered[rank - 1]


def write_run(writer, lines, seconds: int, name: str = "t", nodes: bool = True) -> str:  # noqa: ANN001
    run_id = writer.start_run(name, "scn", "a: 1\npassword: hunter2\n", "hosts: []\n", {}, {}, {})
    writer.phase_started(run_id, 0, "run", "run", float(lines[0]["ts"]), {"rate": 100})
    for line in lines:
        writer.add_interval(run_id, line)
    if nodes:
        for row in node_samples(seconds, start=lines[0]["ts"]):
            writer.add_node_sample(run_id, *row)
    writer.phase_ended(run_id, 0, float(lines[-1]["ts"]) + 1, {"ok": True})
    writer.event(run_id, float(lines[0]["ts"]), "phase", "run started", phase="run")
    writer.end_run(run_id, "completed", None)
    return run_id
