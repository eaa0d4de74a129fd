"""`loadtower sandbox`: fetch, up, status, down, node (the ring's nodes:
sandbox/ring_engine.py), and one command per engine host (sandbox/engine_services.py)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import textwrap
from pathlib import Path

from loadtower.defaults import default_sandbox_dir
from loadtower.sandbox import Sandbox, engine_services, inventory_file
from loadtower.sandbox.cluster_layout import cluster_dir
from loadtower.sandbox.ring_engine import ring_engine

HELP = (
    "Start, inspect and stop a local sandbox of real services (the ring's database nodes, "
    "a host per engine that has one, Prometheus, node_exporter, sshd)."
)
CLUSTER_EXAMPLES = """
  # the cluster sandbox: hosts in network namespaces, 2 DCs, TLS, SSH as ltsandbox
  loadtower sandbox up --cluster --dir .cluster --json
  loadtower sandbox node partition --dir .cluster 3    # db3's DATA link down
  loadtower sandbox down --dir .cluster               # everything, also after a crash
(docs/cluster-sandbox.md)"""


def description() -> str:
    """`sandbox --help`'s text, in the ring engine's and the engine hosts' own words."""
    ring, services = ring_engine(), engine_services.services()
    prose = " ".join([
        f"A local sandbox of REAL services on loopback: {ring.about}, node_exporter, "
        "Prometheus scraping it every second, and an OpenSSH sshd on a free high port with "
        "generated keys.",
        *(svc.about for svc in services if svc.about),
        "`up` writes DIR/inventory.toml describing these hosts (DB nodes, one standby node "
        "for scale-out, " + "".join(f"the {svc.title} host {svc.host}, " for svc in services)
        + "one load agent).",
    ])
    examples = [
        "  loadtower sandbox fetch                       # into ~/.cache/loadtower",
        f"  loadtower sandbox up --dir .sandbox {ring.nodes_flag} 2 --json",
        *(f"  loadtower sandbox up --dir .sandbox --no-{svc.name}   # without the {svc.title} host"
          for svc in services[:1]),
        "  loadtower sandbox up --dir /tmp/tls --tls --first-address 127.0.0.21  # over TLS",
        "  loadtower sandbox status --dir .sandbox --json   # exit 1 when not up",
        "  loadtower sandbox node stop --dir .sandbox 2",
        *(f"  loadtower sandbox {svc.name} restart --dir .sandbox" for svc in services[:1]),
        *(f"  loadtower sandbox {svc.name} kill --dir .sandbox     # then: {svc.name} start"
          for svc in services[1:2]),
        "  loadtower sandbox down --dir .sandbox",
    ]
    return (textwrap.fill(prose, width=84) + "\n\nexamples:\n" + "\n".join(examples) + "\n"
            + CLUSTER_EXAMPLES)


NODE_ACTIONS = (
    *inventory_file.NODE_ACTIONS,  # start stop kill pause resume flush compact status
    "decommission",  # a standby node that joined: stream its data back, make it fresh again
    "partition",  # cluster sandbox only: the node's host loses its DATA link
    "heal",  # cluster sandbox only: the DATA link back up
)
ENGINE_ACTIONS = engine_services.ACTIONS
# `up --lean` by default when this is "1": tests/conftest.py sets it for the whole suite
LEAN_ENV = "LOADTOWER_SANDBOX_LEAN"


def _cluster_help() -> str:
    extra = [svc.cluster_host for svc in engine_services.cluster_services()]
    return (
        "the cluster sandbox (root): hosts db1-db3, agent1, agent2"
        f"{' (and ' + ', '.join(map(str, extra)) + ')' if extra else ''} in network "
        f"namespaces, {ring_engine().title} in two DCs with TLS, SSH as ltsandbox "
        "(docs/cluster-sandbox.md); status/node/down find a cluster directory by themselves"
    )


def _dir_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--dir",
        type=Path,
        default=None,
        help="sandbox directory (default: $LOADTOWER_SANDBOX or ./.sandbox)",
    )


