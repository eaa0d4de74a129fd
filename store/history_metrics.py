"""The figures a run history (and a scenario's thresholds) can follow, and which way is worse.

Plain data, no imports: `loadtower history --help` reads it without loading DuckDB.
"""

from __future__ import annotations

# metric name -> (the figure's key in phase_summary / phase_totals, unit)
METRICS: dict[str, tuple[str, str]] = {
    "p50": ("p50_ms", "ms"),
    "p90": ("p90_ms", "ms"),
    "p99": ("p99_ms", "ms"),
    "p999": ("p999_ms", "ms"),
    "max": ("max_ms", "ms"),
    "ops_per_s": ("ops_per_s", "ops/s"),
    "errors": ("errors", "errors"),
    "error_rate": ("error_rate", ""),  # errors / ops, a fraction
}
HIGHER_IS_BETTER = frozenset({"ops_per_s"})  # for the others (latency, errors) up is worse


def direction(metric: str, change_pct: float) -> str:
    """'regression' or 'improvement': p99 up is worse, ops/s down is worse."""
    worse = change_pct < 0 if metric in HIGHER_IS_BETTER else change_pct > 0
    return "regression" if worse else "improvement"
