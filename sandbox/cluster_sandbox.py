"""The cluster sandbox (`loadtower sandbox up --cluster`): hosts in network namespaces.

Each host (db1, db2, db3, agent1, agent2, and one per engine service that names a
``cluster_host`` and can run here, e.g. ch1) is a network namespace ``ltc-NAME`` with a
DATA and a MGMT address, its own sshd (user ltsandbox) and its own cgroup
``loadtower/NAME`` (sandbox/netns.py, host_*.py). On top of those this module starts
three nodes of the ring engine (sandbox/ring_engine.py) in two DCs with TLS (db1 dc1/r1
the seed, db3 dc2/r1, db2 dc1/r2 the standby for scale-out), Prometheus and
node_exporter in the root namespace, those engine services (sandbox/engine_services.py),
and writes DIR/inventory.toml (cluster_inventory). Every step is recorded with its
seconds in DIR/cluster/state.json.

``down`` removes everything by name (host_teardown.remove_all), so it also works after
a SIGKILL of ``up``. One cluster per machine: the names are fixed; /run/loadtower-
cluster.dir names the directory whose cluster is up.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import psutil

from loadtower.errors import LoadtowerError
from loadtower.sandbox import (
    cluster_actions,
    cluster_inventory,
    cluster_nodes,
    cluster_sudoers,
    cluster_tls,
    engine_services,
    host_cgroup,
    host_sshd,
    host_teardown,
    host_user,
    metrics_services,
    netns,
    ssh_server,
)
from loadtower.sandbox import cluster_state as cst
from loadtower.sandbox import processes as procs
from loadtower.sandbox.cluster_layout import (
    DB_HOSTS,
    OWNER_FILE,
    SEED,
    SSH_PORT,
    ClusterHost,
    cluster_dir,
    hosts,
    service_host,
)
from loadtower.sandbox.cluster_state import ClusterNode, ClusterState
from loadtower.sandbox.engine_services import EngineService
from loadtower.sandbox.ring_engine import ring_engine
from loadtower.sandbox.state import locked
from loadtower.sandbox.tls_certs import TlsFiles

ROOT_SERVICES = ("node_exporter", "prometheus")


def owner() -> Path | None:
    """The directory whose cluster sandbox is up on this machine, if any."""
    try:
        return Path(OWNER_FILE.read_text().strip())
    except OSError:
        return None


class ClusterSandbox:
    def __init__(
        self,
        directory: Path | str,
        heap: str = "1G",
        engines: Mapping[str, bool | None] | None = None,
        lean: bool = False,
    ) -> None:
        """``engines``: an engine service's name -> run its host (`--NAME` / `--no-NAME`;
        absent or None: when it can run here); only services with a ``cluster_host``.
        ``lean``: the ring's nodes tuned for short runs (`up --lean`), kept in the state."""
        self.dir = Path(directory).resolve()
        self.heap = heap
        self.lean = lean
        self.engines = dict(engines or {})
        self.ring = ring_engine()

    # ---- up -------------------------------------------------------------------------
    def up(self, timeout: float = 300.0, say: Callable[[str], None] | None = None) -> dict:
        say = say or (lambda line: print(line, file=sys.stderr))
        cluster_sudoers.check_path("the sandbox directory", self.dir)
        services = [svc for svc in engine_services.cluster_services()
                    if engine_services.wanted(svc, self.engines.get(svc.name))]
        self._refuse_other_owner()
        self.dir.mkdir(parents=True, exist_ok=True)
        with locked(self.dir):
            old = cst.load(self.dir)
            if old and old.ready and self._alive(old):
                cluster_inventory.write(self.dir, old)
                return self.info()
            state = ClusterState(hosts=[h.name for h in hosts(services)], lean=self.lean)
            try:
                with self._step(state, "jars and java"):
                    self.ring.fetch()
                    self.ring.check_runtime()
                with self._step(state, "leftovers of an earlier cluster"):
                    self._remove_leftovers(old, say)
                OWNER_FILE.write_text(f"{self.dir}\n")
                cst.save(self.dir, state)
                self._start(state, services, timeout)
            except BaseException:
                self._teardown(state)
                raise
        return self.info()

    def _start(self, state: ClusterState, services: list[EngineService], timeout: float
               ) -> None:
        names = state.hosts
        with self._step(state, "user ltsandbox and sudo rules"):
            host_user.ensure_user()
            host_user.install_sudoers(cluster_sudoers.rules(self.dir))
        with self._step(state, f"fabric and {len(names)} hosts (namespaces, veths, cgroups)"):
            netns.create_fabric()
            for name in names:
                netns.add_host(name)
                host_cgroup.create(name)
        with self._step(state, "sshd per host"):
            self._start_sshd(state, timeout)
        with self._step(state, "TLS material"):
            tls = cluster_tls.files(self.dir)
            state.tls = {
                "ca": str(tls.ca),
                "client_cert": str(tls.client_cert),
                "client_key": str(tls.client_key),
            }
        for host in DB_HOSTS:
            state.nodes[host.node] = ClusterNode(host.name, standby=host.standby)
        for host in DB_HOSTS:
            if not host.standby:
                with self._step(state, f"{self.ring.title} {host.name} ({host.dc}/{host.rack})"):
                    self._start_node(state, host, tls, timeout)
        with self._step(state, f"{self.ring.title} login (in both DCs, over TLS)"):
            self._login(tls)
        with self._step(state, "Prometheus and node_exporter"):
            self._start_metrics(state, timeout)
        for svc in services:
            with self._step(state, f"{svc.title} host {service_host(svc).name}"):
                self._start_service(state, svc, timeout)
        cluster_inventory.write(self.dir, state)
        state.ready = True
        cst.save(self.dir, state)

    @contextmanager
    def _step(self, state: ClusterState, name: str) -> Iterator[None]:
        start = time.monotonic()
        yield
        state.steps.append({"step": name, "seconds": round(time.monotonic() - start, 2)})
        if cst.path(self.dir).parent.exists():
            cst.save(self.dir, state)

    def _refuse_other_owner(self) -> None:
        other = owner()
        if other is None or other == self.dir:
            return
        if host_teardown.leftovers():
            raise LoadtowerError(
                f"the cluster sandbox of {other} is up (one per machine): "
                f"`loadtower sandbox down --cluster --dir {other}` first"
            )

    def _remove_leftovers(self, old: ClusterState | None, say: Callable[[str], None]) -> None:
        if old is not None:
            self._stop_root_services(old)
        self._kill_mentioning()
        left = host_teardown.leftovers()
        if left:
            removed = host_teardown.remove_all()
            say(
                f"removed {len(removed)} leftovers of an earlier cluster sandbox "
                f"({', '.join(left[:4])}{', ...' if len(left) > 4 else ''})"
            )

    def _start_sshd(self, state: ClusterState, timeout: float) -> None:
        ssh = host_sshd.prepare(self.dir, state.hosts)
        state.ssh = {k: v for k, v in ssh.items() if k != "configs"}
        logs = cluster_dir(self.dir) / "logs"
        for name in state.hosts:
            argv = host_cgroup.wrap(name, host_sshd.command(str(ssh["configs"][name])))
            state.services[f"sshd-{name}"] = procs.spawn(argv, logs / f"sshd-{name}.log")
            cst.save(self.dir, state)
        for name in state.hosts:
            address = netns.mgmt_address(name)
            procs.wait_ready(
                f"sshd of {name} ({address}:{SSH_PORT})",
                state.services[f"sshd-{name}"],
                lambda a=address: ssh_server.banner(a, SSH_PORT),  # type: ignore[misc]
                min(timeout, 60.0),
            )

    def _start_node(
        self, state: ClusterState, host: ClusterHost, tls: TlsFiles, timeout: float
    ) -> None:
        node = state.nodes[host.node]
        spec = cluster_nodes.spec(self.dir, host, tls, self.heap, state.lean)
        node.process = cluster_nodes.spawn(spec, host)
        cst.save(self.dir, state)
        cluster_actions.wait_client_port(host, node, timeout)

    def _login(self, tls: TlsFiles) -> None:
        """The sandbox's role, made through the seed once its login is readable in every
        DC (the ring engine's ``spread_login``)."""
        client = cluster_tls.client(tls)
        seed, port = netns.data_address(SEED), self.ring.native_port
        if self.ring.can_login(seed, port, self.dir, client):
            return
        host = next(h for h in DB_HOSTS if h.name == SEED)
        admin = cluster_nodes.admin_tool(cluster_nodes.spec(self.dir, host, tls, self.heap), host)
        self.ring.spread_login(seed, port, [h.dc for h in DB_HOSTS], client, admin, SEED)
        self.ring.ensure_login(seed, port, self.dir, tls=client)

    def _start_metrics(self, state: ClusterState, timeout: float) -> None:
        taken: set[int] = set()
        for name, preferred in (("node_exporter", 9100), ("prometheus", 9090)):
            state.ports[name] = procs.free_port(["127.0.0.1"], preferred, taken)
            taken.add(state.ports[name])
        home = cluster_dir(self.dir) / "prometheus"
        logs = cluster_dir(self.dir) / "logs"
        commands = {
            "node_exporter": metrics_services.node_exporter_command(state.ports["node_exporter"]),
            "prometheus": metrics_services.prometheus_command(
                home, state.ports["prometheus"], state.ports["node_exporter"]
            ),
        }
        urls = {
            "node_exporter": f"http://127.0.0.1:{state.ports['node_exporter']}/metrics",
            "prometheus": f"http://127.0.0.1:{state.ports['prometheus']}/-/ready",
        }
        for name in ROOT_SERVICES:
            state.services[name] = procs.spawn(commands[name], logs / f"{name}.log")
            cst.save(self.dir, state)
        for name in ROOT_SERVICES:
            procs.wait_ready(
                name,
                state.services[name],
                lambda u=urls[name]: metrics_services.http_ok(u),  # type: ignore[misc]
                min(timeout, 60.0),
            )

    def _start_service(self, state: ClusterState, svc: EngineService, timeout: float) -> None:
        """An engine service on its own host, its preferred port (the host's alone)."""
        name, port = service_host(svc).name, svc.preferred_port
        address = netns.data_address(name)
        argv = svc.argv(self.dir, address, port, data_root=cluster_dir(self.dir))
        log = cluster_dir(self.dir) / "logs" / f"{svc.name}.log"
        state.services[svc.name] = procs.spawn(host_cgroup.wrap(name, argv), log,
                                               env=svc.environment(self.dir))
        cst.save(self.dir, state)
        procs.wait_ready(
            f"{svc.server} on {name} {address}:{port}",
            state.services[svc.name],
            lambda: svc.ping(address, port),
            min(timeout, 60.0),
        )

    # ---- status / info ---------------------------------------------------------------
    def _alive(self, state: ClusterState) -> bool:
        services = all(procs.is_alive(r) for r in state.services.values())
        nodes = all(procs.is_alive(n.process) for n in state.nodes.values() if not n.standby)
        return bool(state.services) and services and nodes

    def info(self) -> dict:
        state = cst.load(self.dir)
        if state is None:
            left = host_teardown.leftovers()
            return {"dir": str(self.dir), "cluster": True, "up": False, "leftovers": left}
        up = state.ready and self._alive(state)
        host_rows = []
        for name in state.hosts:
            row: dict[str, object] = {
                "name": name,
                "namespace": netns.namespace(name),
                "data_address": netns.data_address(name),
                "mgmt_address": netns.mgmt_address(name),
                "cgroup": f"loadtower/{name}",
                "sshd": procs.is_alive(state.services.get(f"sshd-{name}")),
            }
            try:
                cpu_ns, mem = host_cgroup.usage(name)
                row["cpu_seconds"], row["memory_bytes"] = round(cpu_ns / 1e9, 2), mem
            except (OSError, LoadtowerError):
                row["cpu_seconds"], row["memory_bytes"] = None, None
            host_rows.append(row)
        nodes = [
            {
                "index": h.node,
                "host": h.name,
                "address": netns.data_address(h.name),
                "dc": h.dc,
                "rack": h.rack,
                "standby": h.standby,
                "state": cluster_nodes.status(state, h),
            }
            for h in DB_HOSTS
        ]
        ports = state.ports
        info: dict = {
            "dir": str(self.dir),
            "cluster": True,
            "up": up,
            "inventory": str(self.dir / "inventory.toml"),
            "hosts": host_rows,
            self.ring.name: {
                "port": self.ring.native_port,
                "nodes": nodes,
                "username": self.ring.username,
                "password_file": str(self.ring.password_file(self.dir)),
                "tls": state.tls,
            },
            "prometheus": {
                "url": f"http://127.0.0.1:{ports.get('prometheus')}",
                "up": procs.is_alive(state.services.get("prometheus")),
            },
            "node_exporter": {
                "instance": f"127.0.0.1:{ports.get('node_exporter')}",
                "up": procs.is_alive(state.services.get("node_exporter")),
            },
            "ssh": {**state.ssh, "user": cluster_sudoers.USER, "port": SSH_PORT},
            **{svc.name: self._service_info(state, svc)
               for svc in engine_services.cluster_services()},
            "steps": state.steps,
            "leftovers": [] if up else host_teardown.leftovers(),
        }
        return info

    def _service_info(self, state: ClusterState, svc: EngineService) -> dict:
        """An engine service's `status --json` entry."""
        if svc.name not in state.services:
            return {"enabled": False, "up": False}
        name, port = service_host(svc).name, svc.preferred_port
        address = netns.data_address(name)
        return {
            "enabled": True,
            "host": name,
            "address": address,
            "port": port,
            "url": svc.url(address, port),
            "username": svc.username,
            "password_file": str(svc.password_file(self.dir)),
            "up": procs.is_alive(state.services.get(svc.name)),
            "warning": svc.warning,
        }

    # ---- node actions ----------------------------------------------------------------
    def node(self, action: str, number: int, wait: bool = True, timeout: float = 300.0) -> str:
        return cluster_actions.node_action(
            self.dir, cluster_tls.files(self.dir), action, number, wait, timeout, self.heap
        )

    # ---- down ------------------------------------------------------------------------
    def down(self) -> bool:
        """Remove everything of the cluster; False when nothing was there (idle-safe)."""
        other = owner()
        if other is not None and other != self.dir and host_teardown.leftovers():
            raise LoadtowerError(
                f"the cluster sandbox up on this machine is {other}'s, not {self.dir}'s: "
                f"`loadtower sandbox down --cluster --dir {other}`"
            )
        self.dir.mkdir(parents=True, exist_ok=True)
        with locked(self.dir):
            state = cst.load(self.dir)
            removed = self._teardown(state)
        return bool(removed)

    def _teardown(self, state: ClusterState | None) -> list[str]:
        removed: list[str] = []
        if state is not None:
            removed += self._stop_root_services(state)
        removed += self._kill_mentioning()
        removed += host_teardown.remove_all()
        if owner() in (self.dir, None) or not host_teardown.leftovers():
            OWNER_FILE.unlink(missing_ok=True)
        if state is not None:
            for node in state.nodes.values():
                node.process, node.paused, node.partitioned = None, False, False
            state.services = {k: None for k in state.services}
            state.ready = False
            cst.save(self.dir, state)
        return removed

    def _stop_root_services(self, state: ClusterState) -> list[str]:
        stopped = []
        for name in ROOT_SERVICES:
            record = state.services.get(name)
            if procs.is_alive(record):
                procs.stop(record)
                stopped.append(f"process {name}")
        return stopped

    def _kill_mentioning(self) -> list[str]:
        """Root-namespace processes whose command line names DIR/cluster (Prometheus
        started by an `up` that was killed before it could record it)."""
        root = str(cluster_dir(self.dir)) + "/"
        me = os.getpid()
        found = []
        for proc in psutil.process_iter(["pid", "cmdline"]):
            if proc.pid == me:
                continue
            if any(root in arg for arg in proc.info["cmdline"] or []):
                found.append(proc)
        for proc in found:
            try:
                proc.terminate()
            except psutil.Error:
                pass
        _, alive = psutil.wait_procs(found, timeout=15)
        for proc in alive:
            try:
                proc.kill()
            except psutil.Error:
                pass
        return [f"process {p.pid}" for p in found]
