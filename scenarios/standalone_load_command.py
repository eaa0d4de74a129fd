"""`loadtower agent run`: one host's load, stand-alone, through a local Locust master
and workers (scenarios/orchestrator/standalone_load.py); the workload is a preset or
a scenario file's first workload. Registered by the CLI room beside the agents' own
`worker` (loadtower/cli.py)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import cast

from loadtower.protocol.phase_spec import DatasetSpec, PhaseSpec, TargetSpec, WorkloadSpec

HELP = "generate load stand-alone; interval lines and a summary"


def add_arguments(run: argparse.ArgumentParser) -> None:
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


def _spec(args: argparse.Namespace) -> PhaseSpec:
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
        "target": cast(TargetSpec, target.model_dump(mode="json")),
        "dataset": cast(DatasetSpec, dataset.model_dump(mode="json")),
        "workload": cast(WorkloadSpec, workload.model_dump(mode="json")),
        "workload_name": name,
    }


def run(args: argparse.Namespace) -> int:
    from loadtower.scenarios.orchestrator.standalone_load import run_agent

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
