"""`load`: insert the dataset (N records at a given concurrency), reporting the insert rate.

Keys are the numbers ``start_key`` .. ``start_key + records - 1`` (``start_key`` 0 by
default): a later load phase with ``start_key = dataset.records`` adds new rows instead
of rewriting the first ones.

Cassandra/Scylla insert one record per op (`insert`). ClickHouse inserts blocks of the
workload's `batch_size` rows per op (`insert_batch`, see agents/clickhouse/ops.py); the
result then also gives `rows_per_op` and `rows_per_s` (exact when there were no errors:
every record is then in; with errors, an upper bound).
"""

from __future__ import annotations

from typing import Any

from loadtower.scenarios.crossref import workload_of
from loadtower.scenarios.models import LoadPhase
from loadtower.scenarios.orchestrator.context import PhaseContext


async def run_phase(ctx: PhaseContext, index: int, phase: LoadPhase) -> dict[str, Any]:
    records = phase.records or ctx.plan.scenario.dataset.records
    start = ctx.clock()
    await ctx.load.start(
        ctx.current_phase,
        ctx.spec(index) | {"start_key": phase.start_key},
        mode="load",
        records=records,
        concurrency=phase.concurrency,
    )
    finished = False
    while not ctx.control.interrupted:
        if await ctx.load.wait_done(timeout=0.5):
            finished = True
            break
    if not finished:
        await ctx.load.stop()
    took = max(ctx.clock() - start, 1e-9)
    window = ctx.stats.window(start - 1, ctx.clock() + 1)
    result: dict[str, Any] = {
        "records": records,
        "start_key": phase.start_key,
        "inserted_ops": window.ops,
        "errors": window.errors,
        "duration_s": round(took, 3),
        "insert_rate": round(window.ops / took, 1),
        "completed": finished,
    }
    rows_note = ""
    if ctx.plan.scenario.engine == "clickhouse":
        sc = ctx.plan.scenario
        per_op = sc.workloads[workload_of(sc, index) or next(iter(sc.workloads))].batch_size
        rows = min(records, (window.ops - window.errors) * per_op)
        result.update(rows_per_op=per_op, rows=rows, rows_per_s=round(rows / took, 1))
        rows_note = f", {rows:,} rows in blocks of {per_op}"
    ctx.event(
        "load",
        f"loaded {window.ops:,} ops in {took:.1f} s ({window.ops / took:,.0f} ops/s, "
        f"{window.errors} errors{rows_note})",
        data=result,
    )
    return result
