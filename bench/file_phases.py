"""A workload file's load phase and closed-model run phase on the Rust core against the
Python lanes, in one run.

The file is bench/custom_workload.py's: a text-keyed table of 10 x 100-byte text columns,
its `insert` (the load op; `--batch N` makes it N rows per op, an UNLOGGED BATCH) and a
`read` that must find its row (zipfian), 50/50 in the run. Per path (`native_io = "rust"`:
the core's binder and scylla-rust-driver; `"python"`: the reference binder over the
session driver), one `loadtower agent run` each, one worker process, each path into its
own fresh keyspace, alternately:

- the load (`--load --duration 0`, --concurrency lanes): rows/s (the load's rows over the
  span of its first op's start to its last op's end) and CPU-microseconds per row (the
  worker over the load phase);
- a closed-model run phase (`--users`, no think time, --seconds): ops/s and CPU-
  microseconds per op.

--rounds runs of each path, alternately (the path that goes first changes each round: the
sandbox's JVM warms up over the first runs); per path and phase the fastest run is shown.

Printed: each figure, the path each `cql_path` event names, errors, and the ratios
core/python. The machine is shared and noisy: compare the ratios of one run.

usage: python bench/file_phases.py [--sandbox DIR] [--records 50000] [--concurrency 64]
                                   [--batch 1] [--users 16] [--seconds 10] [--rounds 2]
                                   [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from custom_workload import WORKLOAD_FILE  # noqa: E402 - bench/custom_workload.py, a sibling

KEYSPACES = {"rust": "lt_bench_file_core", "python": "lt_bench_file_python"}


def workload_file(batch: int) -> str:
    if batch <= 1:
        return WORKLOAD_FILE
    return WORKLOAD_FILE.replace('[ops.insert]\n', f'[ops.insert]\nbatch = {batch}\n')


def scenario(io: str, records: int) -> str:
    return f"""
name = "bench-file-phases"

[target]
keyspace = "{KEYSPACES[io]}"
native_io = "{io}"

[dataset]
records = {records}

[workloads.w]
file = "custom.toml"

[[phases]]
type = "load"
"""


def drop(info: dict, keyspace: str) -> None:
    from cassandra.auth import PlainTextAuthProvider
    from cassandra.cluster import Cluster

    cass = info["cassandra"]
    cluster = Cluster(cass["contact_points"], port=cass["port"], connect_timeout=10,
                      auth_provider=PlainTextAuthProvider(cass["username"], cass["password"]))
    try:
        cluster.connect().execute(f"DROP KEYSPACE IF EXISTS {keyspace}", timeout=120)
    finally:
        cluster.shutdown()


def agent(info: dict, path: Path, *extra: str) -> list[dict]:
    cass = info["cassandra"]
    argv = [
        sys.executable, "-m", "loadtower", "agent", "run",
        "--contact-points", ",".join(cass["contact_points"]), "--port", str(cass["port"]),
        "--username", cass["username"], "--password-env", "LT_BENCH_PW",
        "--workload", str(path), "--json", *extra,
    ]
    env = {**os.environ, "LT_BENCH_PW": cass["password"]}
    out = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=1800, check=False)
    lines = [json.loads(x) for x in out.stdout.splitlines() if x.startswith("{")]
    if not lines or "summary" not in lines[-1]:
        raise SystemExit(f"`loadtower agent run` ({path.name}) printed no summary: "
                         f"{out.stderr[-1500:]}")
    return lines


def phase_figures(lines: list[dict], phase: str, rows_per_op: int) -> dict[str, Any]:
    """rows (ops x rows per op), errors, rows/s over the phase's span, CPU us per row and
    what its cql_path event says."""
    intervals = [x for x in lines if x.get("type") == "interval" and x.get("phase") == phase]
    ops = sum(s["ops"] for x in intervals for s in x["ops"].values())
    errors = sum(sum(s["errors"].values()) for x in intervals for s in x["ops"].values())
    cpu_s = sum(float(x.get("cpu_s", 0.0)) for x in intervals)
    spans = [x["span"] for x in intervals if x.get("span")]
    elapsed = max(s[1] for s in spans) - min(s[0] for s in spans) if spans else 0.0
    rows = ops * rows_per_op
    said = [x["message"] for x in lines if x.get("kind") == "cql_path" and x.get("phase") == phase]
    return {"rows": rows, "errors": errors, "elapsed_s": round(elapsed, 3),
            "rows_s": round(rows / elapsed, 1) if elapsed > 0 else None,
            "cpu_us_per_row": round(1e6 * cpu_s / max(rows, 1), 1),
            "path": "; ".join(dict.fromkeys(said)) or "(no cql_path event)"}


def fastest_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Per phase, the run with the most rows/s (the least disturbed by the warm-up and
    the other work on a shared machine)."""
    return {phase: max((r[phase] for r in runs), key=lambda f: f["rows_s"] or 0.0)
            for phase in ("load", "closed")}


