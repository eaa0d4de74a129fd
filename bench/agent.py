"""Client CPU per op: loadtower's agent against latte, and the agent's CQL paths, in one run.

Default (issue 18's table): for YCSB C (reads) and YCSB A (50% reads, 50% one-field
updates) over RECORDS loaded rows (the agent: the presets' zipfian keys; latte: its
`hash_range`, uniform), at each rate of --rates (1,000, 5,000
and 10,000 ops/s), one run of the agent on the Rust core (`native_io = "rust"`, one
worker process) and one run of latte (`make bench-peers`), each alone, one after the
other. For each: CPU-microseconds per op (the agent's worker process over its run
phase, latte's `cpu_time_s` over its run), errors, and the rate held (the agent: the
mean of its whole seconds after the first and before the last; latte: its requests
over its elapsed time) as a share of the rate asked. The ratio agent/latte is the
issue's goal (<= 1.0, zero errors, rates held within 1%). A rate that either one
cannot hold here is said so, with the highest rate both held. The agent's `cql_path`
event says which path ran; a run that fell back from the Rust core is marked.

Latency (issue 33's columns, same runs): the agent's service time (from the send),
response time (from the intended start) and lateness (send - intended start: its own
schedule's share) p50/p99 over its run phase (merged HDR histograms of its interval
lines), beside latte's latency p50/p99 from its report; `--rates 100,500,2000,5000
--workloads ycsb-c` is the issue's table. The goal: the agent's response p50 within
0.1 ms of its service p50 where it is not saturated, and within 0.1 ms (or 15%) of
latte's p50.

--paths: the agent's CQL paths at one --rate: raw cassandra-driver, the agent's Python
lanes on it (`native_io = "python"`, the reference path), raw acsylla, the agent's Python
lanes on it, the agent on the Rust core, latte; ratios b/a, d/c, f/d and f/e.

The machine is shared and noisy: compare ratios from one run, not absolute figures
across runs.

usage: python bench/agent.py [--sandbox DIR] [--rates 1000,5000,10000] [--seconds 10]
                             [--workloads ycsb-c,ycsb-a] [--repeat 3] [--paths [--rate 1000]] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
KEYSPACE = "lt_bench"
RECORDS = 10_000
WARM_UP_S = 10.0  # an unmeasured run after the load


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def agent(
    info: dict, driver: str, rate: float, seconds: float, load: bool = False, io: str = "rust",
    workload: str = "ycsb-c",
) -> dict:
    """One `loadtower agent run` (one worker process): its summary, the ops/s it held over
    its whole seconds (after the first, before the last) and the CQL path it reported."""
    cass = info["cassandra"]
    argv = [
        sys.executable, "-m", "loadtower", "agent", "run",
        "--driver", driver,
        "--native-io", io,
        "--contact-points", ",".join(cass["contact_points"]),
        "--port", str(cass["port"]),
        "--username", cass["username"],
        "--password-env", "LT_BENCH_PW",
        "--keyspace", KEYSPACE,
        "--workload", workload,
        "--records", str(RECORDS),
        "--json",
    ]
    argv += (
        ["--load", "--duration", "0"] if load else ["--rate", str(rate), "--duration", str(seconds)]
    )
    env = {**os.environ, "LT_BENCH_PW": cass["password"]}
    out = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=900, check=False)
    lines = [json.loads(x) for x in out.stdout.splitlines() if x.startswith("{")]
    if not lines or "summary" not in lines[-1]:
        raise SystemExit(f"`loadtower agent run` ({workload}, {rate:g} ops/s) printed no summary:"
                         f" {out.stderr[-1500:]}")
    summary = lines[-1]["summary"]
    result = {"ops": summary["ops"], "errors": summary["errors"], "cpu_s": summary["cpu_s"]}
    if not load:
        result["held_ops_s"] = held_rate(lines)
        result["path"] = cql_path(lines)
        result.update(latencies(lines))
    return result


def latencies(lines: list[dict]) -> dict[str, float | None]:
    """p50/p99 (ms) of service, response and lateness over the run phase: each the merge of
    every interval line's histograms (never an average of percentiles)."""
    from loadtower.protocol.hdr_encoding import decode, new_hist

    merged = {"service": new_hist(), "response": new_hist(), "lateness": new_hist()}
    for x in lines:
        if x.get("type") == "interval" and x.get("phase") == "run":
            for s in x["ops"].values():
                for name, h in merged.items():
                    text = s.get(f"{name}_hist")
                    if text:
                        h.add(decode(text))
    out: dict[str, float | None] = {}
    for name, h in merged.items():
        for pct in (50, 99):
            out[f"{name}_p{pct}_ms"] = (round(h.get_value_at_percentile(pct) / 1000.0, 3)
                                        if h.get_total_count() else None)
    return out


