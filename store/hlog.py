"""HdrHistogram interval logs (`.hlog`) of one run: two files per phase and op.

The format is HdrHistogram's own (HistogramLogWriter, log format 1.3), which latte's
`hdr`, NoSQLBench, YCSB's `hdrhistogram` exporter and other load tools write and
HdrHistogram's `HistogramLogProcessor` (Java) and the `hdrhistogram` Python package
(hdrh's HistogramLogReader) read: a header (`#[Histogram log format version 1.3]`, `#[StartTime: ...]`,
`#[BaseTime: ...]`), a column legend, then one line per second,
``start,length,max,histogram``: the interval's start in seconds after the start time,
its length (1.000 s), its largest value in milliseconds and the second's merged
histogram (every agent's) in hdrh's compressed V2 encoding, base64.

The values are microseconds (the store's unit): HistogramLogProcessor gives
milliseconds with `-outputValueUnitRatio 1000`. `PHASE.OP.hlog` holds the response
time (from each op's intended start, what phase_summary reports), `PHASE.OP.service.hlog`
the service time (from the send); two files rather than one with `Tag=` lines, because
hdrh's reader does not know tags and would add both. Merging a file's lines gives the
phase's histogram, so its percentiles are phase_summary's to HDR's precision (3
significant digits).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import BinaryIO

from loadtower.errors import LoadtowerError
from loadtower.store import hdr
from loadtower.store.connection import connect
from loadtower.store.output_files import OutputDir

FORMAT_VERSION = "1.3"
LEGEND = '"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"'
MAX_RATIO = 1000.0  # us -> ms for Interval_Max, as HistogramLogWriter's maxValueUnitRatio
_UNSAFE = re.compile(r"[^A-Za-z0-9_.@#-]+")
QUERY = """SELECT ts, service_hist, response_hist, max_ms FROM op_second
    WHERE run_id = ? AND phase = ? AND op = ? AND ops > 0 ORDER BY ts"""


KINDS = {"response": "", "service": ".service"}  # kind -> file name infix


def file_name(phase: str, op: str, kind: str = "response") -> str:
    """`PHASE.OP.hlog` (`PHASE.OP.service.hlog`), every character outside
    [A-Za-z0-9_.@#-] as `_` (a phase or op name never makes a path)."""
    return f"{_UNSAFE.sub('_', phase)}.{_UNSAFE.sub('_', op)}{KINDS[kind]}.hlog"


def _header(start: float) -> str:
    when = datetime.fromtimestamp(start, UTC).strftime("%a %b %d %H:%M:%S UTC %Y")
    return (
        f"#[Histogram log format version {FORMAT_VERSION}]\n"
        f"#[StartTime: {start:.3f} (seconds since epoch), {when}]\n"
        f"#[BaseTime: {start:.3f} (seconds since epoch)]\n"
        f"{LEGEND}\n"
    )


Row = tuple[int, bytes | None, bytes | None, float | None]  # ts, service, response, max_ms


def lines(rows: list[Row], start: float, kind: str) -> Iterator[str]:
    """One line per stored second with a histogram of that kind."""
    for ts, service, response, max_ms in rows:
        blob = response if kind == "response" else service
        if blob is None:
            continue
        text = hdr.standard(blob)
        top = max_ms if kind == "response" and max_ms is not None else _max_ms(text)
        yield f"{ts - start:.3f},1.000,{top:.3f},{text}\n"


def _max_ms(text: str) -> float:
    return float(hdr.decode(text).get_max_value()) / MAX_RATIO


def _write(rows: list[Row], start: float, kind: str, handle: BinaryIO) -> None:
    handle.write(_header(start).encode("ascii"))
    for line in lines(rows, start, kind):
        handle.write(line.encode("ascii"))


def export_hlogs(store: Path, run_id: str, out: Path, force: bool = False) -> dict[str, int]:
    """Write one interval log per phase and op of the run into `out` (every name checked
    before anything is written, as export_run); return each file's line count."""
    with connect(store, read_only=True) as con:
        run = con.execute("SELECT started FROM runs WHERE id = ?", [run_id]).fetchall()
        if not run:
            raise LoadtowerError(f"no run '{run_id}' in {store} (see 'loadtower runs')")
        pairs = con.execute(
            "SELECT phase, op, min(ts) FROM op_second WHERE run_id = ? AND ops > 0 "
            "GROUP BY phase, op ORDER BY min(ts), phase, op",
            [run_id],
        ).fetchall()
    first = min((float(p[2]) for p in pairs), default=0.0)
    # whole seconds (the rows' ts), never after the first row: no negative interval start
    start = min(math.floor(run[0][0]), first) if run[0][0] is not None else first
    names: dict[str, tuple[str, str, str]] = {}
    for phase, op, _first in pairs:
        for kind in KINDS:
            name = file_name(phase, op, kind)
            if name in names:  # names that differ only in unsafe characters
                raise LoadtowerError(
                    f"{names[name][:2]} and {(phase, op)} would both be written to {name}"
                )
            names[name] = (phase, op, kind)
    counts: dict[str, int] = {}
    with OutputDir(out, protect=[store], force=force) as folder:
        for name in names:
            folder.check(name)
        for phase, op, _first in pairs:
            with connect(store, read_only=True) as con:
                rows = con.execute(QUERY, [run_id, phase, op]).fetchall()
            for kind in KINDS:
                name = file_name(phase, op, kind)
                folder.write(name, partial(_write, rows, start, kind))
                counts[name] = sum(1 for r in rows if r[2 if kind == "response" else 1] is not None)
    return counts