def _cluster_arg(p: argparse.ArgumentParser, text: str) -> None:
    p.add_argument("--cluster", action="store_true", help=text)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    ring, cluster_help = ring_engine(), _cluster_help()
    parser.description = description()  # in the engines' words (the CLI's is a placeholder)
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    fetch = sub.add_parser(
        "fetch",
        help=f"{ring.fetch_help}; build or download what each engine host needs, once, "
        "when this machine can",
    )
    for svc in engine_services.services():
        if svc.fetch_help:
            env = engine_services.REQUIRE_ENV.format(svc.name.upper())
            fetch.add_argument(
                f"--require-{svc.name}",
                dest=f"require_{svc.name}",
                action="store_true",
                default=os.environ.get(env) == "1",
                help=f"{svc.fetch_help} (default: on when ${env}=1, as in CI)",
            )
    up = sub.add_parser("up", help="start the sandbox and wait until every service answers")
    _dir_arg(up)
    up.add_argument(ring.nodes_flag, dest="nodes", type=int, default=1,
                    metavar=f"{ring.name.upper()}_NODES", help="running nodes (default 1)")
    up.add_argument(
        "--standby",
        type=int,
        default=1,
        help="extra configured-but-stopped nodes for scale-out (default 1)",
    )
    up.add_argument(
        "--first-address",
        default="127.0.0.1",
        help="loopback address of node 1; node i gets the i-th next (default 127.0.0.1)",
    )
    up.add_argument("--heap", default="1G", help=f"heap per {ring.title} node (default 1G)")
    up.add_argument("--timeout", type=float, default=300.0, help="seconds to wait per service")
    for svc in engine_services.services():  # --NAME / --no-NAME
        up.add_argument(
            f"--{svc.name}",
            action=argparse.BooleanOptionalAction,
            default=None,
            help=svc.up_help,
        )
    up.add_argument(
        "--tls",
        action="store_true",
        help=f"{ring.title} with TLS: a CA, node and client certificates in DIR/tls/, client "
        "encryption required, internode encryption between DCs; the inventory carries "
        "the tls keys",
    )
    up.add_argument(
        "--lean",
        action=argparse.BooleanOptionalAction,
        default=os.environ.get(LEAN_ENV) == "1",
        help=f"{ring.title} nodes tuned for many short runs rather than top speed: less "
        "CPU to start and per run, a lower top rate; kept for every later start of a "
        f"node (default: on when ${LEAN_ENV}=1, as the tests set it)",
    )
    up.add_argument("--json", action="store_true", help="print one JSON object")
    _cluster_arg(up, cluster_help)
    status = sub.add_parser("status", help="show what runs; exit 1 when the sandbox is not up")
    _dir_arg(status)
    _cluster_arg(status, cluster_help)
    status.add_argument("--json", action="store_true", help="print one JSON object")
    down = sub.add_parser("down", help="stop everything the sandbox started (safe when idle)")
    _dir_arg(down)
    _cluster_arg(down, cluster_help)
    node = sub.add_parser("node", help=f"act on one {ring.title} node: " + ", ".join(NODE_ACTIONS))
    node.add_argument(
        "node_action", choices=NODE_ACTIONS, metavar="NODE_ACTION", help=", ".join(NODE_ACTIONS)
    )
    _dir_arg(node)
    _cluster_arg(node, cluster_help)
    node.add_argument("index", type=int, help="node number (1 = 127.0.0.1)")
    node.add_argument("--no-wait", action="store_true",
                      help="start: do not wait for its client port")
    for svc in engine_services.services():  # `sandbox NAME restart`, ...
        host = sub.add_parser(
            svc.name,
            help=f"act on the {svc.title} host ({svc.server}): " + ", ".join(ENGINE_ACTIONS),
        )
        host.add_argument(
            "engine_action",
            choices=ENGINE_ACTIONS,
            metavar=f"{svc.name.upper()}_ACTION",
            help=", ".join(ENGINE_ACTIONS) + " (status: exit 3 when stopped)",
        )
        _dir_arg(host)


def _print_info(info: dict) -> None:
    ring_name = ring_engine().name
    ring = info.get(ring_name, {})
    print(f"sandbox {info['dir']}: {'UP' if info.get('up') else 'NOT UP'}")
    for n in ring.get("nodes", []):
        print(f"  {ring_name} node {n['index']}  {n['address']}:{ring['port']}  {n['state']}")
    if "prometheus" in info:
        print(
            f"  prometheus     {info['prometheus']['url']}  "
            f"{'up' if info['prometheus']['up'] else 'down'}"
        )
        if info["prometheus"].get("run_target"):  # scraped as job loadtower (docs/prometheus.md)
            print(f"  run metrics    {info['prometheus']['run_target']}  served by "
                  "`loadtower run` while a run on this inventory runs")
        print(
            f"  node_exporter  {info['node_exporter']['instance']}  "
            f"{'up' if info['node_exporter']['up'] else 'down'}"
        )
        ssh = info["ssh"]
        print(
            f"  sshd           {ssh['user']}@{ssh['host']}:{ssh['port']}  "
            f"{'up' if ssh['up'] else 'down'}"
        )
        print(f"  login          {ring['username']} / password in {ring['password_file']}")
        if ring.get("tls"):
            print(f"  tls            CA {ring['tls']['ca']}, client certificate "
                  f"{ring['tls']['cert']} (client encryption required)")
        engines = [(svc.name, info.get(svc.name) or {}) for svc in engine_services.services()]
        for name, host in engines:
            if host.get("enabled"):
                print(
                    f"  {name:<14} {host['host']}  {host['url']}  "
                    f"{'up' if host['up'] else 'down'}  ({host['engine']}; login "
                    f"{host['username']} / password in {host['password_file']})"
                )
            elif host.get("reason"):
                print(f"  {name:<14} off: {host['reason']}")
        print(f"  inventory      {info['inventory']}")
        for _name, host in engines:
            if host.get("enabled"):
                print(f"WARNING: {host['warning']}.")