def held_rate(lines: list[dict]) -> float | None:
    """Mean ops per whole second of the run phase, its first and last seconds left out
    (Locust starts the lanes over the first; the stop cuts the last)."""
    per: dict[int, int] = {}
    for x in lines:
        if x.get("type") == "interval" and x.get("phase") == "run":
            per[x["ts"]] = per.get(x["ts"], 0) + sum(s["ops"] for s in x["ops"].values())
    seconds = sorted(per)[1:-1]
    return round(sum(per[s] for s in seconds) / len(seconds), 1) if seconds else None


def cql_path(lines: list[dict]) -> str:
    """What the agent's `cql_path` events say (the Rust core's path(), or why not)."""
    said = []
    for x in lines:
        if x.get("type") == "event" and x.get("kind") == "cql_path":
            data = x.get("data")
            if isinstance(data, dict) and data.get("driver"):
                said.append(f"{data['driver']} {data.get('driver_version', '')}".strip())
            else:
                said.append(str(x.get("message")))
    return "; ".join(dict.fromkeys(said)) or "(no cql_path event)"


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
const FIELDS = {fields};
pub async fn prepare(ctx) {{
    ctx.prepare("read", `SELECT * FROM ${{KEYSPACE}}.usertable WHERE y_id = :y_id`).await?;
    for f in 0..FIELDS {{
        ctx.prepare(`update${{f}}`,
                    `UPDATE ${{KEYSPACE}}.usertable SET field${{f}} = :v WHERE y_id = :y_id`).await?;
    }}
}}
pub async fn read(ctx, i) {{
    let k = hash_range(i, ROWS);
    ctx.execute_prepared("read", [`{prefix}${{k}}`]).await?;
}}
pub async fn update(ctx, i) {{
    let k = hash_range(i, ROWS);
    let f = hash_range(i + 1, FIELDS);
    ctx.execute_prepared(`update${{f}}`, [text(i, {field_size}), `{prefix}${{k}}`]).await?;
}}
"""
LATTE_PREFIX = "latte"
FIELDS, FIELD_SIZE = 10, 100  # `loadtower agent run`'s defaults: the rows it loads
LATTE_FUNCTIONS = {"ycsb-c": "read", "ycsb-a": "read:0.5,update:0.5"}


def latte_exe() -> str | None:
    exe = shutil.which("latte") or str(Path.home() / ".cargo/bin/latte")
    return exe if Path(exe).exists() else None


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


def latte(info: dict, ops: int, rate: float, workload: str = "ycsb-c") -> dict | None:
    """latte's CPU per op over its run alone, as the others are measured: the report's
    `cpu_time_s` and `elapsed_time_s` cover the run, not the start, connect and prepare
    (the process's whole CPU is kept as `process_cpu_s`)."""
    exe = latte_exe()
    if exe is None:
        return None
    cass = info["cassandra"]
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "ycsb.rn"
        script.write_text(LATTE_SCRIPT.format(ks=KEYSPACE, records=RECORDS, prefix=LATTE_PREFIX,
                                              fields=FIELDS, field_size=FIELD_SIZE))
        before = children_cpu()
        out = subprocess.run(
            [
                exe, "run", str(script),
                "-f", LATTE_FUNCTIONS[workload],
                "-d", str(ops),
                "-r", str(rate),
                "--user", cass["username"],
                "--password", cass["password"],
                "--consistency", "LOCAL_QUORUM",  # the agent's default too
                "-q",
                f"{cass['contact_points'][0]}:{cass['port']}",
                "-o", str(Path(tmp) / "report.json"),
            ],
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
            cwd=tmp,  # latte writes its log file into the working directory
        )
        used = children_cpu() - before
        report = Path(tmp) / "report.json"
        if out.returncode != 0 or not report.exists():
            return {"ops": 0, "errors": ops, "cpu_s": used, "note": out.stderr[-300:]}
        result = json.loads(report.read_text())["result"]
        wall = float(result["elapsed_time_s"])
        return {
            "ops": int(result["request_count"]),
            "errors": int(result.get("error_count") or 0),
            "cpu_s": float(result["cpu_time_s"]),
            "wall_s": wall,
            "held_ops_s": round(int(result["request_count"]) / max(wall, 1e-9), 1),
            "process_cpu_s": round(used, 3),
            **latte_latency(result),
        }


LATTE_P50, LATTE_P99 = 6, 11  # latte 0.29's Percentile enum: Min, 1, 2, 5, 10, 25, 50, .. 99


def latte_latency(result: dict) -> dict[str, float | None]:
    """latte's request latency p50/p99 (ms; its report's `percentiles`, one per member of
    its Percentile enum), its cycle latency when it reported no request latency."""
    dist = result.get("request_latency") or result.get("cycle_latency") or {}
    pcts = dist.get("percentiles") or []

    def at(i: int) -> float | None:
        if i >= len(pcts):
            return None
        v = pcts[i]
        return round(float(v["value"] if isinstance(v, dict) else v), 3)

    return {"p50_ms": at(LATTE_P50), "p99_ms": at(LATTE_P99)}


def latte_version() -> str:
    exe = latte_exe()
    if exe is None:
        return "not installed"
    out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=30,
                         check=False)
    return (out.stdout or out.stderr).strip()


