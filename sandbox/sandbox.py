"""The local sandbox: real nodes of the ring engine (sandbox/ring_engine.py),
node_exporter, Prometheus and sshd on loopback, plus a host for each engine whose
sandbox part can run here (sandbox/engine_services.py; some are stand-ins whose timings
are not their engine's, and each says so in its warning).

``Sandbox(dir).up()`` starts what is not running and waits until each service
answers; ``down()`` stops everything the sandbox started (safe when idle);
``info()`` is the JSON-able description other tools (and tests) connect with.
"""

from __future__ import annotations

import ipaddress
import shutil
import signal
import sys
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from loadtower.errors import LoadtowerError
from loadtower.sandbox import auth, inventory_file, metrics_services, ssh_server
from loadtower.sandbox import engine_services as hosts
from loadtower.sandbox import processes as procs
from loadtower.sandbox import state as st
from loadtower.sandbox.ring_engine import NodeCerts, NodePlace, RingNode, ring_engine

if TYPE_CHECKING:  # cryptography is imported only by a sandbox with TLS
    from loadtower.sandbox.tls_certs import TlsFiles

SERVICES = ("node_exporter", "prometheus", "sshd")


class Sandbox:
    def __init__(
        self,
        directory: Path | str,
        nodes: int = 1,
        standby: int = 1,
        first_address: str = "127.0.0.1",
        heap: str = "1G",
        engines: Mapping[str, bool | None] | None = None,
        tls: bool = False,
        lean: bool = False,
    ) -> None:
        """``nodes``: the ring's running nodes (`up --NAME-nodes`); ``engines``: an engine
        host's name -> run it (`--NAME` / `--no-NAME`; absent or None: when it can run
        here); ``tls``: the ring's nodes with client encryption required (certificates in
        DIR/tls/)."""
        self.ring = ring_engine()
        if nodes < 1:
            raise LoadtowerError(f"{self.ring.nodes_flag} must be at least 1")
        self.dir = Path(directory).resolve()
        self.nodes = nodes
        self.standby = standby
        self.first_address = ipaddress.IPv4Address(first_address)
        if not self.first_address.is_loopback:
            raise LoadtowerError(f"--first-address {first_address} is not a loopback address")
        self.heap = heap
        self.engines = dict(engines or {})
        known = {svc.name for svc in hosts.services()}
        if set(self.engines) - known:
            raise LoadtowerError(f"the sandbox has no host for {', '.join(set(self.engines) - known)}")
        self.tls = tls
        self.lean = lean

    # ---- layout -------------------------------------------------------------------------
    def _address(self, index: int) -> str:
        return str(self.first_address + (index - 1))

    def _home(self, index: int) -> Path:
        return self.dir / self.ring.name / f"node{index}"

    def _node(self, state: st.SandboxState, index: int) -> RingNode:
        node = state.nodes[index]
        return self.ring.node(NodePlace(
            index=index,
            address=node.address,
            home=self._home(index),
            seed=state.nodes[1].address,
            storage_port=state.ports["storage"],
            native_port=state.ports["native"],
            jmx_port=node.jmx_port,
            heap=self.heap,
            lean=state.lean,
            tls=self._node_tls(state, index),
        ))

    def tls_files(self, state: st.SandboxState) -> TlsFiles:
        """The CA, node and client certificates (made once, reused while valid)."""
        # deferred: cryptography is imported only by a sandbox with TLS
        from loadtower.sandbox import tls_certs

        return tls_certs.make(
            self.dir, {f"db{i}": [n.address] for i, n in sorted(state.nodes.items())}
        )

    def _node_tls(self, state: st.SandboxState, index: int) -> NodeCerts | None:
        if not state.tls:
            return None
        files = self.tls_files(state)
        return NodeCerts(ca=files.ca, combined=files.nodes[f"db{index}"].combined)

    def _client_tls(self, state: st.SandboxState) -> auth.ClientTls | None:
        if not state.tls:
            return None
        files = self.tls_files(state)
        return auth.ClientTls(ca=files.ca, cert=files.client_cert, key=files.client_key)

    def _plan(
        self, old: st.SandboxState | None, wanted: Collection[str] = ()
    ) -> st.SandboxState:
        """Ports and nodes: kept from an earlier `up` when still free, chosen afresh otherwise."""
        total = self.nodes + self.standby
        if old and len(old.nodes) >= self.nodes:
            total = max(total, len(old.nodes))
        addresses = [self._address(i) for i in range(1, total + 1)]
        prev = old.ports if old else {}
        taken: set[int] = set()

        def pick(name: str, hosts: list[str], preferred: int | None) -> int:
            port = procs.free_port(hosts, prev.get(name, preferred), taken)
            taken.add(port)
            return port

        state = st.SandboxState(
            ssh=old.ssh if old else {},
            auth_ready=bool(old and old.auth_ready and old.tls == self.tls),
            tls=self.tls,
            lean=self.lean,
        )
        state.ports = {
            "native": pick("native", addresses, self.ring.native_port),
            "storage": pick("storage", addresses, self.ring.storage_port),
            "prometheus": pick("prometheus", ["127.0.0.1"], 9090),
            "node_exporter": pick("node_exporter", ["127.0.0.1"], 9100),
            "ssh": pick("ssh", ["127.0.0.1"], None),
            # `loadtower run`'s live figures, which this sandbox's Prometheus scrapes
            metrics_services.RUN_METRICS: pick(
                metrics_services.RUN_METRICS, addresses[:1], metrics_services.RUN_METRICS_PORT
            ),
        }
        for svc in hosts.services():  # engine hosts on node 1's address
            if svc.name in wanted:
                state.ports[svc.name] = pick(svc.name, addresses[:1], svc.preferred_port)
        for i in range(1, total + 1):
            prev_node = old.nodes.get(i) if old else None
            preferred = prev_node.jmx_port if prev_node else self.ring.admin_port + i - 1
            jmx = procs.free_port(["127.0.0.1"], preferred, taken)
            taken.add(jmx)
            state.nodes[i] = st.NodeState(
                index=i, address=addresses[i - 1], jmx_port=jmx, standby=i > self.nodes
            )
        return state

    # ---- up ---------------------------------------------------------------------------
    def up(self, timeout: float = 300.0) -> dict:
        running = st.load(self.dir)
        if running is None or not self._core_alive(running):
            self._include_ring()  # (a running sandbox stays as it is)
        self._refuse_resize(running)
        self.ring.fetch()
        self.ring.check_runtime()
        wanted = {svc.name: hosts.wanted(svc, self.engines.get(svc.name))
                  for svc in hosts.services()}
        self.dir.mkdir(parents=True, exist_ok=True)
        with st.locked(self.dir):
            old = st.load(self.dir)
            if old and self._core_alive(old):
                self._refuse_resize(old)
                # the ring and the services run: only engine hosts may need starting/stopping
                for svc in hosts.services():
                    hosts.reconcile(svc, self.dir, old, wanted[svc.name], self._wait, timeout)
                inventory_file.write(self.dir, old)
                return self.info()
            if old:
                self._stop_all(old)  # half-up: start again from a clean slate
            state = self._plan(old, [name for name, on in wanted.items() if on])
            st.save(self.dir, state)
            try:
                self._start_services(state, timeout)
                for index in range(1, self.nodes + 1):
                    self._start_node(state, index, timeout)
                self.ring.ensure_login(state.nodes[1].address, state.ports["native"], self.dir,
                                       tls=self._client_tls(state))
                state.auth_ready = True
                st.save(self.dir, state)
                for svc in hosts.services():
                    if wanted[svc.name]:
                        hosts.start(svc, self.dir, state, self._wait, timeout)
            except BaseException:
                self._stop_all(state)
                st.save(self.dir, state)
                raise
            inventory_file.write(self.dir, state)
        return self.info()

    def _ring_size(self) -> int:
        """Nodes the ring on disk knows: node 1's, and every node up to the last with data
        (a node that joined keeps its data until `decommission`); 0 without node 1's."""
        base = self.dir / self.ring.name
        joined = [int(p.name[4:]) for p in base.glob("node*")
                  if p.name[4:].isdigit() and any((p / "data" / "system").glob("*"))]
        return max(joined) if 1 in joined else 0

    def _include_ring(self) -> None:
        """Fewer nodes than the ring knows would leave the others in it as down (and every
        query of theirs failing): start every node of the ring, and say so."""
        ring = self._ring_size()
        if ring > self.nodes:
            print(
                f"sandbox {self.dir}: its {self.ring.title} ring has {ring} nodes (from an "
                f"earlier `up`), {self.nodes} asked: starting all {ring}; for a fresh "
                f"ring, `loadtower sandbox down --dir {self.dir}` and remove "
                f"{self.dir / self.ring.name}",
                file=sys.stderr,
            )
            self.nodes = ring

    def _refuse_resize(self, state: st.SandboxState | None) -> None:
        """`up` on a running sandbox keeps it as it is: another number of nodes is an error."""
        if state is None or not self._core_alive(state):
            return
        running = sum(1 for n in state.nodes.values() if not n.standby)
        if running != self.nodes:
            nodes = f"{running} {self.ring.title} node{'s' if running != 1 else ''}"
            raise LoadtowerError(
                f"the sandbox in {self.dir} is already up with {nodes}, not "
                f"{self.nodes}: pass {self.ring.nodes_flag} {running}, or run "
                f"`loadtower sandbox down --dir {self.dir}` first"
            )
        if state.tls != self.tls:
            have, want = ("with", "without") if state.tls else ("without", "with")
            raise LoadtowerError(
                f"the sandbox in {self.dir} is already up {have} TLS, not {want}: "
                f"{'pass --tls' if state.tls else 'drop --tls'}, or run "
                f"`loadtower sandbox down --dir {self.dir}` first"
            )

    def engine_action(self, name: str, action: str, timeout: float = 60.0) -> tuple[bool, str]:
        """start / stop / kill / restart / status of engine host `name`: (running, a line)."""
        svc = hosts.service(name)
        with st.locked(self.dir):
            return hosts.act(svc, self.dir, self._require_state(), action, self._wait, timeout)

    def _start_services(self, state: st.SandboxState, timeout: float) -> None:
        ports = state.ports
        state.ssh = ssh_server.prepare(self.dir / "ssh", "127.0.0.1", ports["ssh"])
        logs = self.dir / "logs"
        commands = {
            "node_exporter": metrics_services.node_exporter_command(ports["node_exporter"]),
            "prometheus": metrics_services.prometheus_command(
                self.dir / "prometheus", ports["prometheus"], ports["node_exporter"],
                metrics_services.run_metrics_target(state),
            ),
            "sshd": ssh_server.command(state.ssh["config"]),
        }
        checks = {
            "node_exporter": lambda: metrics_services.http_ok(
                f"http://127.0.0.1:{ports['node_exporter']}/metrics"
            ),
            "prometheus": lambda: metrics_services.http_ok(
                f"http://127.0.0.1:{ports['prometheus']}/-/ready"
            ),
            "sshd": lambda: ssh_server.banner("127.0.0.1", ports["ssh"]),
        }
        for name in SERVICES:
            state.services[name] = procs.spawn(commands[name], logs / f"{name}.log")
            st.save(self.dir, state)
        for name in SERVICES:
            self._wait(name, state.services[name], checks[name], min(timeout, 60.0))

    def _wait(
        self, what: str, record: procs.ProcessRecord | None, check: Callable[[], bool],
        timeout: float,
    ) -> None:
        procs.wait_ready(what, record, check, timeout)

    def _start_node(self, state: st.SandboxState, index: int, timeout: float) -> None:
        node = state.nodes[index]
        if procs.is_alive(node.process):
            return
        self._free_jmx_port(state, index)
        ring_node = self._node(state, index)
        ring_node.write_config()
        node.process = procs.spawn(ring_node.command(), ring_node.stdout_log)
        node.paused = False
        st.save(self.dir, state)
        self._wait(
            f"{self.ring.title} node {index} ({node.address})",
            node.process,
            lambda: procs.port_answers(node.address, state.ports["native"]),
            timeout,
        )

    # ---- status / info ------------------------------------------------------------------
    def _core_alive(self, state: st.SandboxState) -> bool:
        services = all(procs.is_alive(state.services.get(n)) for n in SERVICES)
        nodes = all(procs.is_alive(n.process) for n in state.nodes.values() if not n.standby)
        return services and nodes and state.auth_ready

    def _all_alive(self, state: st.SandboxState) -> bool:
        return self._core_alive(state) and all(hosts.alive(svc, state)
                                               for svc in hosts.services())

    def _require_state(self) -> st.SandboxState:
        state = st.load(self.dir)
        if state is None:
            raise LoadtowerError(
                f"no sandbox in {self.dir} (run `loadtower sandbox up --dir {self.dir}`)"
            )
        return state

    def node_status(self, state: st.SandboxState, index: int) -> str:
        node = state.nodes[index]
        if procs.is_alive(node.process):
            if node.paused:
                return "paused"
            return "up" if procs.port_answers(node.address, state.ports["native"]) else "starting"
        return "standby" if node.standby and node.process is None else "stopped"

    def info(self) -> dict:
        state = st.load(self.dir)
        if state is None:
            return {"dir": str(self.dir), "up": False}
        ports = state.ports
        nodes = [
            {
                "index": i,
                "address": n.address,
                "jmx_port": n.jmx_port,
                "standby": n.standby,
                "state": self.node_status(state, i),
                "pid": n.process.pid if n.process is not None and procs.is_alive(n.process)
                else None,
                "log": str(self.ring.node_log(self._home(i))),
            }
            for i, n in sorted(state.nodes.items())
        ]
        services = {name: procs.is_alive(state.services.get(name)) for name in SERVICES}
        pwd_file = self.ring.password_file(self.dir)
        return {
            "dir": str(self.dir),
            "up": self._all_alive(state),
            "inventory": str(self.dir / "inventory.toml"),
            self.ring.name: {
                "version": self.ring.version,
                "contact_points": [n["address"] for n in nodes if n["state"] == "up"],
                "port": ports["native"],
                "username": self.ring.username,
                "password": pwd_file.read_text().strip() if pwd_file.exists() else None,
                "password_file": str(pwd_file),
                "nodes": nodes,
                "tls": self._tls_info(state),
            },
            "prometheus": {
                "url": f"http://127.0.0.1:{ports['prometheus']}",
                "up": services["prometheus"],
                # where `loadtower run` serves its figures for it (the inventory's serve)
                "run_target": metrics_services.run_metrics_target(state),
            },
            "node_exporter": {
                "instance": f"127.0.0.1:{ports['node_exporter']}",
                "up": services["node_exporter"],
            },
            "ssh": {
                "host": "127.0.0.1",
                "port": ports["ssh"],
                "user": state.ssh.get("user"),
                "key": state.ssh.get("key"),
                "known_hosts": state.ssh.get("known_hosts"),
                "up": services["sshd"],
            },
            **{svc.name: hosts.info(svc, self.dir, state) for svc in hosts.services()},
        }

    def _tls_info(self, state: st.SandboxState) -> dict | None:
        if not state.tls:
            return None
        ca, cert, key = inventory_file.client_tls_files(self.dir)
        return {"ca": str(ca), "cert": str(cert), "key": str(key)}

    # ---- down -----------------------------------------------------------------------------
    def _stop_all(self, state: st.SandboxState) -> None:
        for svc in hosts.services():
            hosts.stop(svc, state)
        for node in state.nodes.values():
            procs.stop(node.process)
            node.process = None
            node.paused = False
        for name in reversed(SERVICES):
            procs.stop(state.services.get(name))
            state.services[name] = None

    def down(self) -> bool:
        """Stop everything; returns False when nothing was running (idle-safe)."""
        if st.load(self.dir) is None:
            return False
        with st.locked(self.dir):
            state = st.load(self.dir)
            assert state is not None
            was_running = any(procs.is_alive(r) for r in state.services.values()) or any(
                procs.is_alive(n.process) for n in state.nodes.values()
            )
            self._stop_all(state)
            st.save(self.dir, state)
        return was_running

    # ---- node actions --------------------------------------------------------------------
    def node(self, action: str, index: int, wait: bool = True, timeout: float = 300.0) -> str:
        with st.locked(self.dir):
            state = self._require_state()
            if index not in state.nodes:
                raise LoadtowerError(
                    f"the sandbox in {self.dir} has no {self.ring.title} node {index} "
                    f"(nodes: {', '.join(map(str, sorted(state.nodes)))})"
                )
            node = state.nodes[index]
            alive = procs.is_alive(node.process)
            if action == "start":
                if alive and node.paused:
                    raise LoadtowerError(f"node {index} is paused: use `resume`")
                if not alive:
                    self._free_jmx_port(state, index)
                    ring_node = self._node(state, index)
                    ring_node.write_config()
                    node.process = procs.spawn(ring_node.command(), ring_node.stdout_log)
                    st.save(self.dir, state)
            elif action in ("stop", "kill"):
                if action == "kill":
                    procs.kill(node.process)
                procs.stop(node.process)
                node.process, node.paused = None, False
            elif action == "decommission":
                self._decommission(state, index, alive)
            elif action in ("pause", "resume"):
                if not alive:
                    raise LoadtowerError(f"node {index} is not running")
                procs.send(node.process, signal.SIGSTOP if action == "pause" else signal.SIGCONT)
                node.paused = action == "pause"
            elif action in ("flush", "compact", "status"):
                if action != "status" and not alive:
                    raise LoadtowerError(f"node {index} is not running")
                probe = (
                    self._node(state, index)
                    if alive
                    else self._node(state, self._any_running(state))
                )
                proc = probe.nodetool(action)
                if proc.returncode != 0:
                    raise LoadtowerError(
                        f"nodetool {action} on node {index} failed: "
                        f"{(proc.stderr or proc.stdout).strip()[-800:]}"
                    )
                return proc.stdout
            else:
                raise LoadtowerError(f"unknown node action '{action}'")
            st.save(self.dir, state)
        if action == "start" and wait:
            self._wait(
                f"{self.ring.title} node {index} ({node.address})",
                node.process,
                lambda: procs.port_answers(node.address, state.ports["native"]),
                timeout,
            )
        return f"node {index}: {self.node_status(state, index)}\n"

    def _free_jmx_port(self, state: st.SandboxState, index: int) -> None:
        """A node's JMX port is chosen at `up`; a standby node may start much later, when
        something else (another sandbox) has taken it: then it gets a free one."""
        node = state.nodes[index]
        if procs.port_free("127.0.0.1", node.jmx_port):
            return
        taken = set(state.ports.values()) | {n.jmx_port for n in state.nodes.values()}
        node.jmx_port = procs.free_port(["127.0.0.1"], None, taken)

    def _decommission(self, state: st.SandboxState, index: int, alive: bool) -> None:
        """A standby node that joined gives its ranges back (`nodetool decommission`),
        stops, and loses its directory: a fresh standby again, as `up` made it."""
        node = state.nodes[index]
        if not node.standby:
            raise LoadtowerError(
                f"node {index} is not a standby node: only those (added by a scale-out) "
                "are decommissioned"
            )
        if alive and node.paused:
            raise LoadtowerError(f"node {index} is paused: use `resume` first")
        if alive:
            # --force: system_distributed wants 3 replicas and never had them here
            proc = self._node(state, index).nodetool("decommission", "--force", timeout=900)
            if proc.returncode != 0:
                raise LoadtowerError(
                    f"nodetool decommission on node {index} failed: "
                    f"{(proc.stderr or proc.stdout).strip()[-800:]}"
                )
        procs.stop(node.process)
        node.process, node.paused = None, False
        shutil.rmtree(self._home(index), ignore_errors=True)

    def _any_running(self, state: st.SandboxState) -> int:
        for i, n in sorted(state.nodes.items()):
            if procs.is_alive(n.process) and not n.paused:
                return i
        raise LoadtowerError(f"no {self.ring.title} node of the sandbox is running")
