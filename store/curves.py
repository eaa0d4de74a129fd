"""Latency against throughput: the curve of every ramp and search of a run, and the
rate each target holds at its latency target (study 2's figure and headline).

``latency_curve(store, run)`` is the one read every curve comes from (the CLI's
``compare``, the TUI's compare screen, the report): one point per step, with the
step's phase_summary figures (StoreReader.ramp_steps). ``rates_at_target(store, run)``
is each ramp's or search's answer: a search's rate found (the ``search_result`` row),
or, for a ramp, the rate where p99 crosses the target, interpolated linearly between
the last passing and the first failing step (``source`` says which).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from loadtower.store.reader import StoreReader

CURVE_KEYS = (
    "run_id", "target", "engine", "phase", "kind", "label", "level", "ops_per_s",
    "p50_ms", "p90_ms", "p99_ms", "p999_ms", "passed", "stage",
)  # fmt: skip


def _target_of(phase: dict[str, Any]) -> tuple[str, str]:
    """(target label, engine) of a phase row: its [targets.*] name, else its engine."""
    params = phase.get("params") if isinstance(phase.get("params"), dict) else {}
    engine = str((params or {}).get("engine") or "?")
    return str((params or {}).get("target") or engine), engine


def latency_curve(store: Path | str, run: str) -> list[dict[str, Any]]:
    """One point per step of every ramp and search of `run`, in order: ``run_id``,
    ``target`` (the target's label, or the engine of a single-target run), ``engine``,
    ``phase`` (the ramp's or search's phase label), ``kind``, ``label`` (the step's),
    ``level`` (the rate or users asked), ``ops_per_s`` (achieved), ``p50_ms``,
    ``p90_ms``, ``p99_ms``, ``p999_ms``, ``passed`` and a search step's ``stage``."""
    reader = StoreReader(store)
    phases = {p["name"]: p for p in reader.phases(run)}
    out: list[dict[str, Any]] = []
    for step in reader.ramp_steps(run):
        target, engine = _target_of(phases.get(step["ramp"], {}))
        out.append(
            {
                "run_id": run,
                "target": target,
                "engine": engine,
                "phase": step["ramp"],
                "kind": step["kind"],
                "label": step["label"],
                "level": step["asked"],
                "ops_per_s": step["achieved_ops_per_s"],
                "p50_ms": step["p50_ms"],
                "p90_ms": step["p90_ms"],
                "p99_ms": step["p99_ms"],
                "p999_ms": step["p999_ms"],
                "passed": step["passed"],
                "stage": step["stage"],
            }
        )
    return out


def _interpolated(passing: dict[str, Any], failing: dict[str, Any], target_ms: float) -> float:
    """The achieved ops/s where p99 reaches `target_ms`, linearly between two points."""
    x0, y0 = float(passing["ops_per_s"]), float(passing["p99_ms"])
    x1, y1 = float(failing["ops_per_s"]), float(failing["p99_ms"])
    if y1 <= y0 or x1 <= x0:
        return x0
    return x0 + (x1 - x0) * (target_ms - y0) / (y1 - y0)


def _ramp_answer(points: list[dict[str, Any]], target_ms: float | None) -> dict[str, Any]:
    passing = [p for p in points if p["passed"]]
    failing = next((p for p in points if p["passed"] is False), None)
    best = max(passing, key=lambda p: p["ops_per_s"]) if passing else None
    if best is None:
        return {"rate": None, "source": "ramp: no step passed"}
    if (
        failing is not None
        and target_ms is not None
        and failing["p99_ms"] is not None
        and best["p99_ms"] is not None
        and failing["p99_ms"] > target_ms >= best["p99_ms"]
    ):
        rate = _interpolated(best, failing, target_ms)
        return {
            "rate": round(rate, 1),
            "source": f"ramp: interpolated between {best['label']} and {failing['label']}",
            "bracket": [best["ops_per_s"], failing["ops_per_s"]],
        }
    bound = "" if failing is not None else " (no step failed: at least)"
    return {
        "rate": best["ops_per_s"],
        "source": f"ramp: highest passing step {best['label']}{bound}",
        "bracket": [best["ops_per_s"], failing["ops_per_s"] if failing else None],
    }


def rates_at_target(store: Path | str, run: str) -> list[dict[str, Any]]:
    """The rate each ramp and search of `run` holds at its latency target: ``run_id``,
    ``target``, ``engine``, ``phase``, ``kind``, ``target_text``, ``rate`` (ops/s;
    None when nothing passed), ``achieved_ops_per_s``, ``bracket``, ``confirmed`` (a
    search's) and ``source`` (``search`` or how a ramp's figure was read)."""
    reader = StoreReader(store)
    curve = latency_curve(store, run)
    searches = {r["phase"]: r for r in reader.search_results(run)}
    out: list[dict[str, Any]] = []
    for phase in reader.phases(run):
        if phase["type"] not in ("ramp", "search"):
            continue
        target, engine = _target_of(phase)
        row: dict[str, Any] = {
            "run_id": run, "target": target, "engine": engine, "phase": phase["name"],
            "kind": phase["type"],
        }  # fmt: skip
        if phase["type"] == "search":
            found = searches.get(phase["name"], {})
            row |= {
                "target_text": found.get("target_text"),
                "rate": found.get("found_ops_per_s"),
                "achieved_ops_per_s": found.get("achieved_ops_per_s"),
                "bracket": [found.get("bracket_low"), found.get("bracket_high")],
                "confirmed": found.get("confirmed"),
                "source": "search",
            }
        else:
            params = phase.get("params") if isinstance(phase.get("params"), dict) else {}
            target_ms = (params or {}).get("target_p99_ms")
            points = [p for p in curve if p["phase"] == phase["name"]]
            answer = _ramp_answer(points, target_ms)
            row |= {
                "target_text": f"p99 <= {target_ms:g} ms" if target_ms is not None else None,
                "rate": answer["rate"],
                "achieved_ops_per_s": answer["rate"],
                "bracket": answer.get("bracket", [None, None]),
                "confirmed": None,
                "source": answer["source"],
            }
        out.append(row)
    return out


def curves_of(store: Path, runs: list[str]) -> dict[str, list[dict[str, Any]]]:
    """``curves`` (every step's point) and ``at_target`` (each ramp's or search's rate)
    of the runs; with two runs each row's ``system`` names its run too."""
    curves: list[dict[str, Any]] = []
    at_target: list[dict[str, Any]] = []
    for side, run in zip("AB", runs, strict=False):
        prefix = f"{side} " if len(runs) > 1 else ""
        for point in latency_curve(store, run):
            curves.append({"system": prefix + point["target"], **point})
        for row in rates_at_target(store, run):
            at_target.append({"system": prefix + row["target"], **row})
    return {"curves": curves, "at_target": at_target}
