"""SQL functions over the stored HDR histograms, for users' own queries.

Registered on every read-only connection (connection.py), so `loadtower sql`, the TUI's
SQL console and StoreReader all have them:

    hdr_percentile(hists BLOB[], pct DOUBLE) -> DOUBLE        -- ms
    hdr_percentiles(hists BLOB[], pcts DOUBLE[]) -> DOUBLE[]  -- ms, one per pct

`hists` is a list of the store's histogram BLOBs (`service_hist` / `response_hist` of
op_second, op_minute or op_phase), usually `list(response_hist)` over a GROUP BY: they
are merged (counts added) and the percentile is taken of the merged counts, so it is
exact over any window (within HDR's 3 significant digits), never an average of
percentiles. NULL entries are skipped; no counts at all gives NULL. pct 100 is the max.
The decoding and merging are the writer's own (hdr.py).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import duckdb
import pyarrow as pa

from loadtower.store import hdr

try:  # DuckDB >= 1.4
    from duckdb import sqltypes as _types
except ImportError:  # pragma: no cover - older DuckDB
    from duckdb import typing as _types  # type: ignore[no-redef,attr-defined]  # moved in 1.4

PERCENTILE = "hdr_percentile"
PERCENTILES = "hdr_percentiles"
ROWS_PER_BATCH = 64  # rows merged at once: a dense row is ~140 KB of counts


def _check(pct: float | None, name: str) -> float:
    if pct is None or not math.isfinite(pct) or not 0 <= pct <= 100:
        raise ValueError(f"{name}: a percentile must be between 0 and 100, not {pct}")
    return float(pct)


def _merged(
    groups: list[list[bytes | None] | None], pcts: list[list[float]], name: str
) -> list[list[float | None] | None]:
    """Per row: the percentiles `pcts[row]` of the merged histograms `groups[row]`."""
    out: list[list[float | None] | None] = []
    for start in range(0, len(groups), ROWS_PER_BATCH):
        chunk = groups[start : start + ROWS_PER_BATCH]
        wanted = pcts[start : start + ROWS_PER_BATCH]
        every = sorted({p for row in wanted for p in row})
        try:
            values = hdr.merged_percentiles(chunk, every)
        except ValueError as exc:
            raise ValueError(f"{name}: a value is not a loadtower histogram BLOB ({exc})") from None
        column = {p: j for j, p in enumerate(every)}
        for r, (group, row) in enumerate(zip(chunk, wanted, strict=True)):
            if group is None:
                out.append(None)
                continue
            out.append([None if math.isnan(v) else float(v)
                        for v in (values[r, column[p]] for p in row)])  # fmt: skip
    return out


def hdr_percentile(hists: pa.ChunkedArray, pct: pa.ChunkedArray) -> pa.Array:
    """NULL hists or pct: NULL."""
    groups, wanted = hists.to_pylist(), []
    for r, p in enumerate(pct.to_pylist()):
        if p is None:
            groups[r] = None
        wanted.append([_check(p, PERCENTILE)] if groups[r] is not None else [])
    rows = _merged(groups, wanted, PERCENTILE)
    return pa.array([None if r is None else r[0] for r in rows], pa.float64())


def hdr_percentiles(hists: pa.ChunkedArray, pcts: pa.ChunkedArray) -> pa.Array:
    """NULL hists or pcts: NULL; a NULL in pcts is an error."""
    groups, wanted = hists.to_pylist(), []
    for r, row in enumerate(pcts.to_pylist()):
        if row is None:
            groups[r] = None
        wanted.append([_check(p, PERCENTILES) for p in row] if groups[r] is not None else [])
    return pa.array(_merged(groups, wanted, PERCENTILES), pa.list_(pa.float64()))


def register(con: duckdb.DuckDBPyConnection) -> None:
    """Add the functions to `con`. Connections of one process to one file share them, so a
    function another open connection already added is left as it is."""
    blobs = duckdb.list_type(_types.BLOB)
    doubles = duckdb.list_type(_types.DOUBLE)
    specs: Sequence[tuple[Any, ...]] = (
        (PERCENTILE, hdr_percentile, [blobs, _types.DOUBLE], _types.DOUBLE),
        (PERCENTILES, hdr_percentiles, [blobs, doubles], doubles),
    )
    for name, func, params, result in specs:
        try:
            # special: NULL inputs reach the function, which may return NULL (no counts)
            # the stubs take only duckdb.func's enums (DuckDB >= 1.4); every version takes
            # these names
            con.create_function(  # type: ignore[call-overload]
                name, func, params, result, type="arrow", null_handling="special")
        except duckdb.CatalogException as exc:
            if "already exists" not in str(exc):
                raise
