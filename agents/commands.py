"""`loadtower agent`: the load agent (run stand-alone, or as Locust master/worker)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

HELP = "Run the load agent on this host (interval lines as JSON on stdout)."
DESCRIPTION = """The load agent: Locust users whose ops run on a native-thread asyncio engine
(acsylla or cassandra-driver), measured per second with HDR histograms of service
time (from the actual send) and response time (from the intended start).

examples:
  loadtower agent run --contact-points 127.0.0.1 --username loadtower \\
      --password-env PW --workload ycsb-a --records 10000 --load --rate 500 --duration 10 --json
  loadtower agent master --bind 127.0.0.1:5557 --expect-workers 2   # commands on stdin
  loadtower agent worker --master 127.0.0.1:5557 --processes 0 --host-name agent1"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    run = sub.add_parser("run", help="generate load stand-alone; interval lines and a summary")
    run.add_argument("--engine", default="cassandra", choices=["cassandra", "scylla"])
    run.add_argument("--driver", default="auto", choices=["auto", "acsylla", "cassandra-driver"])
    run.add_argument("--native-io", default="wire", choices=["wire", "driver"],
                     help="acsylla open-model sends: own CQL connections, or the C++ driver's")
    run.add_argument("--contact-points", required=True, help="H[,H...]")
    run.add_argument("--port", type=int, default=9042)
    run.add_argument("--username")
    run.add_argument("--password-env", help="environment variable holding the password")
    run.add_argument("--password-file", type=Path, help="file holding the password")
    run.add_argument("--consistency", default="LOCAL_QUORUM")
    run.add_argument("--keyspace", default="loadtower")
    run.add_argument(
        "--workload",
        default="ycsb-a",
        help="a preset (ycsb-a..f, recipes, ttl) or a scenario file (first workload)",
    )
    run.add_argument("--records", type=int, default=10_000)
    run.add_argument("--fields", type=int, default=10)
    run.add_argument("--field-size", type=int, default=100)
    run.add_argument("--ttl", type=float, help="ttl workload: default TTL in seconds")
    run.add_argument("--load", action="store_true", help="insert the records first")
    run.add_argument("--load-concurrency", type=int, default=64)
    model = run.add_mutually_exclusive_group()
    model.add_argument("--rate", type=float, help="open model: total ops/s")
    model.add_argument("--users", type=int, help="closed model: concurrent users")
    run.add_argument("--duration", type=float, default=10.0, help="seconds of the run phase")
    run.add_argument("--processes", type=int, default=1, help="worker processes (0 = per core)")
    run.add_argument("--json", action="store_true", help="JSON lines (the agent protocol)")
    master = sub.add_parser("master", help="the Locust master; JSON commands on stdin")
    master.add_argument("--bind", required=True, help="HOST:PORT to listen on")
    master.add_argument("--expect-workers", type=int, default=1)
    master.add_argument("--lt-run", default="", help="run id (for process listings)")
    master.add_argument(
        "--grace", type=float, default=30.0, help="seconds a silent worker is still counted"
    )
    worker = sub.add_parser("worker", help="Locust worker processes running the load engine")
    worker.add_argument("--master", required=True, help="HOST:PORT of the master")
    worker.add_argument("--processes", type=int, default=1, help="worker processes (0 = per core)")
    worker.add_argument("--host-name", default=os.uname().nodename, help="inventory host name")
    worker.add_argument("--index", type=int, help=argparse.SUPPRESS)
    worker.add_argument("--lt-run", default="", help="run id (for process listings)")
    worker.add_argument("--spool-dir", help="write every interval line to DIR/INDEX.jsonl first")
    worker.add_argument(
        "--grace",
        type=float,
        default=30.0,
        help="stop the load after this many seconds without the master",
    )


def _password(args: argparse.Namespace) -> str | None:
    from loadtower.errors import LoadtowerError

    if args.password_env:
        value = os.environ.get(args.password_env)
        if value is None:
            raise LoadtowerError(f"--password-env {args.password_env}: variable is not set")
        return value
    if args.password_file:
        try:
            return args.password_file.read_text().strip()
        except OSError as exc:
            raise LoadtowerError(f"--password-file {args.password_file}: {exc.strerror}") from exc
    return None


def _spec(args: argparse.Namespace) -> dict:
    from loadtower.scenarios.models import Dataset, Target, Workload

    path = Path(args.workload)
    if path.suffix == ".toml" and path.exists():
        from loadtower.scenarios.loader import load_scenario

        scenario, _ = load_scenario(path)
        name, workload = next(iter(scenario.workloads.items()))
        target, dataset = scenario.target, scenario.dataset
    else:
        name = args.workload
        extra = {"ttl": args.ttl} if args.ttl else {}
        workload = Workload(preset=name, **extra)
        target = Target(keyspace=args.keyspace, consistency=args.consistency, driver=args.driver,
                        native_io=args.native_io)
        dataset = Dataset(records=args.records, fields=args.fields, field_size=args.field_size)
    return {
        "engine": args.engine,
        "target": target.model_dump(mode="json"),
        "dataset": dataset.model_dump(mode="json"),
        "workload": workload.model_dump(mode="json"),
        "workload_name": name,
    }


def run(args: argparse.Namespace) -> int:
    if args.action == "master":
        from loadtower.agents.master_main import Master

        return Master(args.bind, args.expect_workers, args.grace).serve()
    if args.action == "worker":
        from loadtower.agents.worker_main import run_workers

        return run_workers(
            args.master, args.host_name, args.processes, args.index, args.spool_dir, args.grace
        )
    from loadtower.agents.agent_run import run_agent

    conn = {
        "contact_points": args.contact_points.split(","),
        "port": args.port,
        "username": args.username,
        "password": _password(args),
        "driver": args.driver,
    }
    return run_agent(
        conn,
        _spec(args),
        processes=args.processes or os.cpu_count() or 1,
        load=args.load,
        records=args.records,
        rate=args.rate,
        users=args.users,
        duration=args.duration,
        json_out=args.json,
        load_concurrency=args.load_concurrency,
    )
