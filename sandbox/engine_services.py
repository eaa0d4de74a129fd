"""The sandbox's engine hosts beside its ring (sandbox/ring_engine.py): each one an
engine package's sandbox part, run alike (issue 30).

An engine whose kind names a ``sandbox_service`` (``"module:attribute"``,
protocol/engine_kinds.py) gets a host in the loopback sandbox: a real server of its
protocol on node 1's address, one process, its own login. Its sandbox part
(``loadtower.engines.NAME.sandbox``) is an `EngineService`: what to start and how to
ask it whether it answers, its inventory lines. Everything else is here and the same
for every engine: `up` picks its port (the preferred one when free) and starts it when
`available()` (``--NAME`` / ``--no-NAME``), `loadtower sandbox NAME ACTION` starts,
stops, kills, restarts it or says its status, `status --json` describes it under its
name, `down` stops it. A service may be a stand-in whose timings are not its engine's
(each says so in its ``warning``). One that names a ``cluster_host`` runs in the
cluster sandbox too, alone in that namespace host on its preferred port.

The sandbox imports no engine package: the services are found through the kinds.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable
from pathlib import Path

from loadtower.errors import LoadtowerError
from loadtower.protocol.engine_kinds import KINDS, load_attribute
from loadtower.sandbox import processes as procs
from loadtower.sandbox import state as st
from loadtower.sandbox.auth import secret
from loadtower.sandbox.toml_values import q

ACTIONS = ("start", "stop", "kill", "restart", "status")  # `loadtower sandbox NAME ...`
# `fetch --require-NAME`'s default (CI sets it for the services it needs): a service whose
# fetch cannot build what it needs is then an error, not a sandbox without it
REQUIRE_ENV = "LOADTOWER_REQUIRE_{}"

Wait = Callable[[str, procs.ProcessRecord | None, Callable[[], bool], float], None]


class EngineService:
    """An engine's sandbox host; subclasses say what differs (the engine packages'
    ``sandbox/service.py``)."""

    name: str  # the engine: its key in the state's ports and services, the CLI's word
    host: str  # the inventory's host name
    title: str  # the engine's title in messages
    server: str  # what runs, for the wait and the status line ("TITLE (the server)")
    preferred_port: int
    username: str = "loadtower"
    start_timeout_s: float = 60.0
    up_help: str  # `sandbox up --NAME`'s help
    warning: str  # what its timings are (printed by `up` and `status`)
    running_note: str  # the status line's note (what runs, what its timings are)
    about: str = ""  # a paragraph of `sandbox --help`: what runs, when, what it measures
    # its host in the cluster sandbox (a host of netns.HOSTS); None: not run there
    cluster_host: str | None = None

    def available(self) -> bool:
        raise NotImplementedError

    def missing_reason(self) -> str:
        """Why it cannot run here (one line, with how to make it)."""
        raise NotImplementedError

    def engine(self) -> str:
        """The server and its version, for `status`."""
        return self.server

    def argv(self, directory: Path, host: str, port: int, data_root: Path | None = None
             ) -> list[str]:
        """The server's command line, listening on host:port; its secrets in `directory`,
        its data below `data_root` (default: `directory`; the cluster sandbox keeps data
        in its own folder)."""
        raise NotImplementedError

    def command(self, directory: Path, state: st.SandboxState) -> list[str]:
        return self.argv(directory, address(state), state.ports[self.name])

    def environment(self, directory: Path) -> dict[str, str] | None:
        """The server's environment (None: the sandbox's own)."""
        return None

    def ping(self, host: str, port: int, timeout: float = 2.0) -> bool:
        raise NotImplementedError

    def url(self, host: str, port: int) -> str:
        raise NotImplementedError

    def info_extra(self) -> dict:
        """More keys of its `status --json` entry."""
        return {}

    def inventory_section(self, directory: Path, state: st.SandboxState) -> list[str]:
        """Its comment and `[NAME]` credentials section in the sandbox's inventory.toml
        (its host follows: `inventory_lines`)."""
        raise NotImplementedError

    def cluster_inventory_section(self, directory: Path) -> list[str]:
        """Its comment and `[NAME]` credentials section in the cluster sandbox's
        inventory.toml (when it names a ``cluster_host``)."""
        raise NotImplementedError

    def host_keys(self, state: st.SandboxState) -> list[str]:
        """Keys of its own in its host's table, after ``address``."""
        return []

    def fetch(self, require: bool) -> None:
        """`loadtower sandbox fetch`: build or download what it needs, once (cached)."""

    fetch_help: str | None = None  # `fetch --require-NAME`'s help, when fetch does something

    # what every service has alike
    def password_file(self, directory: Path) -> Path:
        return directory / "secrets" / f"{self.name}.password"

    def log_file(self, directory: Path) -> Path:
        return directory / "logs" / f"{self.name}.log"

    def password(self, directory: Path) -> str:
        """Its login's password (generated once, mode 0600)."""
        return secret(self.password_file(directory))


