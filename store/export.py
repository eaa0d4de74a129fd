"""Exporting one run's rows (tables and views) as Parquet or CSV files."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any, BinaryIO

import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq

from loadtower.errors import LoadtowerError
from loadtower.store import hdr
from loadtower.store.connection import connect
from loadtower.store.output_files import OutputDir

BATCH_ROWS = 65_536
TEXT_BATCH_ROWS = 16  # rows of free text (a log line, an event, a run's texts) per batch
TEXT_TABLES = {"run", "phases", "events", "logs"}
FLUSH_BYTES = 32 << 20
# file name -> query (one parameter: the run id)
# file -> table a store before its schema lacks
SINCE = {"node_stats": "node_stats", "threshold_results": "threshold_results"}
EXPORTS = {
    "run": "SELECT * FROM runs WHERE id = ?",
    "phases": "SELECT * FROM phases WHERE run_id = ? ORDER BY idx",
    "events": "SELECT * FROM events WHERE run_id = ? ORDER BY ts",
    "logs": "SELECT * FROM logs WHERE run_id = ? ORDER BY ts",
    "op_intervals": "SELECT * FROM op_intervals WHERE run_id = ? ORDER BY ts, agent, op",
    "op_seconds": "SELECT * FROM op_seconds WHERE run_id = ? ORDER BY ts, op",
    "op_second_hists": "SELECT * FROM op_second WHERE run_id = ? ORDER BY ts, op",
    "node_seconds": "SELECT * FROM node_seconds WHERE run_id = ? ORDER BY ts, host",
    "node_stats": "SELECT * FROM node_stats WHERE run_id = ? ORDER BY ts, host, name",
    "agent_samples": "SELECT * FROM agent_samples WHERE run_id = ? ORDER BY ts, agent",
    "phase_summary": "SELECT * FROM phase_summary WHERE run_id = ? ORDER BY first_ts, op",
    "threshold_results": "SELECT * FROM threshold_results WHERE run_id = ? ORDER BY ts, target",
}


def export_run(
    store: Path, run_id: str, fmt: str, out: Path, force: bool = False
) -> dict[str, int]:
    """Write one file per table/view into `out`; return the row count of each.

    Every name is checked before anything is written (output_files.OutputDir: an existing
    file only with `force`, never a store, a directory, a device or through a symlink);
    each file is written whole to a temporary file and renamed.

    Each table is read on its own short read-only connection, so a live run's writer is
    held up for one table at a time, not the export. It streams: DuckDB hands over record
    batches of a few rows (TEXT_BATCH_ROWS for the tables of free text, whose rows may be
    megabytes each) and at most FLUSH_BYTES of them are held before they are written, so
    memory stays bounded whatever the store's text decompresses to.
    """
    if fmt not in ("parquet", "csv"):
        raise LoadtowerError(f"unknown export format '{fmt}' (parquet or csv)")
    with connect(store, read_only=True) as con:
        if not con.execute("SELECT 1 FROM runs WHERE id = ?", [run_id]).fetchall():
            raise LoadtowerError(f"no run '{run_id}' in {store} (see 'loadtower runs')")
        tables = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
    # an older store no writer has migrated yet has no such table: no such file
    exports = {name: query for name, query in EXPORTS.items() if SINCE.get(name, "runs") in tables}
    counts = {}
    with OutputDir(out, protect=[store], force=force) as folder:
        for name in exports:
            folder.check(f"{name}.{fmt}")  # all refused before any is written
        for name, query in exports.items():
            rows = [0]
            with connect(store, read_only=True) as con:
                batches = con.sql(query, params=[run_id]).to_arrow_reader(
                    TEXT_BATCH_ROWS if name in TEXT_TABLES else BATCH_ROWS)
                folder.write(f"{name}.{fmt}", partial(_write, batches, fmt, name, rows))
            counts[name] = rows[0]
    return counts


def _write(batches: pa.RecordBatchReader, fmt: str, name: str, rows: list[int],
           handle: BinaryIO) -> None:
    """Write the batches as they come, FLUSH_BYTES at a time (one Parquet row group per
    flush); `rows[0]` counts the rows written."""
    writer: Any = None
    pending: list[pa.RecordBatch] = []
    held = 0

    def flush() -> None:
        nonlocal writer, pending, held
        table = pa.Table.from_batches(pending, schema=batches.schema)
        pending, held = [], 0
        if name == "op_second_hists":
            table = _standard_hists(table)
        if writer is None:
            writer = (pq.ParquetWriter(handle, table.schema) if fmt == "parquet"
                      else pa_csv.CSVWriter(handle, table.schema))
        writer.write_table(table)
        rows[0] += table.num_rows

    for batch in batches:
        pending.append(batch)
        held += batch.nbytes
        if held >= FLUSH_BYTES:
            flush()
    if pending or writer is None:
        flush()  # the rest, or an empty file with the columns
    writer.close()


def _standard_hists(table: pa.Table) -> pa.Table:
    """The histogram BLOBs (service, response and, from schema 6, lateness) as hdrh's base64
    text, which any HdrHistogram library decodes, and which a CSV can hold."""
    for column in ("service_hist", "response_hist", "lateness_hist"):
        at = table.schema.get_field_index(column)
        if at < 0:  # a store before schema 6 has no lateness_hist
            continue
        text = [None if b is None else hdr.standard(b) for b in table.column(at).to_pylist()]
        table = table.set_column(at, column, pa.array(text, pa.string()))
    return table
