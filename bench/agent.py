"""Client CPU per op: raw drivers vs loadtower's agent vs latte, in one run.

The same number of YCSB-C reads at the same fixed, sub-saturation rate against the
sandbox: (a) raw cassandra-driver, (b) the agent on cassandra-driver, (c) raw acsylla,
(d) the agent on acsylla, (e) latte when it is on PATH (`make bench-peers`).
The agent on acsylla runs its open-model sends on its own CQL connections (`native_io =
"wire"`, the default); (d2) is the same agent sending through the C++ driver under
acsylla (`native_io = "driver"`), for comparison.
Prints CPU-microseconds per op, ops/s and errors for each, and the ratios b/a, d/c
and d/e (goals: <= 1.25, <= 1.3, <= 1.5), and d2/e. The machine is shared and noisy: compare
ratios from one run, not absolute figures across runs.

usage: python bench/agent.py [--sandbox DIR] [--rate 1000] [--seconds 10] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
KEYSPACE = "lt_bench"
RECORDS = 10_000


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def agent(
    info: dict, driver: str, rate: float, seconds: float, load: bool = False, io: str = "wire"
) -> dict:
    cass = info["cassandra"]
    argv = [
        sys.executable,
        "-m",
        "loadtower",
        "agent",
        "run",
        "--driver",
        driver,
        "--native-io",
        io,
        "--contact-points",
        ",".join(cass["contact_points"]),
        "--port",
        str(cass["port"]),
        "--username",
        cass["username"],
        "--password-env",
        "LT_BENCH_PW",
        "--keyspace",
        KEYSPACE,
        "--workload",
        "ycsb-c",
        "--records",
        str(RECORDS),
        "--json",
    ]
    argv += (
        ["--load", "--duration", "0"] if load else ["--rate", str(rate), "--duration", str(seconds)]
    )
    env = {**os.environ, "LT_BENCH_PW": cass["password"]}
    out = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=600, check=False)
    summary = json.loads(out.stdout.strip().splitlines()[-1])["summary"]
    return {"ops": summary["ops"], "errors": summary["errors"], "cpu_s": summary["cpu_s"]}


def raw(info: dict, client: str, ops: int, rate: float) -> dict:
    cass = info["cassandra"]
    argv = [
        sys.executable,
        str(HERE / "raw_clients.py"),
        client,
        "--hosts",
        ",".join(cass["contact_points"]),
        "--port",
        str(cass["port"]),
        "--user",
        cass["username"],
        "--password",
        cass["password"],
        "--keyspace",
        KEYSPACE,
        "--records",
        str(RECORDS),
        "--ops",
        str(ops),
        "--rate",
        str(rate),
    ]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


LATTE_SCRIPT = """
use latte::*;
const KEYSPACE = "{ks}";
const ROWS = latte::param!("rows", {records});
pub async fn prepare(ctx) {{
    ctx.prepare("read", `SELECT * FROM ${{KEYSPACE}}.usertable WHERE y_id = :y_id`).await?;
}}
pub async fn run(ctx, i) {{
    let k = hash_range(i, ROWS);
    ctx.execute_prepared("read", [`{prefix}${{k}}`]).await?;
}}
"""
LATTE_PREFIX = "latte"


def seed_latte_rows(info: dict) -> None:
    """Rows latte can find: its script cannot compute the agents' FNV-hashed YCSB keys, so
    the bench copies one loaded row under the keys latte reads (LATTE_PREFIX + 0..N-1)."""
    from cassandra.auth import PlainTextAuthProvider
    from cassandra.cluster import Cluster
    from cassandra.concurrent import execute_concurrent_with_args

    cass = info["cassandra"]
    cluster = Cluster(cass["contact_points"], port=cass["port"], protocol_version=5,
                      auth_provider=PlainTextAuthProvider(cass["username"], cass["password"]))
    try:
        session = cluster.connect(KEYSPACE)
        row = session.execute("SELECT * FROM usertable LIMIT 1").one()
        names = [n for n in row._fields if n != "y_id"]
        insert = session.prepare(f"INSERT INTO usertable (y_id, {', '.join(names)}) "
                                 f"VALUES (?{', ?' * len(names)})")
        values = [getattr(row, n) for n in names]
        execute_concurrent_with_args(session, insert,
                                     [(f"{LATTE_PREFIX}{k}", *values) for k in range(RECORDS)],
                                     concurrency=64)
    finally:
        cluster.shutdown()


def latte(info: dict, ops: int, rate: float) -> dict | None:
    """latte's CPU per op over its run alone, as the others are measured: the report's
    `cpu_time_s` and `elapsed_time_s` cover the run, not the start, connect and prepare
    (the process's whole CPU is kept as `process_cpu_s`)."""
    exe = shutil.which("latte") or str(Path.home() / ".cargo/bin/latte")
    if not Path(exe).exists():
        return None
    cass = info["cassandra"]
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "read.rn"
        script.write_text(LATTE_SCRIPT.format(ks=KEYSPACE, records=RECORDS, prefix=LATTE_PREFIX))
        before = children_cpu()
        out = subprocess.run(
            [
                exe,
                "run",
                str(script),
                "-d",
                str(ops),
                "-r",
                str(rate),
                "--user",
                cass["username"],
                "--password",
                cass["password"],
                "-q",
                f"{cass['contact_points'][0]}:{cass['port']}",
                "-o",
                str(Path(tmp) / "report.json"),
            ],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
            cwd=tmp,  # latte writes its log file into the working directory
        )
        used = children_cpu() - before
        report = Path(tmp) / "report.json"
        if out.returncode != 0 or not report.exists():
            return {"ops": 0, "errors": ops, "cpu_s": used, "note": out.stderr[-300:]}
        result = json.loads(report.read_text())["result"]
        return {
            "ops": int(result["request_count"]),
            "errors": int(result.get("error_count") or 0),
            "cpu_s": float(result["cpu_time_s"]),
            "wall_s": float(result["elapsed_time_s"]),
            "process_cpu_s": round(used, 3),
        }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--sandbox", default=os.environ.get("LOADTOWER_SANDBOX", ".sandbox"))
    p.add_argument("--rate", type=float, default=1000.0)  # (b) cannot keep 1,500 here
    p.add_argument("--seconds", type=float, default=10.0)
    p.add_argument("--json", action="store_true")
    a = p.parse_args()
    from loadtower.sandbox import Sandbox

    info = Sandbox(a.sandbox).info()
    if not info.get("up"):
        sys.exit(f"the sandbox in {a.sandbox} is not up: loadtower sandbox up --dir {a.sandbox}")
    ops = int(a.rate * a.seconds)
    agent(info, "acsylla", a.rate, a.seconds, load=True)
    if shutil.which("latte") or (Path.home() / ".cargo/bin/latte").exists():
        seed_latte_rows(info)
    results = {}
    for name, fn in [
        ("a_raw_driver", lambda: raw(info, "driver", ops, a.rate)),
        ("b_agent_driver", lambda: agent(info, "cassandra-driver", a.rate, a.seconds)),
        ("c_raw_acsylla", lambda: raw(info, "acsylla", ops, a.rate)),
        ("d_agent_acsylla", lambda: agent(info, "acsylla", a.rate, a.seconds)),
        ("d2_agent_acsylla_cpp_io",
         lambda: agent(info, "acsylla", a.rate, a.seconds, io="driver")),
        ("e_latte", lambda: latte(info, ops, a.rate)),
    ]:
        t0 = time.monotonic()
        r = fn()
        if r is None:
            continue
        r["us_per_op"] = round(1e6 * r["cpu_s"] / max(r["ops"], 1), 1)
        wall = r.pop("wall_s", None) or (
            a.seconds
            if "agent" in name
            else time.monotonic() - t0
        )
        r["ops_per_s"] = round(r["ops"] / max(wall, 1e-9), 1)
        results[name] = r

    def ratio(x: str, y: str) -> float | None:
        if x in results and y in results and results[y]["us_per_op"]:
            return round(results[x]["us_per_op"] / results[y]["us_per_op"], 2)
        return None

    ratios = {
        "b/a": ratio("b_agent_driver", "a_raw_driver"),
        "d/c": ratio("d_agent_acsylla", "c_raw_acsylla"),
        "d/e": ratio("d_agent_acsylla", "e_latte"),
        "d2/e": ratio("d2_agent_acsylla_cpp_io", "e_latte"),
    }
    if a.json:
        print(json.dumps({"rate": a.rate, "ops": ops, "results": results, "ratios": ratios}))
        return
    print(f"{ops:,} YCSB-C reads at {a.rate:g} ops/s each")
    print(f"{'client':24} {'CPU us/op':>10} {'ops/s':>10} {'errors':>7}")
    for name, r in results.items():
        print(f"{name:24} {r['us_per_op']:>10.1f} {r['ops_per_s']:>10.1f} {r['errors']:>7}")
    for k, v in ratios.items():
        print(f"ratio {k}: {'n/a (latte not installed)' if v is None else v}")


if __name__ == "__main__":
    main()
