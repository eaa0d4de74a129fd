"""SSH to every inventory host (asyncssh): commands, node actions, streamed processes
and reverse port forwards, with verified host keys and reconnects with backoff."""

from __future__ import annotations

import asyncio
import contextlib
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import asyncssh

from loadtower.errors import LoadtowerError
from loadtower.fleet.cancel_tasks import bounded, wait_within
from loadtower.fleet.ssh_keys import KeyPolicyClient, refusal
from loadtower.scenarios.models import Host, Inventory
from loadtower.store.redact import mask_command_secrets

RECONNECT_FOR_S = 30.0
ACTION_TIMEOUT_S = 900.0  # an action (start, compact, ...) when its caller gives no timeout
CHANNEL_TIMEOUT_S = 30.0  # opening a process channel or a port forward
StateCallback = Callable[[str, str, str], None]


def shell_word(value: str) -> str:
    """`value` as one shell word (shlex.quote); empty stays empty (an unset {table}
    adds no argument). A plain name (db1, loadtower, 127.0.0.1) is unchanged."""
    return shlex.quote(value) if value else ""


def action_command(template: str, placeholders: dict[str, str]) -> str:
    """An action template filled with its placeholders, each quoted for the shell: a value
    such as ``ks; touch /tmp/x #`` is one argument, never a second command."""
    return template.format(**{k: shell_word(str(v)) for k, v in placeholders.items()})


class CommandTimeout(LoadtowerError):
    """A remote command did not finish within its timeout (it may still run there)."""


@dataclass(frozen=True)
class Endpoint:
    host: str
    port: int
    user: str | None
    key: str | None


class RemoteProcess:
    """A long-running remote command; its process group dies on terminate()."""

    def __init__(self, pool: HostPool, name: str, process: Any, tasks: list[asyncio.Task]) -> None:
        self.pool, self.name, self.process, self.tasks = pool, name, process, tasks
        self.pid: int | None = None

    @property
    def returncode(self) -> int | None:
        return self.process.returncode

    async def wait(self, timeout: float | None = None) -> int | None:
        """The exit status; TimeoutError after `timeout` seconds (None: until it ends)."""
        await bounded(self.process.wait(), timeout)
        await wait_within(self.tasks, 5)  # its output's readers end with its output
        return self.process.returncode

    async def terminate(self) -> None:
        if self.pid:
            with contextlib.suppress(Exception):
                await self.pool.run(self.name, f"kill -TERM -- -{self.pid} 2>/dev/null; true", 15)
        with contextlib.suppress(Exception):
            self.process.terminate()
        with contextlib.suppress(Exception):
            self.process.close()


