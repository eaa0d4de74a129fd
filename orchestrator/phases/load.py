"""`load`: insert the dataset (N records at a given concurrency), reporting the insert rate.

Keys are the numbers ``start_key`` .. ``start_key + records - 1`` (``start_key`` 0 by
default): a later load phase with ``start_key = dataset.records`` adds new rows instead
of rewriting the first ones.

Most engines insert one record per op (`insert`); a workload file's load op its own
rows per op (docs/workloads.md). The engines whose kind has ``block_load``
(protocol/engine_kinds.py) insert blocks of the workload's `batch_size` rows per op (a built-in's load runs its shipped file's
`insert_batch`: scenarios/workloads/builtin_files.py ``builtin_load_op``); the result then also gives `rows_per_op` and `rows_per_s` (exact
when there were no errors: every record is then in; with errors, an upper bound). An
engine's ``after_load`` hook adds its own figures (e.g. a collection's `documents`).
"""

from __future__ import annotations

from typing import Any

from loadtower.agents.workload.file_ops import load_rows
from loadtower.orchestrator.context import PhaseContext
from loadtower.protocol.engine_kinds import kind
from loadtower.scenarios.crossref import workload_of
from loadtower.scenarios.engine_hooks import hook
from loadtower.scenarios.models import LoadPhase
from loadtower.scenarios.workloads.dataset_files import dataset_load_rows
from loadtower.store.phase_rate import ops_per_s


async def run_phase(ctx: PhaseContext, index: int, phase: LoadPhase) -> dict[str, Any]:
    checked = ctx.plan.workloads.get(workload_of(ctx.plan.scenario, index) or "")
    loads_data = dataset_load_rows(checked) if checked is not None else None  # a data set's rows
    records = loads_data or phase.records or ctx.plan.scenario.dataset.records
    start = ctx.clock()
    spec = ctx.spec(index)
    await ctx.load.start(
        ctx.current_phase,
        spec | {"start_key": phase.start_key},
        mode="load",
        records=records,
        concurrency=phase.concurrency,
    )
    finished = False
    while not ctx.control.interrupted:
        if await ctx.load.wait_done(timeout=0.5):  # phase_done: every line of it is in
            finished = True
            break
    if not finished:
        await ctx.load.stop()
    figures = ctx.figures(start)
    took = max(ctx.clock() - start, 1e-9)  # with the agents' set-up (connect, prepare)
    measured = figures.duration_s or took
    result: dict[str, Any] = {
        "records": records,
        "start_key": phase.start_key,
        "inserted_ops": figures.ops,
        "errors": figures.errors,
        "duration_s": round(measured, 3),  # the ops' measured span (phase_rate.py)
        "setup_s": round(max(took - measured, 0.0), 3),  # the rest of the phase's clock
        "insert_rate": figures.ops_per_s,
        "p99_ms": figures.p99_ms,
        "completed": finished,
    }
    rows_note = ""
    engine = ctx.plan.scenario.engine
    sc = ctx.plan.scenario
    batch_size = sc.workloads[workload_of(sc, index) or next(iter(sc.workloads))].batch_size
    workload_file = spec.get("workload_file")
    if workload_file is not None:  # its load op's rows per op, as the agents insert them
        load_op = workload_file["run"].get(workload_file.get("load") or "")
        per_op = load_rows(load_op, batch_size) if load_op else 1
    else:
        per_op = batch_size if kind(engine).block_load else 1
    if per_op > 1:
        rows = min(records, (figures.ops - figures.errors) * per_op)
        result.update(rows_per_op=per_op, rows=rows, rows_per_s=ops_per_s(rows, measured))
        rows_note = f", {rows:,} rows in blocks of {per_op}"
    after_load = hook(engine, "after_load")
    if after_load is not None:  # e.g. a collection's document count
        try:
            result.update(await after_load(ctx, index))
        except Exception as exc:  # noqa: BLE001 - a count we cannot read is said, not fatal
            ctx.event("warning", f"after the load: {type(exc).__name__}: {exc}")
    if "documents" in result:
        rows_note += f"; {result['documents']:,} documents in {result.get('collection')}"
    ctx.event(
        "load",
        f"loaded {figures.ops:,} ops in {measured:.1f} s ({figures.ops_per_s:,.1f} ops/s, "
        f"{figures.errors} errors{rows_note}; {result['setup_s']:.1f} s of set-up before)",
        data=result,
    )
    return result
