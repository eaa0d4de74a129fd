"""The report's tables: which fields each shows, under which human header.

Units are in the headers ("Throughput (ops/s)", "p99 (ms)"); the fields are the read
API's (phase_summary, ramp_steps, engine_table, compare_runs), so `loadtower sql` and
`compare --json` readers find them under their stored names.
"""

from __future__ import annotations

Columns = list[tuple[str, str]]  # (field, header)

RESULT_COLUMNS: Columns = [
    ("phase", "Phase"), ("op", "Op"), ("ops", "Ops"), ("duration_s", "Duration (s)"),
    ("ops_per_s", "Throughput (ops/s)"), ("p50_ms", "p50 (ms)"), ("p90_ms", "p90 (ms)"),
    ("p99_ms", "p99 (ms)"), ("max_ms", "Max (ms)"), ("errors", "Errors"),
]  # fmt: skip
# an engine's tombstones scanned per read of the table each phase read (table_reads.py)
TOMBSTONE_COLUMNS: Columns = [
    ("tombstones_table", "Table read"), ("tombstones_p50", "Tombstones/read p50"),
    ("tombstones_p99", "Tombstones/read p99"), ("tombstones_max", "Tombstones/read max"),
]  # fmt: skip
STEP_COLUMNS: Columns = [
    ("ramp", "Ramp"), ("step", "Step"), ("asked", "Asked"), ("unit", "Unit"), ("ops", "Ops"),
    ("duration_s", "Duration (s)"), ("achieved_ops_per_s", "Throughput (ops/s)"),
    ("p50_ms", "p50 (ms)"), ("p90_ms", "p90 (ms)"), ("p99_ms", "p99 (ms)"),
    ("errors", "Errors"), ("passed", "Result"), ("why", "Why"),
]  # fmt: skip
# engine_text.ENGINE_COLUMNS' cells (the text `loadtower compare` prints), in its order
ENGINE_HEADERS = ("Phase", "Op", "Engine", "Ops", "Throughput (ops/s)", "Avg (ms)", "Min (ms)",
                  "Max (ms)", "Median (ms)", "p90 (ms)", "p95 (ms)", "p99 (ms)", "Return codes")
ANSWER_HEADERS = ("Target", "Rate at target (ops/s)", "Latency target",
                  "Bracket (ops/s)", "How it was found")  # fmt: skip
HEADLINE_HEADERS = ("Phase", "Target", "Ops", "Throughput (ops/s)", "p99 (ms)", "Errors")
HOST_HEADERS = ("Host", "Engine", "Server version", "Machine")
# text columns: wrapped at word boundaries (the numbers' never wrap)
TEXT_FIELDS = {"phase", "op", "ramp", "why", "tombstones_table", "unit"}