def us_per_op(r: dict) -> float:
    return round(1e6 * r["cpu_s"] / max(r["ops"], 1), 1)


def held(r: dict, rate: float) -> bool:
    """Zero errors and the rate held within 1%."""
    got = r.get("held_ops_s")
    return r["errors"] == 0 and got is not None and abs(got - rate) <= 0.01 * rate


# ---- issue 18's table ------------------------------------------------------------------
def median_of(runs: list[dict]) -> dict:
    """One run's figures from several: each number the median of the runs' (errors: the
    most any run had), the rest the first run's."""
    out = dict(runs[0])
    for key, value in runs[0].items():
        values = [r.get(key) for r in runs]
        if key == "errors":
            out[key] = max(int(v or 0) for v in values)
        elif isinstance(value, int | float) and not isinstance(value, bool) \
                and all(isinstance(v, int | float) for v in values):
            out[key] = statistics.median(values)
    out["runs"] = len(runs)
    return out


def table(info: dict, rates: list[float], seconds: float, workloads: list[str],
          repeat: int = 1) -> dict:
    """Each (workload, rate): the agent and latte one after the other, `repeat` times in
    alternating order (agent first, then latte first, ...); each figure the median."""
    rows: list[dict[str, Any]] = []
    for workload in workloads:
        for rate in rates:
            ops = int(rate * seconds)
            row: dict[str, Any] = {"workload": workload, "rate": rate}
            agents: list[dict] = []
            lattes: list[dict] = []
            for rep in range(repeat):
                order = ("agent", "latte") if rep % 2 == 0 else ("latte", "agent")
                for who in order:
                    if who == "agent":
                        agents.append(agent(info, "auto", rate, seconds, io="rust",
                                            workload=workload))
                    elif (found := latte(info, ops, rate, workload)) is not None:
                        lattes.append(found)
            for run in agents + lattes:
                run["us_per_op"] = us_per_op(run)
            for run in agents:  # the gap of each run, then their median (not a difference
                # of two medians that may come from different runs)
                svc, resp = run.get("service_p50_ms"), run.get("response_p50_ms")
                if svc is not None and resp is not None:
                    run["gap_p50_ms"] = resp - svc
            a = median_of(agents)
            row["agent"] = a
            la = median_of(lattes) if lattes else None
            if la is not None:
                row["latte"] = la
                row["ratio"] = round(a["us_per_op"] / la["us_per_op"], 2) if la["us_per_op"] else None
            row["held"] = held(a, rate) and (la is None or held(la, rate))
            rows.append(row)
    held_rates = [r["rate"] for r in rows if r["held"]]
    sustained = {
        w: max((r["rate"] for r in rows if r["workload"] == w and r["held"]), default=None)
        for w in workloads
    }
    return {"seconds": seconds, "records": RECORDS, "latte": latte_version(), "rows": rows,
            "repeat": repeat,
            "highest_rate_held": sustained, "all_held": len(held_rates) == len(rows)}


