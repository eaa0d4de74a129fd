"""A synthetic two-target run as recipes-mix stores it: per target a workload phase
(``TARGET:mix``) and a ramp (``TARGET:saturation``, steps at 40, 50 and 60 ops/s with the
ramp's verdicts), node samples, versions and host facts. Names may be hostile."""

from __future__ import annotations

from pathlib import Path

from loadtower.store import StoreWriter
from tests.store.synth import T0, make_lines, node_samples

LEVELS = (40, 50, 60)
SCENARIO = 'name = "recipes-mix"\ndescription = "Experiment 1: one mix on two engines."\n'


def _span(lines: list[dict]) -> list[dict]:
    return [{**line, "span": [line["ts"] - 1.0, float(line["ts"])]} for line in lines]


def write_two_target_run(
    path: Path, targets: tuple[str, str] = ("cassandra", "clickhouse"), host: str = "db1",
    op: str = "read",
) -> str:  # fmt: skip
    """The run's id; the second target's steps are slower (it fails at 60)."""
    with StoreWriter(path) as writer:
        run_id = writer.start_run("t", "recipes-mix", SCENARIO, "", {"loadtower": "0.1"},
                                  {host: {"cpus": 2, "os": "Debian"}}, {})  # fmt: skip
        writer.set_versions(run_id, {"loadtower": "0.1", "databases": {
            host: {"engine": targets[0], "version": "5.0.6"}}})  # fmt: skip
        index = 0
        for t_index, target in enumerate(targets):
            params = {"target": target, "engine": target}
            start = T0 + 200 * t_index
            mix = f"{target}:mix"
            writer.phase_started(run_id, index, mix, "run", float(start), params)
            lines, _ = make_lines(seconds=6, agents=1, ops=(op, "insert"), phase=mix, start=start,
                                  scale=1.0 + t_index, seed=t_index)  # fmt: skip
            for line in _span(lines):
                writer.add_interval(run_id, line)
            writer.phase_ended(run_id, index, float(start + 6), {})
            index += 1
            ramp = f"{target}:saturation"
            writer.phase_started(run_id, index, ramp, "ramp",
                                 float(start + 10), {**params, "target_p99_ms": 100.0})  # fmt: skip
            steps = []
            for number, level in enumerate(LEVELS, start=1):
                begin = start + 10 + 5 * number
                lines, _ = make_lines(seconds=4, agents=1, ops=(op,), phase=f"{ramp}@{level}",
                                      start=begin, scale=1.0 + t_index, seed=number,
                                      per_second=level)  # fmt: skip
                for line in _span(lines):
                    writer.add_interval(run_id, line)
                passed = not (t_index == 1 and level == LEVELS[-1])
                steps.append({"label": f"{ramp}@{level}", "step": number, "asked": level,
                              "unit": "ops/s", "passed": passed,
                              "why": None if passed else "p99 > 100 ms"})  # fmt: skip
            writer.phase_ended(run_id, index, float(start + 30),
                               {"steps": steps, "target_p99_ms": 100.0})  # fmt: skip
            index += 1
        for row in node_samples(420, hosts=2, start=T0):
            writer.add_node_sample(run_id, *row)
        writer.end_run(run_id, "completed", None)
    return run_id
