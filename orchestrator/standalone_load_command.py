"""`loadtower agent run`: one host's load, stand-alone, through a local Locust master
and workers (orchestrator/standalone_load.py); the workload is a preset or
a scenario file's first workload. Registered by the CLI room beside the agents' own
`worker` (loadtower/cli.py)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import cast

from loadtower.errors import LoadtowerError
from loadtower.protocol.engine_kinds import default_engine, engine_names, kind
from loadtower.protocol.phase_spec import (
    ConnectionOptions,
    DatasetSpec,
    PhaseSpec,
    TargetSpec,
    WorkloadSpec,
)

HELP = "generate load stand-alone; interval lines and a summary"


def add_arguments(run: argparse.ArgumentParser) -> None:
    # the default engine's family: its flavours share its keys (consistency, local DC)
    engine = kind(default_engine())
    family = [n for n in engine_names() if kind(n).family == engine.family]
    run.add_argument("--engine", default=engine.name, choices=family)
    run.add_argument("--driver", default="auto", choices=["auto", *engine.drivers])
    run.add_argument("--native-io", default="rust", choices=["rust", "python"],
                     help="open-model sends: the engine's native load core (default), or "
                     "Python lanes over the --driver session (the reference path)")
    run.add_argument("--contact-points", required=True, help="H[,H...]")
    run.add_argument("--port", type=int, default=engine.default_port)
    run.add_argument("--username")
    run.add_argument("--password-env", help="environment variable holding the password")
    run.add_argument("--password-file", type=Path, help="file holding the password")
    run.add_argument("--consistency", default="LOCAL_QUORUM")
    run.add_argument("--local-dc", help="DC-aware routing with this local data centre")
    run.add_argument("--tls-ca-file", type=Path,
                     help="TLS to every node: the PEM file of the CA that signed them")
    run.add_argument("--tls-cert-file", type=Path, help="TLS client certificate (PEM)")
    run.add_argument("--tls-key-file", type=Path, help="its private key (PEM)")
    run.add_argument("--no-tls-verify-hostname", action="store_true",
                     help="do not check that a node's certificate names its address")
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


def _tls(args: argparse.Namespace) -> dict | None:
    """``connection.tls`` from the --tls-* options (the files' PEM contents)."""
    if args.tls_ca_file is None:
        if args.tls_cert_file or args.tls_key_file:
            raise LoadtowerError("--tls-cert-file/--tls-key-file need --tls-ca-file")
        return None
    if (args.tls_cert_file is None) != (args.tls_key_file is None):
        raise LoadtowerError("--tls-cert-file and --tls-key-file go together")
    pems: dict[str, str | None] = {}
    for flag, path in (("ca", args.tls_ca_file), ("cert", args.tls_cert_file),
                       ("key", args.tls_key_file)):
        try:
            pems[flag] = path.read_text() if path is not None else None
        except (OSError, UnicodeDecodeError) as exc:
            raise LoadtowerError(f"--tls-{flag}-file {path}: {exc}") from None
    return {"ca_pem": pems["ca"], "cert_pem": pems["cert"], "key_pem": pems["key"],
            "verify_hostname": not args.no_tls_verify_hostname,
            "ca_file": str(args.tls_ca_file)}


def _spec(args: argparse.Namespace) -> PhaseSpec:
    # deferred: the models load pydantic; `loadtower --help` imports this command module
    from loadtower.scenarios.models import Dataset, Target, Workload

    path = Path(args.workload)
    if path.suffix == ".toml" and path.exists():
        # deferred: the loader loads pydantic; `loadtower --help` imports this command module
        from loadtower.scenarios.loader import load_scenario

        scenario, source = load_scenario(path)
        # deferred: scenario_files loads pydantic and duckdb; `loadtower --help` imports this
        # command module
        from loadtower.scenarios.workloads.scenario_files import load_scenario_workloads

        files = load_scenario_workloads(scenario, path, source)
        name, workload = next(iter(scenario.workloads.items()))
        target, dataset = scenario.target, scenario.dataset
    else:
        files = {}
        name = args.workload
        extra = {"ttl": args.ttl} if args.ttl else {}
        workload = Workload(preset=name, **extra)
        target = Target.model_validate({  # the engine's own keys too (a kind's target_keys)
            "keyspace": args.keyspace, "consistency": args.consistency, "driver": args.driver,
            "native_io": args.native_io, "local_dc": args.local_dc})
        dataset = Dataset(records=args.records, fields=args.fields, field_size=args.field_size)
    plain = target.model_dump(mode="json")
    if args.local_dc and plain.get("local_dc") is None:  # a scenario's own, else --local-dc
        plain["local_dc"] = args.local_dc
    tls = _tls(args)
    spec: PhaseSpec = {
        "engine": args.engine,
        "connection": cast(ConnectionOptions, {"tls": tls} if tls else {}),
        "target": cast(TargetSpec, plain),
        "dataset": cast(DatasetSpec, dataset.model_dump(mode="json")),
        "workload": cast(WorkloadSpec, workload.model_dump(mode="json")),
        "workload_name": name,
    }
    # deferred: target_spec loads pydantic and duckdb; `loadtower --help` imports this command
    # module
    from loadtower.scenarios.workloads.target_spec import (
        builtin_workload_file,
        render_for_target,
        runnable,
    )

    if name in files:
        # a workload file (a built-in: its shipped file), rendered for this load's engine
        rendered = render_for_target(files[name], workload, args.engine, target)
        spec["workload_file"] = runnable(rendered, files[name].file, name)
    else:  # a preset by name: its shipped file
        spec["workload_file"] = builtin_workload_file(args.engine, target, dataset, workload)
    return spec


def run(args: argparse.Namespace) -> int:
    # deferred: the local load loads pyarrow and numpy (the HDR decoding); `loadtower --help`
    # imports this command module
    from loadtower.orchestrator.standalone_load import run_agent

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
