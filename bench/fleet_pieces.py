"""CPU per interval line of the orchestrator's consumers, piece by piece (issue 28).

bench/fleet.py measures the whole orchestrator side in real time; this feeds the same
lines (bench/fleet_workers.py's real HDR payloads: --op-types op types x --ops ops, about
21 KB of JSON each) through the same consumers with no clock and no master, and says
what each piece costs per line in CPU time (time.process_time, so the writer's helper
threads count in its flush):

- json: `json.loads` of the line's text, as LocustLoad's reader parses it;
- live: `LiveStats.add` (and, at the end, reading every cell: what the live view decodes);
- lateness: the self-saturation check (`Sinks._warn_lateness`);
- dispatch: the rest of `LocustLoad._dispatch` / `Sinks.interval`;
- flush: `StoreWriter.flush`, once per simulated second, into a real DuckDB file.

The first --warm simulated seconds are left out (the compiled loops' first calls). Run it
against another tree with PYTHONPATH=that/tree to compare.

usage: python bench/fleet_pieces.py [--workers 512] [--seconds 12] [--warm 2]
                                    [--op-types 8] [--ops 500]
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import fleet_memory  # noqa: E402 - bench/fleet_memory.py: the consumers and the lines' text
import fleet_workers  # noqa: E402 - bench/fleet_workers.py: the synthetic lines' payloads


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=512, help="lines per simulated second")
    parser.add_argument("--seconds", type=int, default=12, help="simulated seconds")
    parser.add_argument("--warm", type=int, default=2, help="first seconds left out")
    parser.add_argument("--op-types", type=int, default=8)
    parser.add_argument("--ops", type=int, default=500)
    args = parser.parse_args()

    templates = [json.dumps(t, separators=(",", ":"))
                 for t in fleet_workers.op_templates(args.op_types, args.ops)]
    spent = dict.fromkeys(("json", "live", "lateness", "dispatch", "flush"), 0.0)
    clock = time.process_time
    with tempfile.TemporaryDirectory(prefix="fleet-pieces-") as tmp_name:
        # flushed here, once per simulated second
        writer, run_id, sinks, load = fleet_memory.consumers(Path(tmp_name), "fleet-pieces")
        counting = [False]
        add, warn = sinks.stats.add, sinks._warn_lateness

        def timed(piece: str, call: Any) -> Any:
            def wrapper(*a: Any) -> Any:
                start = clock()
                try:
                    return call(*a)
                finally:
                    if counting[0]:
                        spent[piece] += clock() - start
            return wrapper

        sinks.stats.add = timed("live", add)  # type: ignore[method-assign]
        sinks._warn_lateness = timed("lateness", warn)  # type: ignore[method-assign]
        # an older tree's dispatch takes the line alone (no ASCII flag)
        takes_flag = len(inspect.signature(load._dispatch).parameters) > 1
        start_ts = int(time.time()) - args.seconds - 60
        lines = 0
        for second in range(args.seconds):
            counting[0] = second >= args.warm
            ts = start_ts + second
            for w in range(args.workers):
                text = fleet_memory.line_text(
                    w, ts, templates[(second + w) % len(templates)], second + 1).encode()
                t0 = clock()
                line = json.loads(text)
                t1 = clock()
                if takes_flag:  # as LocustLoad's reader hands a line
                    load._dispatch(line, text.isascii() and b"\\u" not in text)
                else:
                    load._dispatch(line)
                t2 = clock()
                if counting[0]:
                    spent["json"] += t1 - t0
                    spent["dispatch"] += t2 - t1
                    lines += 1
            t0 = clock()
            writer.flush()
            if counting[0]:
                spent["flush"] += clock() - t0
        spent["dispatch"] -= spent["live"] + spent["lateness"]  # timed inside it
        t0 = clock()
        sinks.stats.window(start_ts, start_ts + args.seconds + 1)  # every cell read
        spent["live"] += clock() - t0
        writer.end_run(run_id, "completed", None)
        writer.close()
    total = sum(spent.values())
    print(f"fleet_pieces: {lines} lines ({args.workers} a second, {args.op_types} op types x "
          f"{args.ops} ops), CPU per line:")
    for piece, seconds in spent.items():
        print(f"  {piece:9s} {1000 * seconds / lines:.3f} ms")
    print(f"  {'total':9s} {1000 * total / lines:.3f} ms  "
          f"(= {100 * total / lines * args.workers:.0f}% of a core at {args.workers} lines a second)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