def run(args: argparse.Namespace) -> int:
    if args.action == "fetch":
        print(ring_engine().fetch(quiet=False))
        for svc in engine_services.services():
            svc.fetch(bool(getattr(args, f"require_{svc.name}", False)))
        return 0
    directory = args.dir or default_sandbox_dir()
    if args.action in ("up", "status", "down", "node") and _is_cluster(args, directory):
        return _run_cluster(args, directory)
    if args.action == "node" and args.node_action in ("partition", "heal"):
        print(
            f"loadtower: {args.node_action} needs the cluster sandbox (up --cluster); "
            f"{directory} is a loopback sandbox",
            file=sys.stderr,
        )
        return 2
    if args.action == "up":
        sandbox = Sandbox(
            directory,
            nodes=args.nodes,
            standby=args.standby,
            first_address=args.first_address,
            heap=args.heap,
            engines={svc.name: getattr(args, svc.name)
                     for svc in engine_services.services()},
            tls=args.tls,
            lean=args.lean,
        )
        info = sandbox.up(timeout=args.timeout)
        if args.json:
            for svc in engine_services.services():
                host = info.get(svc.name, {})
                if host.get("enabled"):
                    print(f"WARNING: {host['warning']}.", file=sys.stderr)
                elif host.get("reason"):
                    print(f"note: {host['reason']}", file=sys.stderr)
    else:
        sandbox = Sandbox(directory)
    if args.action == "down":
        print("sandbox stopped" if sandbox.down() else "sandbox was not running")
        return 0
    if args.action == "node":
        print(sandbox.node(args.node_action, args.index, wait=not args.no_wait), end="")
        return 0
    if args.action in {svc.name for svc in engine_services.services()}:
        running, line = sandbox.engine_action(args.action, args.engine_action)
        print(line)
        return 3 if args.engine_action == "status" and not running else 0
    if args.action == "status":
        info = sandbox.info()
    if args.json:
        print(json.dumps(info, indent=2))
    else:
        _print_info(info)
    return 0 if info.get("up") else 1


def _is_cluster(args: argparse.Namespace, directory: Path) -> bool:
    # deferred: the cluster sandbox loads psutil and cryptography; `loadtower --help` imports
    # this command module
    from loadtower.sandbox.cluster_sandbox import owner

    if getattr(args, "cluster", False):
        return True
    if args.action == "up":
        return False
    return cluster_dir(Path(directory)).is_dir() or owner() == Path(directory).resolve()


def _run_cluster(args: argparse.Namespace, directory: Path) -> int:
    # deferred: the cluster sandbox loads psutil and cryptography; `loadtower --help` imports
    # this command module
    from loadtower.sandbox.cluster_sandbox import ClusterSandbox

    if args.action == "up":
        if args.nodes != 1 or args.standby != 1 or args.first_address != "127.0.0.1":
            print(
                "loadtower: --cluster has a fixed layout (db1, db3 running, db2 standby): "
                f"drop {ring_engine().nodes_flag}/--standby/--first-address",
                file=sys.stderr,
            )
            return 2
        engines = {svc.name: getattr(args, svc.name, None) for svc in engine_services.services()}
        sandbox = ClusterSandbox(directory, heap=args.heap, engines=engines, lean=args.lean)
        info = sandbox.up(timeout=args.timeout)
    else:
        sandbox = ClusterSandbox(directory)
    if args.action == "down":
        print("cluster sandbox removed" if sandbox.down() else "cluster sandbox was not up")
        return 0
    if args.action == "node":
        print(sandbox.node(args.node_action, args.index, wait=not args.no_wait), end="")
        return 0
    if args.action == "status":
        info = sandbox.info()
    if args.json:
        print(json.dumps(info, indent=2))
    else:
        _print_cluster(info)
    return 0 if info.get("up") else 1


def _print_cluster(info: dict) -> None:
    print(f"cluster sandbox {info['dir']}: {'UP' if info.get('up') else 'NOT UP'}")
    for h in info.get("hosts", []):
        mem = h.get("memory_bytes")
        print(
            f"  host {h['name']:<7} data {h['data_address']:<12} ssh {h['mgmt_address']:<12} "
            f"sshd {'up' if h['sshd'] else 'down'}"
            + (f"  cgroup {mem / 2**20:.0f} MiB" if mem is not None else "")
        )
    ring_name = ring_engine().name
    ring = info.get(ring_name, {})
    for n in ring.get("nodes", []):
        print(
            f"  {ring_name} node {n['index']} {n['host']} {n['address']}:{ring['port']} "
            f"{n['dc']}/{n['rack']}  {n['state']}"
        )
    if info.get("up"):
        print(f"  prometheus     {info['prometheus']['url']}")
        print(f"  inventory      {info['inventory']}")
    for line in info.get("leftovers", []):
        print(f"  leftover       {line}")