def measure(info: dict, records: int, concurrency: int, batch: int, users: int,
            seconds: float, rounds: int) -> dict[str, Any]:
    result: dict[str, Any] = {"records": records, "batch": batch, "users": users,
                              "seconds": seconds, "rounds": rounds}
    runs: dict[str, list[dict[str, Any]]] = {io: [] for io in KEYSPACES}
    with tempfile.TemporaryDirectory(prefix="lt-bench-file-") as tmp:
        d = Path(tmp)
        (d / "custom.toml").write_text(workload_file(batch))
        for n in range(rounds):  # alternately, each path first in every other round
            for io in (list(KEYSPACES) if n % 2 == 0 else list(reversed(KEYSPACES))):
                path = d / f"{io}.toml"
                path.write_text(scenario(io, records))
                drop(info, KEYSPACES[io])
                try:
                    lines = agent(info, path, "--records", str(records), "--load",
                                  "--load-concurrency", str(concurrency), "--users", str(users),
                                  "--duration", str(seconds))
                finally:
                    drop(info, KEYSPACES[io])
                runs[io].append({"load": phase_figures(lines, "load", batch),
                                 "closed": phase_figures(lines, "run", 1)})
    for io in KEYSPACES:
        result[io] = fastest_run(runs[io])
    result["runs"] = runs
    for phase, figure in (("load", "rows_s"), ("load", "cpu_us_per_row"),
                          ("closed", "rows_s"), ("closed", "cpu_us_per_row")):
        core, python = result["rust"][phase][figure], result["python"][phase][figure]
        result[f"ratio_{phase}_{figure}"] = round(core / python, 2) if core and python else None
    return result


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--sandbox", default=os.environ.get("LOADTOWER_SANDBOX", ".sandbox"))
    p.add_argument("--records", type=int, default=50_000)
    p.add_argument("--concurrency", type=int, default=64, help="load lanes (Locust users)")
    p.add_argument("--batch", type=int, default=1, help="rows per load op (UNLOGGED BATCH)")
    p.add_argument("--users", type=int, default=16, help="closed-model users of the run")
    p.add_argument("--seconds", type=float, default=10.0, help="the closed-model run")
    p.add_argument("--rounds", type=int, default=2, help="runs of each path (the fastest shown)")
    p.add_argument("--json", action="store_true")
    a = p.parse_args()
    from loadtower.sandbox import Sandbox

    info = Sandbox(a.sandbox).info()
    if not info.get("up"):
        sys.exit(f"the sandbox in {a.sandbox} is not up: loadtower sandbox up --dir {a.sandbox}")
    r = measure(info, a.records, a.concurrency, max(1, a.batch), a.users, a.seconds,
                max(1, a.rounds))
    if a.json:
        print(json.dumps(r))
        return
    print(f"workload file: insert of 10 x 100-byte text columns ({r['batch']} row(s) per load op),"
          f" then read/insert 50/50 closed model, {r['users']} users; the fastest of "
          f"{r['rounds']} runs each, alternately")
    for io, label in (("rust", "Rust core"), ("python", "Python lanes")):
        for phase, unit in (("load", "rows"), ("closed", "ops")):
            f = r[io][phase]
            print(f"  {label:13} {phase:6} {f['rows']:>8,} {unit}  {f['errors']} errors  "
                  f"{f['rows_s'] or 0:>9,.0f} {unit}/s  {f['cpu_us_per_row']:>6.1f} CPU us/"
                  f"{unit[:-1]}   [{f['path']}]")
    print(f"core/python: load rows/s x{r['ratio_load_rows_s']}, CPU per row "
          f"x{r['ratio_load_cpu_us_per_row']}; closed ops/s x{r['ratio_closed_rows_s']}, "
          f"CPU per op x{r['ratio_closed_cpu_us_per_row']}")


if __name__ == "__main__":
    main()