class HostPool:
    def __init__(self, inventory: Inventory, accept_new_host_keys: bool = False,
                 on_state: StateCallback | None = None) -> None:
        self.inventory = inventory
        self.accept_new = accept_new_host_keys or inventory.ssh.accept_new_host_keys
        self.on_state = on_state or (lambda *_: None)
        self.known_hosts = inventory.ssh.known_hosts_file()
        self.conns: dict[Endpoint, asyncssh.SSHClientConnection] = {}
        self.locks: dict[Endpoint, asyncio.Lock] = {}
        self.listeners: list[Any] = []
        self.closed = False

    def endpoint(self, name: str) -> Endpoint:
        host = self._host(name)
        ssh = self.inventory.ssh
        return Endpoint(host.ssh_host or host.address, host.ssh_port or ssh.port,
                        host.ssh_user or ssh.user, host.ssh_key or ssh.key)

    def _host(self, name: str) -> Host:
        try:
            return self.inventory.hosts[name]
        except KeyError:
            raise LoadtowerError(f"no host '{name}' in the inventory") from None

    async def connect_all(self) -> None:
        names = [n for n, h in self.inventory.hosts.items() if not h.standby]
        # every attempt ends before the first error is raised (none is left dangling)
        results = await asyncio.gather(*(self.connection(n) for n in names),
                                       return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result

    async def _connect(self, name: str, ep: Endpoint) -> asyncssh.SSHClientConnection:
        client = KeyPolicyClient(self.known_hosts, self.accept_new)
        timeout = float(self.inventory.ssh.connect_timeout)
        options: dict[str, Any] = {"known_hosts": str(self.known_hosts)
                                   if self.known_hosts.exists() else ()}
        if ep.key:
            options["client_keys"] = [ep.key]
        try:
            conn, _ = await asyncio.wait_for(asyncssh.create_connection(
                lambda: client, ep.host, port=ep.port, username=ep.user,
                connect_timeout=timeout, keepalive_interval=5, keepalive_count_max=3,
                **options), timeout + 5)
        except asyncssh.HostKeyNotVerifiable:
            raise LoadtowerError(refusal(name, ep.host, ep.port, client.verdict or "unknown",
                                         self.known_hosts)) from None
        except asyncssh.PermissionDenied:
            raise LoadtowerError(f"host {name} ({ep.host}:{ep.port}): SSH login as "
                                 f"{ep.user or 'the current user'} refused (check the key)") from None
        except (asyncssh.KeyImportError, asyncssh.KeyEncryptionError) as exc:
            hint = (" (for a key with a passphrase, leave 'key' unset and load it into "
                    "ssh-agent)" if "assphrase" in str(exc) else "")
            raise LoadtowerError(f"host {name}: cannot use the SSH key {ep.key}: {exc}{hint}"
                                 ) from None
        except (OSError, asyncssh.Error, TimeoutError) as exc:
            reason = str(exc) or type(exc).__name__
            raise LoadtowerError(f"host {name} ({ep.host}:{ep.port}): cannot connect over "
                                 f"SSH: {reason}") from None
        return conn

    async def connection(self, name: str) -> asyncssh.SSHClientConnection:
        ep = self.endpoint(name)
        lock = self.locks.setdefault(ep, asyncio.Lock())
        async with lock:
            conn = self.conns.get(ep)
            if conn is not None and not conn.is_closed():
                return conn
            lost = conn is not None
            self.on_state(name, "reconnecting" if lost else "connecting", "")
            conn = await (self._reconnect(name, ep) if lost else self._connect(name, ep))
            self.conns[ep] = conn
            self.on_state(name, "reconnected" if lost else "connected", "")
            return conn

    async def _reconnect(self, name: str, ep: Endpoint) -> asyncssh.SSHClientConnection:
        loop = asyncio.get_running_loop()
        deadline, delay = loop.time() + RECONNECT_FOR_S, 0.5
        while True:
            try:
                return await self._connect(name, ep)
            except LoadtowerError as exc:
                if loop.time() + delay > deadline or "host key" in str(exc):
                    self.on_state(name, "gave_up", str(exc))
                    raise
            await asyncio.sleep(delay)
            delay = min(delay * 2, 5.0)

    async def run(self, name: str, command: str, timeout: float = 60.0,
                  input: str | None = None) -> tuple[int, str, str]:
        """Run `command` on host `name`; `input` is its stdin (secrets go there, never on
        a command line)."""
        for attempt in (1, 2):
            conn = await self.connection(name)
            try:
                result = await bounded(conn.run(command, check=False, input=input), timeout)
            except TimeoutError:
                raise CommandTimeout(f"host {name}: `{mask_command_secrets(command)}` did not "
                                     f"finish within {timeout:g} s") from None
            except (asyncssh.ConnectionLost, asyncssh.DisconnectError, asyncssh.ChannelOpenError,
                    OSError) as exc:
                self.on_state(name, "lost", str(exc))
                if attempt == 2:
                    raise LoadtowerError(f"host {name}: SSH connection lost: {exc}") from None
                continue
            status = result.exit_status if result.exit_status is not None else 255
            return status, str(result.stdout or ""), str(result.stderr or "")
        raise AssertionError("unreachable")

    async def run_action(self, name: str, action: str, *, timeout: float | None = None,
                         **placeholders: str) -> tuple[int, str, str]:
        """Run the host's declared `action` (CommandTimeout after `timeout` seconds,
        ACTION_TIMEOUT_S when None); placeholders are quoted for the shell."""
        template = self._host(name).actions.get(action)
        if template is None:
            raise LoadtowerError(f"host {name} has no '{action}' action in the inventory")
        try:
            command = action_command(template, placeholders)
        except (KeyError, IndexError, ValueError) as exc:
            raise LoadtowerError(f"host {name}: action '{action}' uses an unknown placeholder "
                                 f"{exc} (known: {', '.join(sorted(placeholders))})") from None
        return await self.run(name, command, timeout=ACTION_TIMEOUT_S if timeout is None
                              else timeout)

    async def stream(self, name: str, command: str, on_stdout: Callable[[str], None],
                     on_stderr: Callable[[str], None]) -> RemoteProcess:
        conn = await self.connection(name)
        wrapped = f"setsid -w sh -c {shlex.quote('echo LTPID $$ >&2; ' + command)}"
        try:
            process = await asyncio.wait_for(conn.create_process(wrapped), CHANNEL_TIMEOUT_S)
        except TimeoutError:
            raise LoadtowerError(f"host {name}: starting `{mask_command_secrets(command)}` over "
                                 f"SSH took over {CHANNEL_TIMEOUT_S:g} s") from None
        handle = RemoteProcess(self, name, process, [])
        pid_seen = asyncio.Event()

        async def pump(stream: Any, callback: Callable[[str], None], is_err: bool) -> None:
            async for line in stream:
                if not line:  # end of stream, not an empty line (that would be "\n")
                    continue
                text = line.rstrip("\n")
                if is_err and handle.pid is None and text.startswith("LTPID "):
                    handle.pid = int(text.split()[1])
                    pid_seen.set()
                    continue
                if is_err and text.startswith("setsid: child"):  # our wrapper's own remark
                    continue
                callback(text)

        handle.tasks = [asyncio.create_task(pump(process.stdout, on_stdout, False)),
                        asyncio.create_task(pump(process.stderr, on_stderr, True))]
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(pid_seen.wait(), 15)
        return handle

    async def forward_remote_port(self, name: str, remote_port: int, local_host: str,
                                  local_port: int) -> int:
        conn = await self.connection(name)
        try:
            listener = await asyncio.wait_for(
                conn.forward_remote_port("127.0.0.1", remote_port, local_host, local_port),
                CHANNEL_TIMEOUT_S)
        except TimeoutError:
            raise LoadtowerError(f"host {name}: the SSH reverse forward of port {remote_port} "
                                 f"took over {CHANNEL_TIMEOUT_S:g} s") from None
        self.listeners.append(listener)
        return int(listener.get_port())

    async def forward_local_port(self, name: str, address: str, port: int) -> Any:
        """A listener on 127.0.0.1 (any free port: ``get_port()``) that reaches
        ``address:port`` from host `name`; close() it when done."""
        conn = await self.connection(name)
        try:
            return await asyncio.wait_for(
                conn.forward_local_port("127.0.0.1", 0, address, port), CHANNEL_TIMEOUT_S)
        except TimeoutError:
            raise LoadtowerError(f"host {name}: the SSH forward to {address}:{port} took over "
                                 f"{CHANNEL_TIMEOUT_S:g} s") from None

    async def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        for listener in self.listeners:
            with contextlib.suppress(Exception):
                listener.close()
        for conn in self.conns.values():
            conn.close()
        for conn in self.conns.values():
            with contextlib.suppress(Exception):
                await bounded(conn.wait_closed(), 5)
        self.conns.clear()