def services() -> list[EngineService]:
    """Every registered engine's sandbox service, in the registry's order."""
    found: dict[str, EngineService] = {}
    for kind in KINDS.values():
        if kind.sandbox_service and kind.sandbox_service not in found:
            found[kind.sandbox_service] = load_attribute(kind.sandbox_service)
    return list(found.values())


def cluster_services() -> list[EngineService]:
    """The services the cluster sandbox runs (each on its ``cluster_host``)."""
    return [svc for svc in services() if svc.cluster_host]


def service(name: str) -> EngineService:
    for svc in services():
        if svc.name == name:
            return svc
    raise LoadtowerError(f"the sandbox runs no {name} host (it runs: "
                         f"{', '.join(s.name for s in services()) or 'none'})")


def wanted(svc: EngineService, flag: bool | None) -> bool:
    """--NAME / --no-NAME / neither (None: when it is available here)."""
    if flag is None:
        return svc.available()
    if flag and not svc.available():
        raise LoadtowerError(f"--{svc.name}: {svc.missing_reason()}; or use --no-{svc.name}")
    return flag


def enabled(svc: EngineService, state: st.SandboxState) -> bool:
    return svc.name in state.ports


def address(state: st.SandboxState) -> str:
    """Every engine host listens on node 1's address."""
    return state.nodes[1].address


def pick_port(svc: EngineService, state: st.SandboxState) -> int:
    """Its preferred port when free on the host's address, another free port otherwise."""
    taken = {p for name, p in state.ports.items() if name != svc.name}
    taken |= {n.jmx_port for n in state.nodes.values()}
    return procs.free_port([address(state)], svc.preferred_port, taken)


def start(svc: EngineService, directory: Path, state: st.SandboxState, wait: Wait,
          timeout: float) -> None:
    """Start it unless it runs; return once it answers."""
    if procs.is_alive(state.services.get(svc.name)):
        return
    if not svc.available():
        raise LoadtowerError(svc.missing_reason())
    host, port = address(state), state.ports[svc.name]
    record = procs.spawn(svc.command(directory, state), svc.log_file(directory),
                         env=svc.environment(directory))
    state.services[svc.name] = record
    st.save(directory, state)
    wait(f"{svc.server} on {host}:{port}", record, lambda: svc.ping(host, port),
         min(timeout, svc.start_timeout_s))


def stop(svc: EngineService, state: st.SandboxState) -> None:
    if svc.name in state.services:
        procs.stop(state.services[svc.name])
        state.services[svc.name] = None


def reconcile(svc: EngineService, directory: Path, state: st.SandboxState, wanted: bool,
              wait: Wait, timeout: float) -> None:
    """`up` on a running sandbox: start it when wanted and not running (on a free port if
    its own was taken meanwhile; the inventory follows); stop and drop it when not."""
    if not wanted:
        if enabled(svc, state):
            stop(svc, state)
            state.services.pop(svc.name, None)
            state.ports.pop(svc.name, None)
            st.save(directory, state)
        return
    stopped = not procs.is_alive(state.services.get(svc.name))
    if not enabled(svc, state) or (
        stopped and not procs.port_free(address(state), state.ports[svc.name])
    ):
        state.ports[svc.name] = pick_port(svc, state)
        st.save(directory, state)
    start(svc, directory, state, wait, timeout)


