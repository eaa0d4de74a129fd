"""The local sandbox: real Cassandra nodes, node_exporter, Prometheus and sshd on loopback.

``Sandbox(dir).up()`` starts what is not running and waits until each service
answers; ``down()`` stops everything the sandbox started (safe when idle);
``info()`` is the JSON-able description other tools (and tests) connect with.
"""

from __future__ import annotations

import ipaddress
import signal
import time
from pathlib import Path

from loadtower.errors import LoadtowerError
from loadtower.sandbox import auth, inventory_file, metrics_services, ssh_server
from loadtower.sandbox import processes as procs
from loadtower.sandbox import state as st
from loadtower.sandbox.cassandra_node import NodeSpec, check_java
from loadtower.sandbox.jars import CASSANDRA_VERSION, fetch_jars

SERVICES = ("node_exporter", "prometheus", "sshd")


class Sandbox:
    def __init__(
        self,
        directory: Path | str,
        cassandra_nodes: int = 1,
        standby: int = 1,
        first_address: str = "127.0.0.1",
        heap: str = "1G",
    ) -> None:
        if cassandra_nodes < 1:
            raise LoadtowerError("--cassandra-nodes must be at least 1")
        self.dir = Path(directory).resolve()
        self.cassandra_nodes = cassandra_nodes
        self.standby = standby
        self.first_address = ipaddress.IPv4Address(first_address)
        if not self.first_address.is_loopback:
            raise LoadtowerError(f"--first-address {first_address} is not a loopback address")
        self.heap = heap

    # ---- layout -------------------------------------------------------------------------
    def _address(self, index: int) -> str:
        return str(self.first_address + (index - 1))

    def _spec(self, state: st.SandboxState, index: int) -> NodeSpec:
        node = state.nodes[index]
        return NodeSpec(
            index=index,
            address=node.address,
            home=self.dir / "cassandra" / f"node{index}",
            seed=state.nodes[1].address,
            storage_port=state.ports["storage"],
            native_port=state.ports["native"],
            jmx_port=node.jmx_port,
            heap=self.heap,
        )

    def _plan(self, old: st.SandboxState | None) -> st.SandboxState:
        """Ports and nodes: kept from an earlier `up` when still free, chosen afresh otherwise."""
        total = self.cassandra_nodes + self.standby
        if old and len(old.nodes) >= self.cassandra_nodes:
            total = max(total, len(old.nodes))
        addresses = [self._address(i) for i in range(1, total + 1)]
        prev = old.ports if old else {}
        taken: set[int] = set()

        def pick(name: str, hosts: list[str], preferred: int | None) -> int:
            port = procs.free_port(hosts, prev.get(name, preferred), taken)
            taken.add(port)
            return port

        state = st.SandboxState(ssh=old.ssh if old else {}, auth_ready=bool(old and old.auth_ready))
        state.ports = {
            "native": pick("native", addresses, 9042),
            "storage": pick("storage", addresses, 7000),
            "prometheus": pick("prometheus", ["127.0.0.1"], 9090),
            "node_exporter": pick("node_exporter", ["127.0.0.1"], 9100),
            "ssh": pick("ssh", ["127.0.0.1"], None),
        }
        for i in range(1, total + 1):
            prev_node = old.nodes.get(i) if old else None
            jmx = procs.free_port(
                ["127.0.0.1"], prev_node.jmx_port if prev_node else 7199 + i - 1, taken
            )
            taken.add(jmx)
            state.nodes[i] = st.NodeState(
                index=i, address=addresses[i - 1], jmx_port=jmx, standby=i > self.cassandra_nodes
            )
        return state

    # ---- up ---------------------------------------------------------------------------
    def up(self, timeout: float = 300.0) -> dict:
        fetch_jars()
        check_java()
        self.dir.mkdir(parents=True, exist_ok=True)
        with st.locked(self.dir):
            old = st.load(self.dir)
            if old and self._all_alive(old):
                return self.info()
            if old:
                self._stop_all(old)  # half-up: start again from a clean slate
            state = self._plan(old)
            st.save(self.dir, state)
            try:
                self._start_services(state, timeout)
                for index in range(1, self.cassandra_nodes + 1):
                    self._start_node(state, index, timeout)
                auth.ensure_role(state.nodes[1].address, state.ports["native"], self.dir)
                state.auth_ready = True
                st.save(self.dir, state)
            except BaseException:
                self._stop_all(state)
                st.save(self.dir, state)
                raise
            inventory_file.write(self.dir, state)
        return self.info()

    def _start_services(self, state: st.SandboxState, timeout: float) -> None:
        ports = state.ports
        state.ssh = ssh_server.prepare(self.dir / "ssh", "127.0.0.1", ports["ssh"])
        logs = self.dir / "logs"
        commands = {
            "node_exporter": metrics_services.node_exporter_command(ports["node_exporter"]),
            "prometheus": metrics_services.prometheus_command(
                self.dir / "prometheus", ports["prometheus"], ports["node_exporter"]
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

    def _wait(self, what: str, record: procs.ProcessRecord | None, check, timeout: float) -> None:  # noqa: ANN001
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if check():
                return
            if not procs.is_alive(record):
                log = record.log if record else ""
                raise LoadtowerError(
                    f"{what} exited during start-up; last lines of {log}:\n{procs.log_tail(log)}"
                )
            time.sleep(0.3)
        raise LoadtowerError(
            f"{what} did not answer within {timeout:.0f}s; see {record.log if record else self.dir}"
        )

    def _start_node(self, state: st.SandboxState, index: int, timeout: float) -> None:
        node = state.nodes[index]
        if procs.is_alive(node.process):
            return
        spec = self._spec(state, index)
        spec.write_config()
        node.process = procs.spawn(spec.command(), spec.stdout_log)
        node.paused = False
        st.save(self.dir, state)
        self._wait(
            f"Cassandra node {index} ({node.address})",
            node.process,
            lambda: procs.port_answers(node.address, state.ports["native"]),
            timeout,
        )

    # ---- status / info ------------------------------------------------------------------
    def _all_alive(self, state: st.SandboxState) -> bool:
        services = all(procs.is_alive(state.services.get(n)) for n in SERVICES)
        nodes = all(procs.is_alive(n.process) for n in state.nodes.values() if not n.standby)
        return services and nodes and state.auth_ready

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
                "pid": n.process.pid if procs.is_alive(n.process) else None,
                "log": str(self.dir / "cassandra" / f"node{i}" / "logs" / "system.log"),
            }
            for i, n in sorted(state.nodes.items())
        ]
        services = {name: procs.is_alive(state.services.get(name)) for name in SERVICES}
        pwd_file = auth.password_file(self.dir)
        return {
            "dir": str(self.dir),
            "up": self._all_alive(state),
            "inventory": str(self.dir / "inventory.toml"),
            "cassandra": {
                "version": CASSANDRA_VERSION,
                "contact_points": [n["address"] for n in nodes if n["state"] == "up"],
                "port": ports["native"],
                "username": auth.USERNAME,
                "password": pwd_file.read_text().strip() if pwd_file.exists() else None,
                "password_file": str(pwd_file),
                "nodes": nodes,
            },
            "prometheus": {
                "url": f"http://127.0.0.1:{ports['prometheus']}",
                "up": services["prometheus"],
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
        }

    # ---- down -----------------------------------------------------------------------------
    def _stop_all(self, state: st.SandboxState) -> None:
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
                    f"the sandbox in {self.dir} has no Cassandra node {index} "
                    f"(nodes: {', '.join(map(str, sorted(state.nodes)))})"
                )
            node = state.nodes[index]
            alive = procs.is_alive(node.process)
            if action == "start":
                if alive and node.paused:
                    raise LoadtowerError(f"node {index} is paused: use `resume`")
                if not alive:
                    spec = self._spec(state, index)
                    spec.write_config()
                    node.process = procs.spawn(spec.command(), spec.stdout_log)
                    st.save(self.dir, state)
            elif action in ("stop", "kill"):
                if action == "kill":
                    procs.send(node.process, signal.SIGKILL)
                    procs.wait_until(lambda: not procs.is_alive(node.process), 15.0)
                procs.stop(node.process)
                node.process, node.paused = None, False
            elif action in ("pause", "resume"):
                if not alive:
                    raise LoadtowerError(f"node {index} is not running")
                procs.send(node.process, signal.SIGSTOP if action == "pause" else signal.SIGCONT)
                node.paused = action == "pause"
            elif action in ("flush", "compact", "status"):
                if action != "status" and not alive:
                    raise LoadtowerError(f"node {index} is not running")
                probe = (
                    self._spec(state, index)
                    if alive
                    else self._spec(state, self._any_running(state))
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
                f"Cassandra node {index} ({node.address})",
                node.process,
                lambda: procs.port_answers(node.address, state.ports["native"]),
                timeout,
            )
        return f"node {index}: {self.node_status(state, index)}\n"

    def _any_running(self, state: st.SandboxState) -> int:
        for i, n in sorted(state.nodes.items()):
            if procs.is_alive(n.process) and not n.paused:
                return i
        raise LoadtowerError("no Cassandra node of the sandbox is running")
