"""Tombstones scanned per read, per phase and table: the one place that turns an
engine's ``node_stats`` rows named ``tombstones_per_read/KS.TABLE/NAME`` (written by
its ``node_stats`` hook, which says where the figures come from: ``reads``, a table's
read count since the node started, and ``p50``, ``p99``, ``max`` tombstones per read)
into the figures shown beside each phase's p99: the result table of ``loadtower run``,
the HTML report, ``loadtower compare`` and the TUI's compare screen all read them through
``StoreReader.phase_summary``.

A table was read in a phase when its read count (summed over the nodes) moved between
the last reading at or before the phase's start (else the table's first reading: the
count covers reads since the node started) and the last reading by its end (plus
``GRACE_S``, but never past the next phase's start: the sampler reads once a second).
Its figures are the highest node's
``p50``, ``p99`` and ``max`` tombstones per read at that last reading: the node keeps
them in a decaying histogram (the last minute's reads weigh most), so they describe the
phase's reads, with older reads of the same table weighing less. Percentiles of several
nodes cannot be merged; the highest node's is the conservative figure. A phase that read
several tables gets the figures of the one it read most.

The figures are the node's own histogram's: 1.0 means "0 or 1 tombstones per read" (its
first bucket holds both; the result table prints it as ``<=1``); 2.0 and more are its
bucket bounds (the hook's docstring says how they grow).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

PREFIX = "tombstones_per_read/"
GRACE_S = 1.5
COLUMNS = ("tombstones_table", "table_reads", "tombstones_p50", "tombstones_p99",
           "tombstones_max")


def _split(name: str) -> tuple[str, str] | None:
    """``tombstones_per_read/KS.TABLE/NAME`` -> (KS.TABLE, NAME)."""
    if not name.startswith(PREFIX):
        return None
    table, _, figure = name[len(PREFIX):].rpartition("/")
    return (table, figure) if table and figure else None


def _last(series: list[tuple[float, float]], until: float) -> float | None:
    """The value of the last reading at or before `until` (series sorted by time)."""
    found = None
    for ts, value in series:
        if ts > until:
            break
        found = value
    return found


def phase_tables(phases: list[dict[str, Any]], stats: list[dict[str, Any]]
                 ) -> dict[str, list[dict[str, Any]]]:
    """Per phase name: one entry per table read in it (most reads first), each with
    ``COLUMNS``. `phases`: rows with name, started, ended; `stats`: node_stats rows
    (ts, host, name, value)."""
    series: dict[tuple[str, str, str], list[tuple[float, float]]] = defaultdict(list)
    for row in stats:
        split = _split(str(row["name"]))
        if split is not None and row["value"] is not None:
            series[(split[0], str(row["host"]), split[1])].append(
                (float(row["ts"]), float(row["value"])))
    for points in series.values():
        points.sort()
    tables = sorted({(table, host) for table, host, figure in series if figure == "reads"})
    out: dict[str, list[dict[str, Any]]] = {}
    starts = sorted(float(p["started"]) for p in phases if p.get("started") is not None)
    for phase in phases:
        if phase.get("started") is None:
            continue
        start = float(phase["started"])
        end = float(phase["ended"] if phase.get("ended") is not None else start) + GRACE_S
        end = min([end, *(t for t in starts if t > start)])  # never into the next phase
        found: dict[str, dict[str, Any]] = {}
        for table, host in tables:
            reads = series[(table, host, "reads")]
            after, before = _last(reads, end), _last(reads, start)
            if before is None:  # first seen in this phase: its count may be older reads'
                before = reads[0][1]
            moved = (after or 0.0) - before
            if after is None or moved <= 0:
                continue
            entry = found.setdefault(table, {"tombstones_table": table, "table_reads": 0})
            entry["table_reads"] += int(moved)
            for figure in ("p50", "p99", "max"):
                value = _last(series.get((table, host, figure), []), end)
                key = f"tombstones_{figure}"
                if value is not None and (entry.get(key) is None or value > entry[key]):
                    entry[key] = value
        if found:
            out[str(phase["name"])] = sorted(
                ({c: e.get(c) for c in COLUMNS} for e in found.values()),
                key=lambda e: (-e["table_reads"], e["tombstones_table"]))
    return out


def with_tombstones(summary: list[dict[str, Any]],
                    per_phase: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """`summary`'s rows (phase_summary) with the ``COLUMNS`` of the table their phase read
    most (None where the phase read no table the sampler saw)."""
    for row in summary:
        tables = per_phase.get(str(row["phase"])) or [{}]
        row.update({c: tables[0].get(c) for c in COLUMNS})
    return summary