def print_table(result: dict) -> None:
    print(f"CPU per op, loadtower agent (Rust core, 1 worker process) vs latte ({result['latte']}); "
          f"{result['seconds']:g} s per run, {result['records']:,} rows"
          + (f"; medians of {result['repeat']} runs each, in alternating order"
             if result.get("repeat", 1) > 1 else ""))
    head = (f"{'workload':8} {'rate':>7} {'agent us/op':>11} {'latte us/op':>11} {'ratio':>6} "
            f"{'agent err':>9} {'latte err':>9} {'agent held':>10} {'latte held':>10}")
    print(head)

    def pct(r: dict | None, rate: float) -> str:
        if r is None or r.get("held_ops_s") is None:
            return "n/a"
        return f"{100.0 * r['held_ops_s'] / rate:.1f}%"

    for row in result["rows"]:
        a, la, rate = row["agent"], row.get("latte"), row["rate"]
        print(f"{row['workload']:8} {rate:>7,.0f} {a['us_per_op']:>11.1f} "
              f"{(la['us_per_op'] if la else float('nan')):>11.1f} "
              f"{(row.get('ratio') if row.get('ratio') is not None else float('nan')):>6.2f} "
              f"{a['errors']:>9} {(la['errors'] if la else 'n/a'):>9} {pct(a, rate):>10} "
              f"{pct(la, rate):>10}" + ("" if row["held"] else "  NOT HELD"))
    print_latency(result)
    paths = sorted({row["agent"]["path"] for row in result["rows"]})
    print(f"agent CQL path: {' | '.join(paths)}")
    for workload, rate in result["highest_rate_held"].items():
        print(f"{workload}: highest rate held (zero errors, within 1%) by both here: "
              + (f"{rate:,.0f} ops/s" if rate else "none of the rates asked"))
    if result["latte"] == "not installed":
        print("latte is not installed (`make bench-peers`): no ratio")


def print_latency(result: dict) -> None:
    """Issue 33's columns: the agent's service, response and lateness p50/p99 beside
    latte's p50/p99 (ms), and whether the agent's response p50 is within 0.1 ms of its
    service p50 and within 0.1 ms (or 15%) of latte's p50."""
    print("latency (ms; same runs): agent service / response / lateness p50 p99, latte p50 p99")
    print(f"{'workload':8} {'rate':>7} {'svc p50':>7} {'svc p99':>7} {'resp p50':>8} "
          f"{'resp p99':>8} {'late p50':>8} {'late p99':>8} {'latte p50':>9} {'latte p99':>9}"
          f"  goal")

    def f(v: float | None, w: int) -> str:
        return f"{v:>{w}.2f}" if v is not None else f"{'n/a':>{w}}"

    for row in result["rows"]:
        a, la = row["agent"], row.get("latte") or {}
        sp50, rp50, lp50 = a.get("service_p50_ms"), a.get("response_p50_ms"), la.get("p50_ms")
        goal = []
        gap = a.get("gap_p50_ms", None if sp50 is None or rp50 is None else rp50 - sp50)
        if gap is not None:
            goal.append(f"resp-svc {gap:.2f} " + ("ok" if gap <= 0.1 else "MISSED"))
        if rp50 is not None and lp50 is not None:
            near = abs(rp50 - lp50) <= max(0.1, 0.15 * lp50)
            goal.append("vs latte " + ("ok" if near else "MISSED"))
        print(f"{row['workload']:8} {row['rate']:>7,.0f} {f(sp50, 7)} {f(a.get('service_p99_ms'), 7)} "
              f"{f(rp50, 8)} {f(a.get('response_p99_ms'), 8)} {f(a.get('lateness_p50_ms'), 8)} "
              f"{f(a.get('lateness_p99_ms'), 8)} {f(lp50, 9)} {f(la.get('p99_ms'), 9)}  "
              + ", ".join(goal))


