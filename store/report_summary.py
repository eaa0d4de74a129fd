"""What the report's summary says, as data: what ran, where, and the answer.

The answer of a run with ramps (or searches) is each target's rate at its latency
target (curves.rates_at_target: the passing step with the most achieved ops/s, the
figures ``compare`` prints for that step; a search's rate found), and the winner by how
much. A run without a ramp
answers per workload phase: each target's throughput and p99 (engine_table's ``total``
rows, as ``compare RUN`` prints them).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loadtower.store.curves import rates_at_target
from loadtower.store.workload_throughput import workload_totals


@dataclass(frozen=True)
class Answer:
    """One target's rate at its latency target (None: nothing passed), as
    curves.rates_at_target gives it (a search's rate found, or a ramp's)."""

    target: str
    phase: str  # the ramp's or search's phase label
    ops_per_s: float | None
    criterion: str  # "p99 <= 100 ms"
    bracket: tuple[float | None, float | None]
    source: str  # how the rate was found


@dataclass(frozen=True)
class Host:
    name: str
    engine: str
    version: str
    facts: str  # "4 CPUs, 16.0 GiB, Debian GNU/Linux 12"


def answers(store: Path | str, run_id: str) -> list[Answer]:
    """Per ramp or search (one per target), its rate at target; [] for a run without."""
    out = []
    for row in rates_at_target(store, run_id):
        bracket = row.get("bracket") or [None, None]
        out.append(
            Answer(
                target=str(row["target"]),
                phase=str(row["phase"]),
                ops_per_s=row.get("rate"),
                criterion=str(row.get("target_text") or "its latency target"),
                bracket=(bracket[0], bracket[1]),
                source=str(row.get("source") or ""),
            )
        )
    return out


def winner(found: list[Answer]) -> tuple[Answer, Answer, float] | None:
    """(best, runner-up, best's rate over the runner-up's) among two or more targets whose
    rates are known; None otherwise."""
    rated = sorted((a for a in found if a.ops_per_s), key=lambda a: -(a.ops_per_s or 0.0))
    if len(rated) < 2 or len({a.target for a in rated}) < 2:
        return None
    best, second = rated[0], rated[1]
    return best, second, (best.ops_per_s or 0.0) / (second.ops_per_s or 1.0)


def phase_headlines(engines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """engine_table's ``total`` row of every workload phase (not a ramp's steps), whole:
    the phase, target, engine, ops, ops_per_s, p99_ms, errors and, for a block load, its
    rows and rows_per_s, as ``compare RUN`` prints."""
    return workload_totals(engines)


def description(scenario_text: str | None) -> str:
    """The scenario's ``description`` ("" when it has none or does not parse)."""
    try:
        return str(tomllib.loads(scenario_text or "").get("description") or "")
    except tomllib.TOMLDecodeError:
        return ""


def _facts_text(facts: dict[str, Any]) -> str:
    parts = []
    if facts.get("cpus"):
        parts.append(f"{facts['cpus']} CPUs")
    if facts.get("mem_total_bytes"):
        parts.append(f"{facts['mem_total_bytes'] / 2**30:.1f} GiB")
    for key in ("os", "kernel"):
        if facts.get(key):
            parts.append(str(facts[key]))
    return ", ".join(parts)


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def hosts(run: dict[str, Any]) -> list[Host]:
    """The database hosts (engine, server version) and the other hosts with facts."""
    facts = _mapping(run.get("host_facts"))
    databases = _mapping(_mapping(run.get("versions")).get("databases"))
    out = []
    for name in list(databases) + [h for h in facts if h not in databases]:
        db, fact = _mapping(databases.get(name)), _mapping(facts.get(name))
        version = str(db.get("version") or db.get("error") or "")
        out.append(Host(str(name), str(db.get("engine") or ""), version, _facts_text(fact)))
    return out


def tool_versions(run: dict[str, Any]) -> str:
    """``loadtower 0.9, Python 3.11.2, numpy 2.1.3, ...`` (the orchestrator's)."""
    return ", ".join(
        f"{name} {value}" for name, value in _mapping(run.get("versions")).items()
        if isinstance(value, str | int | float)
    )  # fmt: skip
