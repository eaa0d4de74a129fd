"""Agent hosts run exactly the orchestrator's agent code, or the run does not start.

Each agent host's Python is asked for `loadtower agent --version`: the agent install
set's version and build id (``loadtower.build.agent_version_line()``, a digest of the
code that runs on a load host and the protocol, nothing of the orchestrator's). On a
mismatch the run fails with a line naming the host, unless bootstrapping is asked for
(`--bootstrap-agents` or `bootstrap = true` on the host): then the `loadtower-agent`
wheel (the agent install set, ``agent_wheel.build_agent_wheel``) is copied over SFTP
and installed into a venv on the host (its dependencies come from the host's package
index), and that venv is used.
"""

from __future__ import annotations

import asyncio
import importlib.util
import shlex
import tempfile
import time
from pathlib import Path
from typing import Any

from loadtower.build import agent_build_id, agent_version_line
from loadtower.errors import LoadtowerError
from loadtower.scenarios.orchestrator.agent_wheel import build_agent_wheel

CHECK_TIMEOUT_S = 60.0
UPLOAD_TIMEOUT_S = 300.0  # the wheel over SFTP
INSTALL_TIMEOUT_S = 900.0
VERSION_PREFIX = "loadtower-agent "


def remote_version_command(python: str) -> str:
    return f"{shlex.quote(python)} -m loadtower agent --version 2>&1"


def parse_version(output: str) -> str | None:
    """The last `loadtower-agent VERSION (build ID)` line of the output, if any."""
    lines = [line.strip() for line in output.splitlines()
             if line.strip().startswith(VERSION_PREFIX)]
    return lines[-1] if lines else None


def _shell_path(path: str) -> str:
    """Quote a path for sh, keeping a leading ~/ expandable."""
    if path == "~" or path.startswith("~/"):
        return '"$HOME"' + (shlex.quote(path[1:]) if len(path) > 1 else "")
    return shlex.quote(path)


class AgentVersions:
    """Checks (and, when asked, bootstraps) loadtower on every agent host."""

    def __init__(self, pool: Any, inventory: Any, sinks: Any, bootstrap: bool = False) -> None:
        self.pool, self.inventory, self.sinks = pool, inventory, sinks
        self.bootstrap = bootstrap
        self.expected = agent_version_line()
        self._wheel_dir: tempfile.TemporaryDirectory[str] | None = None
        self._wheel: Path | None = None
        self._wheel_lock = asyncio.Lock()  # hosts bootstrapped at once share one build

    async def ensure(self) -> dict[str, str]:
        """The Python to run loadtower with, per agent host."""
        agents = self.inventory.with_role("agent")
        try:
            found = await asyncio.gather(*(self._ensure_host(n, h) for n, h in agents.items()))
        finally:
            if self._wheel_dir is not None:
                self._wheel_dir.cleanup()
        return dict(zip(agents, found, strict=True))

    async def _found(self, name: str, python: str) -> str | None:
        _status, out, _err = await self.pool.run(name, remote_version_command(python),
                                                 timeout=CHECK_TIMEOUT_S)
        return parse_version(out)

    async def _ensure_host(self, name: str, host: Any) -> str:
        found = await self._found(name, host.python)
        if found == self.expected:
            self.sinks.event("agents", f"agent host {name} runs {found}", host=name)
            return str(host.python)
        if not (self.bootstrap or host.bootstrap):
            have = found or f"no loadtower agent ({host.python} -m loadtower agent failed)"
            raise LoadtowerError(
                f"agent host {name}: {host.python} has {have}, the orchestrator runs "
                f"{self.expected}; install the same loadtower-agent there, or bootstrap it with "
                "--bootstrap-agents (or bootstrap = true on the host)"
            )
        return await self._bootstrap(name, host, found)

    async def _local_wheel(self) -> Path:
        async with self._wheel_lock:
            if self._wheel is None:
                self._wheel_dir = tempfile.TemporaryDirectory(prefix="loadtower-agent-wheel-")
                self._wheel = await asyncio.to_thread(build_agent_wheel,
                                                      Path(self._wheel_dir.name))
            return self._wheel

    async def _bootstrap(self, name: str, host: Any, found: str | None) -> str:
        started = time.monotonic()
        self.sinks.event("agents", f"agent host {name} has {found or 'no loadtower'}; "
                         f"bootstrapping {self.expected} into {host.bootstrap_dir}", host=name)
        wheel = await self._local_wheel()
        status, out, err = await self.pool.run(
            name, f"mkdir -p {_shell_path(host.bootstrap_dir)} && cd {_shell_path(host.bootstrap_dir)} && pwd")
        if status != 0 or not out.strip():
            raise LoadtowerError(f"agent host {name}: cannot create {host.bootstrap_dir}: "
                                 f"{(err or out).strip()}")
        base = out.strip().splitlines()[-1]
        remote_wheel = f"{base}/{wheel.name}"
        conn = await self.pool.connection(name)

        async def upload() -> None:
            async with conn.start_sftp_client() as sftp:
                await sftp.put(str(wheel), remote_wheel)

        try:
            await asyncio.wait_for(upload(), UPLOAD_TIMEOUT_S)
        except TimeoutError:
            raise LoadtowerError(f"agent host {name}: copying {wheel.name} over SFTP took over "
                                 f"{UPLOAD_TIMEOUT_S:g} s") from None
        venv = f"{base}/venv-{agent_build_id()}"
        extra = "[fast]" if importlib.util.find_spec("acsylla") else ""
        install = (
            f"test -x {shlex.quote(venv)}/bin/python || {shlex.quote(host.python)} -m venv "
            f"{shlex.quote(venv)} && {shlex.quote(venv)}/bin/pip install -q --disable-pip-version-check "
            f"{shlex.quote(remote_wheel + extra)}"
        )
        status, out, err = await self.pool.run(name, install, timeout=INSTALL_TIMEOUT_S)
        if status != 0:
            last = ((err or out).strip().splitlines() or ["(no output)"])[-1]
            raise LoadtowerError(
                f"agent host {name}: installing loadtower-agent into {venv} failed: {last}")
        python = f"{venv}/bin/python"
        now = await self._found(name, python)
        if now != self.expected:
            raise LoadtowerError(f"agent host {name}: after bootstrapping, {python} reports "
                                 f"{now or 'no loadtower'}, expected {self.expected}")
        self.sinks.event("agents", f"agent host {name}: bootstrapped {now} in {venv} in "
                         f"{time.monotonic() - started:.0f} s", host=name,
                         data={"python": python})
        return python
