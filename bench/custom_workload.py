"""CPU per op of a custom workload file against the built-in op of the same size, both on
the Rust core, in one run.

The built-in: the ycsb schema's read (a text key `user` + FNV hash, zipfian) and insert
(10 fields of 100 bytes), mixed 50/50 (a scenario whose workload is `mix = { read = 50,
insert = 50 }`). The custom: a workload file this bench writes with its own table of the
same size and the same two ops (a text-keyed read that must find its row, and an insert of
10 x 100-byte text columns), also 50/50. Each is loaded (the Python path), then run at
--rate for --seconds on the core (`native_io = "rust"`, one worker process), alternately,
--rounds times. Printed: CPU-microseconds per op of each run (the worker's CPU over the
run phase / its ops), errors, the path each ran on, and the ratio custom/built-in of the
median runs; the issue's goal is <= 1.3 (values produced natively, not per op in Python).

The machine is shared and noisy: compare the ratio from one run, not absolute figures.

usage: python bench/custom_workload.py [--sandbox DIR] [--rate 2000] [--seconds 10]
                                       [--rounds 3] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from agent import cql_path, held_rate  # noqa: E402 - bench/agent.py, a sibling script

RECORDS = 10_000
GOAL = 1.3

WORKLOAD_FILE = """
name = "bench-custom"
load = "insert"

[tables.profile]
partition_key = ["id"]

[tables.profile.columns]
id = "text"
a0 = "text"
a1 = "text"
a2 = "text"
a3 = "text"
a4 = "text"
a5 = "text"
a6 = "text"
a7 = "text"
a8 = "text"
a9 = "text"

[ops.read]
weight = 50
expect = "rows"
key = { gen = "zipfian" }
cassandra = "SELECT * FROM ${profile} WHERE id = :id"
bind.id = { gen = "key", prefix = "user", hash = true }

[ops.insert]
weight = 50
key = { gen = "sequence" }
cassandra = "INSERT INTO ${profile} (id, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9) VALUES (:id, :a0, :a1, :a2, :a3, :a4, :a5, :a6, :a7, :a8, :a9)"
bind.id = { gen = "key", prefix = "user", hash = true }
""" + "".join(f'bind.a{i} = {{ gen = "text", length = 100 }}\n' for i in range(10))


def scenario(workload: str) -> str:
    return f"""
name = "bench-custom-workload"

[target]
keyspace = "lt_bench_custom"

[dataset]
records = {RECORDS}
fields = 10
field_size = 100

[workloads.w]
{workload}

[[phases]]
type = "load"

[[phases]]
type = "run"
duration = "10s"
rate = 1000
"""


BUILTIN = 'schema = "ycsb"\nmix = { read = 50, insert = 50 }\ndistribution = "zipfian"'
CUSTOM = 'file = "custom.toml"'


def agent(info: dict, path: Path, rate: float, seconds: float, load: bool) -> dict:
    """One `loadtower agent run` of a scenario (one worker process)."""
    cass = info["cassandra"]
    argv = [
        sys.executable, "-m", "loadtower", "agent", "run", "--native-io", "rust",
        "--contact-points", ",".join(cass["contact_points"]), "--port", str(cass["port"]),
        "--username", cass["username"], "--password-env", "LT_BENCH_PW",
        "--workload", str(path), "--json",
    ]
    argv += ["--load", "--duration", "0"] if load else ["--rate", str(rate),
                                                         "--duration", str(seconds)]
    env = {**os.environ, "LT_BENCH_PW": cass["password"]}
    out = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=900, check=False)
    lines = [json.loads(x) for x in out.stdout.splitlines() if x.startswith("{")]
    if not lines or "summary" not in lines[-1]:
        raise SystemExit(f"`loadtower agent run` ({path.name}) printed no summary: "
                         f"{out.stderr[-1500:]}")
    summary = lines[-1]["summary"]
    result = {"ops": summary["ops"], "errors": summary["errors"], "cpu_s": summary["cpu_s"]}
    if not load:
        result["us_per_op"] = round(1e6 * summary["cpu_s"] / max(summary["ops"], 1), 1)
        result["held_ops_s"] = held_rate(lines)
        result["path"] = cql_path(lines)
    return result


def measure(info: dict, rate: float, seconds: float, rounds: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="lt-bench-custom-") as tmp:
        d = Path(tmp)
        (d / "custom.toml").write_text(WORKLOAD_FILE)
        paths = {"builtin": d / "builtin.toml", "custom": d / "custom-scenario.toml"}
        paths["builtin"].write_text(scenario(BUILTIN))
        paths["custom"].write_text(scenario(CUSTOM))
        for path in paths.values():
            agent(info, path, 0, 0, load=True)
        runs: dict[str, list[dict]] = {"builtin": [], "custom": []}
        for _ in range(rounds):
            for name, path in paths.items():
                runs[name].append(agent(info, path, rate, seconds, load=False))
    median = {name: statistics.median(r["us_per_op"] for r in rs) for name, rs in runs.items()}
    ratio = round(median["custom"] / median["builtin"], 3) if median["builtin"] else None
    return {"rate": rate, "seconds": seconds, "runs": runs, "median_us_per_op": median,
            "ratio": ratio, "goal": GOAL, "met": ratio is not None and ratio <= GOAL
            and all(r["errors"] == 0 for rs in runs.values() for r in rs)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--sandbox", default=os.environ.get("LOADTOWER_SANDBOX", ".sandbox"))
    p.add_argument("--rate", type=float, default=2000.0, help="ops/s of each run")
    p.add_argument("--seconds", type=float, default=10.0)
    p.add_argument("--rounds", type=int, default=3, help="runs of each, alternately")
    p.add_argument("--json", action="store_true")
    a = p.parse_args()
    from loadtower.sandbox import Sandbox

    info = Sandbox(a.sandbox).info()
    if not info.get("up"):
        sys.exit(f"the sandbox in {a.sandbox} is not up: loadtower sandbox up --dir {a.sandbox}")
    result = measure(info, a.rate, a.seconds, max(1, a.rounds))
    if a.json:
        print(json.dumps(result))
        return
    print(f"CPU per op on the Rust core at {a.rate:g} ops/s, {a.seconds:g} s per run "
          "(read 50 % + insert 50 %, 10 x 100-byte fields):")
    for name, rs in result["runs"].items():
        for r in rs:
            print(f"  {name:8} {r['us_per_op']:7.1f} us/op  ops {r['ops']:6d}  errors "
                  f"{r['errors']}  held {r['held_ops_s']} ops/s  path {r['path']}")
    m = result["median_us_per_op"]
    print(f"median: built-in {m['builtin']:.1f} us/op, custom {m['custom']:.1f} us/op; "
          f"ratio custom/built-in {result['ratio']} (goal <= {GOAL}: "
          f"{'met' if result['met'] else 'NOT met'})")


if __name__ == "__main__":
    main()