def act(svc: EngineService, directory: Path, state: st.SandboxState, action: str, wait: Wait,
        timeout: float) -> tuple[bool, str]:
    """start / stop / kill / restart / status (under the sandbox's lock): (running, a line)."""
    if action not in ACTIONS:
        raise LoadtowerError(
            f"unknown {svc.title} action '{action}' (one of {', '.join(ACTIONS)})")
    if not enabled(svc, state):
        raise LoadtowerError(
            f"the sandbox in {directory} has no {svc.title} host "
            f"(`loadtower sandbox up --dir {directory} --{svc.name}`)"
        )
    record = state.services.get(svc.name)
    if action in ("stop", "kill", "restart"):
        if action == "kill":
            procs.kill(record)
        stop(svc, state)
        st.save(directory, state)
    if action in ("start", "restart"):
        start(svc, directory, state, wait, timeout)
    record = state.services.get(svc.name)
    where = f"{address(state)}:{state.ports[svc.name]}"
    if record is None or not procs.is_alive(record):
        return False, f"{svc.name} {where}: stopped"
    return True, f"{svc.name} {where}: up (pid {record.pid}; {svc.running_note})"


def alive(svc: EngineService, state: st.SandboxState) -> bool:
    """Not enabled, or its process runs (what `up` means for the whole sandbox)."""
    return not enabled(svc, state) or procs.is_alive(state.services.get(svc.name))


def info(svc: EngineService, directory: Path, state: st.SandboxState) -> dict:
    """Its `status --json` entry."""
    if not enabled(svc, state):
        reason = f"not started (--no-{svc.name})" if svc.available() else svc.missing_reason()
        return {"enabled": False, "up": False, "engine": svc.engine(), "reason": reason}
    record = state.services.get(svc.name)
    running = procs.is_alive(record)
    host, port = address(state), state.ports[svc.name]
    pwd_file = svc.password_file(directory)
    return {
        "enabled": True,
        "host": svc.host,
        "address": host,
        "port": port,
        "url": svc.url(host, port),
        **svc.info_extra(),
        "username": svc.username,
        "password": pwd_file.read_text().strip() if pwd_file.exists() else None,
        "password_file": str(pwd_file),
        "up": running and svc.ping(host, port),
        "pid": record.pid if running and record else None,
        "log": str(svc.log_file(directory)),
        "engine": svc.engine(),
        "warning": svc.warning,
    }


def action_command(svc: EngineService, directory: Path, action: str) -> str:
    """The inventory's node action: `loadtower sandbox NAME ACTION --dir DIR`."""
    argv = [sys.executable, "-m", "loadtower", "sandbox", svc.name, action]
    return shlex.join([*argv, "--dir", str(directory)])


def inventory_lines(directory: Path, state: st.SandboxState) -> list[str]:
    """Every running engine host's credentials section and host (reached through the
    sandbox's sshd; its actions call `loadtower sandbox NAME ACTION`)."""
    lines: list[str] = []
    for svc in services():
        if enabled(svc, state):
            lines += [
                *svc.inventory_section(directory, state),
                "",
                f"[hosts.{svc.host}]",
                f"address = {q(address(state))}",
                *svc.host_keys(state),
                'ssh_host = "127.0.0.1"',
                'roles = ["db"]',
                f"engine = {q(svc.name)}",
                f"node_exporter = {q('127.0.0.1:' + str(state.ports['node_exporter']))}",
                "",
                f"[hosts.{svc.host}.actions]",
                *(f"{a} = {q(action_command(svc, directory, a))}" for a in ACTIONS),
                "",
            ]
    return lines
