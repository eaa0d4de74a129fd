"""`loadtower sandbox`: fetch, up, status, down, node, clickhouse, mongodb."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from loadtower.defaults import default_sandbox_dir
from loadtower.errors import LoadtowerError
from loadtower.sandbox import clickhouse_service as ch
from loadtower.sandbox import inventory_file
from loadtower.sandbox import mongodb_service as mongo

HELP = (
    "Start, inspect and stop a local sandbox of real services "
    "(Cassandra, ClickHouse engine, FerretDB for MongoDB, Prometheus, node_exporter, sshd)."
)
DESCRIPTION = """A local sandbox of REAL services on loopback: N Cassandra 5.0.6 nodes
(127.0.0.1 .. 127.0.0.N, PasswordAuthenticator on, a random password for the
'loadtower' role), node_exporter, Prometheus scraping it every second, and an
OpenSSH sshd on a free high port with generated keys. When chdb is importable
(pip install chdb-core) it also runs a ClickHouse host: ClickHouse's real engine
(chdb) behind a small HTTP endpoint on node 1's address (port 8123 when free), with
its own login. ClickHouse TIMINGS FROM THAT ENDPOINT MEAN NOTHING (one Python HTTP
server, one query at a time): it checks what runs and what is recorded, not speed.
When FerretDB is built (`fetch` builds it once when Go is on PATH) it also runs a
MongoDB host: FerretDB v1.24.2 on SQLite on node 1's address (port 27017 when free),
login 'loadtower' with a random password. MONGODB TIMINGS FROM IT ARE FERRETDB'S,
NOT MONGODB'S. `up` writes DIR/inventory.toml describing these hosts (DB nodes, one
standby node for scale-out, the ClickHouse host ch1, the MongoDB host mongo1, one
load agent).

examples:
  loadtower sandbox fetch                       # Cassandra jars + FerretDB into ~/.cache/loadtower
  loadtower sandbox up --dir .sandbox --cassandra-nodes 2 --json
  loadtower sandbox up --dir .sandbox --no-clickhouse   # without the ClickHouse host
  loadtower sandbox up --dir /tmp/tls --tls --first-address 127.0.0.21  # CQL over TLS
  loadtower sandbox status --dir .sandbox --json   # exit 1 when not up
  loadtower sandbox node stop --dir .sandbox 2
  loadtower sandbox clickhouse restart --dir .sandbox
  loadtower sandbox mongodb kill --dir .sandbox     # then: mongodb start
  loadtower sandbox down --dir .sandbox

  # the cluster sandbox: hosts in network namespaces, 2 DCs, TLS, SSH as ltsandbox
  loadtower sandbox up --cluster --dir .cluster --json
  loadtower sandbox node partition --dir .cluster 3    # db3's DATA link down
  loadtower sandbox down --dir .cluster               # everything, also after a crash