# ---- the comparison of the agent's CQL paths -----------------------------------------------
def paths(info: dict, rate: float, seconds: float) -> dict:
    ops = int(rate * seconds)
    results = {}
    for name, fn in [
        ("a_raw_driver", lambda: raw(info, "driver", ops, rate)),
        ("b_agent_driver", lambda: agent(info, "cassandra-driver", rate, seconds, io="python")),
        ("c_raw_acsylla", lambda: raw(info, "acsylla", ops, rate)),
        ("d_agent_acsylla", lambda: agent(info, "acsylla", rate, seconds, io="python")),
        ("f_agent_rust", lambda: agent(info, "auto", rate, seconds, io="rust")),
        ("e_latte", lambda: latte(info, ops, rate)),
    ]:
        t0 = time.monotonic()
        r = fn()
        if r is None:
            continue
        r["us_per_op"] = us_per_op(r)
        wall = r.pop("wall_s", None) or (seconds if "agent" in name else time.monotonic() - t0)
        r["ops_per_s"] = round(r["ops"] / max(wall, 1e-9), 1)
        results[name] = r

    def ratio(x: str, y: str) -> float | None:
        if x in results and y in results and results[y]["us_per_op"]:
            return round(results[x]["us_per_op"] / results[y]["us_per_op"], 2)
        return None

    ratios = {
        "b/a": ratio("b_agent_driver", "a_raw_driver"),
        "d/c": ratio("d_agent_acsylla", "c_raw_acsylla"),
        "f/d": ratio("f_agent_rust", "d_agent_acsylla"),
        "f/e": ratio("f_agent_rust", "e_latte"),
    }
    return {"rate": rate, "ops": ops, "results": results, "ratios": ratios}


def print_paths(result: dict) -> None:
    print(f"{result['ops']:,} YCSB-C reads at {result['rate']:g} ops/s each")
    print(f"{'client':24} {'CPU us/op':>10} {'ops/s':>10} {'errors':>7}")
    for name, r in result["results"].items():
        print(f"{name:24} {r['us_per_op']:>10.1f} {r['ops_per_s']:>10.1f} {r['errors']:>7}")
    for k, v in result["ratios"].items():
        print(f"ratio {k}: {'n/a (latte not installed)' if v is None else v}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--sandbox", default=os.environ.get("LOADTOWER_SANDBOX", ".sandbox"))
    p.add_argument("--rates", default="1000,5000,10000", help="ops/s, comma-separated")
    p.add_argument("--workloads", default="ycsb-c,ycsb-a", help="ycsb-c and/or ycsb-a")
    p.add_argument("--seconds", type=float, default=10.0)
    p.add_argument("--repeat", type=int, default=1,
                   help="runs of each (agent and latte, alternating); figures are medians")
    p.add_argument("--paths", action="store_true", help="the agent's CQL paths at one --rate")
    p.add_argument("--rate", type=float, default=1000.0, help="--paths: ops/s")
    p.add_argument("--json", action="store_true")
    a = p.parse_args()
    workloads = [w.strip() for w in a.workloads.split(",") if w.strip()]
    unknown = [w for w in workloads if w not in LATTE_FUNCTIONS]
    if unknown:
        p.error(f"--workloads: {', '.join(unknown)} (known: {', '.join(LATTE_FUNCTIONS)})")
    try:
        rates = [float(r) for r in a.rates.split(",") if r.strip()]
    except ValueError:
        p.error(f"--rates {a.rates}: not numbers")
    from loadtower.sandbox import Sandbox

    info = Sandbox(a.sandbox).info()
    if not info.get("up"):
        sys.exit(f"the sandbox in {a.sandbox} is not up: loadtower sandbox up --dir {a.sandbox}")
    agent(info, "auto", 0.0, 0.0, load=True)  # the rows (asyncio load lanes)
    if latte_exe():
        seed_latte_rows(info)
    # not measured: the database settles after the load (its flush and compaction slowed
    # whichever run came first: 2.4 ms at the median where the next ones saw 0.8)
    agent(info, "auto", rates[0] if rates else a.rate, WARM_UP_S, io="rust",
          workload=workloads[0] if workloads else "ycsb-c")
    if a.paths:
        compared = paths(info, a.rate, a.seconds)
        print(json.dumps(compared)) if a.json else print_paths(compared)
        return
    result = table(info, rates, a.seconds, workloads, max(1, a.repeat))
    if a.json:
        print(json.dumps(result))
    else:
        print_table(result)


if __name__ == "__main__":
    main()
