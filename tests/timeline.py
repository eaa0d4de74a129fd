"""Where a parallel run's time went: each xdist worker appends one JSON line per test
(its group, whether it ran `alone`, when it asked for its turn, got it and ended) to
`timeline-<worker>.jsonl` in the folder the workers share (tests/conftest.py's lock
folder); at the end the controller reads them and prints, after the slowest tests:

- the span of the run, and how long each worker held a turn or waited for one;
- the `alone` turns' sum (time no other test could run) and the other workers' wait;
- the groups (files) that held the machine longest, `alone` or shared.

`LOADTOWER_TIMELINE=FILE` also copies every line into FILE (docs/testing.md)."""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

PREFIX = "timeline-"


def record(folder: Path, entry: dict[str, Any]) -> None:
    """One test's line, appended to this worker's file (O_APPEND: whole lines). A line
    that cannot be written is left out: the timeline never fails a test."""
    path = folder / f"{PREFIX}{entry['worker']}.jsonl"
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        try:
            os.write(fd, (json.dumps(entry) + "\n").encode())
        finally:
            os.close(fd)


def entry(nodeid: str, group: str, alone: bool, asked: float, got: float) -> dict[str, Any]:
    return {"test": nodeid, "group": group, "alone": alone, "asked": asked, "got": got,
            "ended": time.time(), "worker": os.environ.get("PYTEST_XDIST_WORKER", "main")}


def texts(folder: Path) -> list[str]:
    """Each worker's file, as written."""
    return [path.read_text() for path in sorted(folder.glob(f"{PREFIX}*.jsonl"))]


def read(folder: Path, written: list[str] | None = None) -> list[dict[str, Any]]:
    """Every whole line of `folder`'s files (or of their `written` texts)."""
    rows: list[dict[str, Any]] = []
    for text in texts(folder) if written is None else written:
        for line in text.splitlines():
            try:
                rows.append(json.loads(line))
            except ValueError:
                continue  # a line cut by a killed worker: left out
    return rows


def summary(rows: list[dict[str, Any]], top: int = 15) -> list[str]:
    """The lines printed at the end of a parallel run (empty: nothing recorded)."""
    if not rows:
        return []
    start = min(r["asked"] for r in rows)
    span = max(r["ended"] for r in rows) - start
    held: dict[str, float] = defaultdict(float)
    waited: dict[str, float] = defaultdict(float)
    groups: dict[tuple[str, bool], float] = defaultdict(float)
    alone_s = 0.0
    for r in rows:
        turn = r["ended"] - r["got"]
        held[r["worker"]] += turn
        waited[r["worker"]] += r["got"] - r["asked"]
        groups[(r["group"], r["alone"])] += turn
        alone_s += turn if r["alone"] else 0.0
    lines = [f"timeline: {len(rows)} tests over {span:.0f} s; alone turns {alone_s:.0f} s "
             f"({sum(r['alone'] for r in rows)} tests: nothing else ran meanwhile)"]
    for worker in sorted(held):
        lines.append(f"  {worker}: in tests {held[worker]:.0f} s, waiting for a turn "
                     f"{waited[worker]:.0f} s, idle {span - held[worker] - waited[worker]:.0f} s")
    lines.append(f"  the {top} groups that held turns longest (s, alone or shared):")
    ranked = sorted(groups.items(), key=lambda kv: -kv[1])[:top]
    lines.extend(f"    {seconds:7.0f}  {'alone ' if alone else 'shared'}  {group}"
                 for (group, alone), seconds in ranked)
    return lines


def finish(folder: Path) -> list[str]:
    """The summary of `folder`'s lines, which are copied to $LOADTOWER_TIMELINE first."""
    copy = os.environ.get("LOADTOWER_TIMELINE")
    written = texts(folder)
    if copy and written:
        Path(copy).write_text("".join(written))
    return summary(read(folder, written))