(docs/cluster-sandbox.md)"""

NODE_ACTIONS = (
    *inventory_file.NODE_ACTIONS,  # start stop kill pause resume flush compact status
    "decommission",  # a standby node that joined: stream its data back, make it fresh again
    "partition",  # cluster sandbox only: the node's host loses its DATA link
    "heal",  # cluster sandbox only: the DATA link back up
)
CLUSTER_HELP = (
    "the cluster sandbox (root): hosts db1-db3, agent1, agent2 (and ch1) in network "
    "namespaces, Cassandra in two DCs with TLS, SSH as ltsandbox (docs/cluster-sandbox.md); "
    "status/node/down find a cluster directory by themselves"
)
CLICKHOUSE_ACTIONS = ch.ACTIONS
MONGODB_ACTIONS = mongo.ACTIONS
REQUIRE_MONGODB_ENV = "LOADTOWER_REQUIRE_MONGODB"  # CI: a sandbox without FerretDB is an error


def _dir_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--dir",
        type=Path,
        default=None,
        help="sandbox directory (default: $LOADTOWER_SANDBOX or ./.sandbox)",
    )


def _cluster_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cluster", action="store_true", help=CLUSTER_HELP)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    fetch = sub.add_parser(
        "fetch",
        help="download the Cassandra jars once (Maven Central); build FerretDB once "
        "(Go module proxy) when Go is on PATH",
    )
    fetch.add_argument(
        "--require-mongodb",
        action="store_true",
        default=os.environ.get(REQUIRE_MONGODB_ENV) == "1",
        help=f"fail when FerretDB cannot be built (no Go) instead of going on without "
        f"MongoDB (default: on when ${REQUIRE_MONGODB_ENV}=1, as in CI)",
    )
    up = sub.add_parser("up", help="start the sandbox and wait until every service answers")
    _dir_arg(up)
    up.add_argument("--cassandra-nodes", type=int, default=1, help="running nodes (default 1)")
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
    up.add_argument("--heap", default="1G", help="JVM heap per Cassandra node (default 1G)")
    up.add_argument("--timeout", type=float, default=300.0, help="seconds to wait per service")
    up.add_argument(
        "--clickhouse",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="run the ClickHouse host (chdb endpoint; its timings mean nothing); "
        "default: when chdb is importable. --no-clickhouse stops a running one",
    )
    up.add_argument(
        "--mongodb",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="run the MongoDB host (FerretDB on SQLite; its timings are FerretDB's, not "
        "MongoDB's); default: when FerretDB is built. --no-mongodb stops a running one",
    )
    up.add_argument(
        "--tls",
        action="store_true",
        help="Cassandra with TLS: a CA, node and client certificates in DIR/tls/, client "
        "encryption required, internode encryption between DCs; the inventory carries "
        "the tls keys",
    )
    up.add_argument("--json", action="store_true", help="print one JSON object")
    _cluster_arg(up)
    status = sub.add_parser("status", help="show what runs; exit 1 when the sandbox is not up")
    _dir_arg(status)
    _cluster_arg(status)
    status.add_argument("--json", action="store_true", help="print one JSON object")
    down = sub.add_parser("down", help="stop everything the sandbox started (safe when idle)")
    _dir_arg(down)
    _cluster_arg(down)
    node = sub.add_parser("node", help="act on one Cassandra node: " + ", ".join(NODE_ACTIONS))
    node.add_argument(
        "node_action", choices=NODE_ACTIONS, metavar="NODE_ACTION", help=", ".join(NODE_ACTIONS)
    )
    _dir_arg(node)
    _cluster_arg(node)
    node.add_argument("index", type=int, help="node number (1 = 127.0.0.1)")
    node.add_argument("--no-wait", action="store_true", help="start: do not wait for CQL")
    clickhouse = sub.add_parser(
        "clickhouse",
        help="act on the ClickHouse host (chdb endpoint): " + ", ".join(CLICKHOUSE_ACTIONS),
    )
    clickhouse.add_argument(
        "clickhouse_action",
        choices=CLICKHOUSE_ACTIONS,
        metavar="CLICKHOUSE_ACTION",
        help=", ".join(CLICKHOUSE_ACTIONS) + " (status: exit 3 when stopped)",
    )
    _dir_arg(clickhouse)
    mongodb = sub.add_parser(
        "mongodb",
        help="act on the MongoDB host (FerretDB): " + ", ".join(MONGODB_ACTIONS),
    )
    mongodb.add_argument(
        "mongodb_action",
        choices=MONGODB_ACTIONS,
        metavar="MONGODB_ACTION",
        help=", ".join(MONGODB_ACTIONS) + " (status: exit 3 when stopped)",
    )
    _dir_arg(mongodb)


def _print_info(info: dict) -> None:
    cass = info.get("cassandra", {})
    print(f"sandbox {info['dir']}: {'UP' if info.get('up') else 'NOT UP'}")
    for n in cass.get("nodes", []):
        print(f"  cassandra node {n['index']}  {n['address']}:{cass['port']}  {n['state']}")
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
        print(f"  login          {cass['username']} / password in {cass['password_file']}")
        if cass.get("tls"):
            print(f"  tls            CA {cass['tls']['ca']}, client certificate "
                  f"{cass['tls']['cert']} (client encryption required)")
        ch = info.get("clickhouse") or {}
        if ch.get("enabled"):
            print(
                f"  clickhouse     {ch['host']}  {ch['url']}  {'up' if ch['up'] else 'down'}  "
                f"({ch['engine']}; login {ch['username']} / password in {ch['password_file']})"
            )
        mongo = info.get("mongodb") or {}
        if mongo.get("enabled"):
            print(
                f"  mongodb        {mongo['host']}  {mongo['url']}  "
                f"{'up' if mongo['up'] else 'down'}  ({mongo['engine']}; login "
                f"{mongo['username']} / password in {mongo['password_file']})"
            )
        elif mongo.get("reason"):
            print(f"  mongodb        off: {mongo['reason']}")
        print(f"  inventory      {info['inventory']}")
        if ch.get("enabled"):
            print(f"WARNING: {ch['warning']}.")
        if mongo.get("enabled"):
            print(f"WARNING: {mongo['warning']}.")


def run(args: argparse.Namespace) -> int:
    from loadtower.sandbox import Sandbox
    from loadtower.sandbox.jars import fetch_jars

    if args.action == "fetch":
        print(f"Cassandra jars in {fetch_jars(quiet=False)}")
        _fetch_ferretdb(args.require_mongodb)
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
            cassandra_nodes=args.cassandra_nodes,
            standby=args.standby,
            first_address=args.first_address,
            heap=args.heap,
            clickhouse=args.clickhouse,
            mongodb=args.mongodb,
            tls=args.tls,
        )
        info = sandbox.up(timeout=args.timeout)
        if args.json:
            for name in ("clickhouse", "mongodb"):
                if info.get(name, {}).get("enabled"):
                    print(f"WARNING: {info[name]['warning']}.", file=sys.stderr)
            if info.get("mongodb", {}).get("reason"):
                print(f"note: {info['mongodb']['reason']}", file=sys.stderr)
    else:
        sandbox = Sandbox(directory)
    if args.action == "down":
        print("sandbox stopped" if sandbox.down() else "sandbox was not running")
        return 0
    if args.action == "node":
        print(sandbox.node(args.node_action, args.index, wait=not args.no_wait), end="")
        return 0
    if args.action == "clickhouse":
        running, line = sandbox.clickhouse_action(args.clickhouse_action)
        print(line)
        return 3 if args.clickhouse_action == "status" and not running else 0
    if args.action == "mongodb":
        running, line = sandbox.mongodb_action(args.mongodb_action)
        print(line)
        return 3 if args.mongodb_action == "status" and not running else 0
    if args.action == "status":
        info = sandbox.info()
    if args.json:
        print(json.dumps(info, indent=2))
    else:
        _print_info(info)
    return 0 if info.get("up") else 1


def _is_cluster(args: argparse.Namespace, directory: Path) -> bool:
    from loadtower.sandbox.cluster_layout import cluster_dir
    from loadtower.sandbox.cluster_sandbox import owner

    if getattr(args, "cluster", False):
        return True
    if args.action == "up":
        return False
    return cluster_dir(Path(directory)).is_dir() or owner() == Path(directory).resolve()


def _run_cluster(args: argparse.Namespace, directory: Path) -> int:
    from loadtower.sandbox.cluster_sandbox import ClusterSandbox

    if args.action == "up":
        if args.cassandra_nodes != 1 or args.standby != 1 or args.first_address != "127.0.0.1":
            print(
                "loadtower: --cluster has a fixed layout (db1, db3 running, db2 standby): "
                "drop --cassandra-nodes/--standby/--first-address",
                file=sys.stderr,
            )
            return 2
        sandbox = ClusterSandbox(directory, heap=args.heap, clickhouse=args.clickhouse)
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
    cass = info.get("cassandra", {})
    for n in cass.get("nodes", []):
        print(
            f"  cassandra node {n['index']} {n['host']} {n['address']}:{cass['port']} "
            f"{n['dc']}/{n['rack']}  {n['state']}"
        )
    if info.get("up"):
        print(f"  prometheus     {info['prometheus']['url']}")
        print(f"  inventory      {info['inventory']}")
    for line in info.get("leftovers", []):
        print(f"  leftover       {line}")


def _fetch_ferretdb(require: bool) -> None:
    """Build FerretDB once (cached) when Go can; without Go say so in one line, or fail
    when ``require`` (CI must test against it)."""
    from loadtower.sandbox import ferretdb

    if ferretdb.available():
        print(f"FerretDB {ferretdb.FERRETDB_VERSION} in {ferretdb.binary_path()}")
        return
    go, why_not = ferretdb.usable_go()
    if go is None:
        if require:
            raise LoadtowerError(f"{why_not} (--require-mongodb / ${REQUIRE_MONGODB_ENV}=1)")
        print(f"{why_not}: the sandbox runs without MongoDB")
        return
    print(f"building FerretDB {ferretdb.FERRETDB_VERSION} with {go} (once; cached)...", flush=True)
    started = time.monotonic()
    path = ferretdb.build()
    print(f"FerretDB {ferretdb.FERRETDB_VERSION} built in {time.monotonic() - started:.0f} s: {path}")
