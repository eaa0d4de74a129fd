"""Agent hosts run exactly the orchestrator's agent code, or the run does not start.

Each agent host's Python is asked for `loadtower agent --version`: the agent install
set's version and build id (``loadtower.build.agent_version_line()``, a digest of the
code that runs on a load host and the protocol, nothing of the orchestrator's). On a
mismatch the run fails with a line naming the host, unless bootstrapping is asked for
(`--bootstrap-agents` or `bootstrap = true` on the host): then the `loadtower-agent`
wheel (the agent install set, ``agent_wheel.build_agent_wheel``) and a wheelhouse of
its dependencies for the host's Python (``agent_wheelhouse``, downloaded here with the
orchestrator's registry access and cached) are copied over SFTP (only the files the
host lacks) and installed with no index into a venv made without pip
(``install_command``), and that venv is used. The host needs only a Python >= 3.11
with the venv module: no pip, no ensurepip, no route to a registry, no root.
"""

from __future__ import annotations

import asyncio
import importlib.util
import secrets
import shlex
import tempfile
import time
from pathlib import Path
from typing import Any

from loadtower.build import agent_build_id, agent_version_line
from loadtower.errors import LoadtowerError
from loadtower.fleet import core_wheel
from loadtower.fleet.agent_wheel import build_agent_wheel
from loadtower.fleet.agent_wheelhouse import (
    PythonTarget,
    build_wheelhouse,
    parse_probe,
    pip_wheel_of,
    probe_command,
    wheels,
)
from loadtower.install_sets import ENGINE_EXTRAS

CHECK_TIMEOUT_S = 60.0
UPLOAD_TIMEOUT_S = 300.0  # the wheel and the wheelhouse over SFTP: this, plus
UPLOAD_MIN_BPS = 1e6  # a second per MB
INSTALL_TIMEOUT_S = 900.0
VERSION_PREFIX = "loadtower-agent "


def remote_version_command(python: str) -> str:
    return f"{shlex.quote(python)} -m loadtower agent --version 2>&1"


def parse_version(output: str) -> str | None:
    """The last `loadtower-agent VERSION (build ID)` line of the output, if any."""
    lines = [line.strip() for line in output.splitlines()
             if line.strip().startswith(VERSION_PREFIX)]
    return lines[-1] if lines else None


# Holds an exclusive lock on BASE/.install.lock while it runs the rest of its arguments:
# two agent hosts sharing one home directory (one user, one file system) take turns.
LOCKED = ("import fcntl, subprocess, sys; f = open(sys.argv[1], 'a'); "
          "fcntl.flock(f, fcntl.LOCK_EX); sys.exit(subprocess.call(sys.argv[2:]))")


def install_command(python: str, base: str, venv: str, house: str, pip_wheel: str,
                    wheel: str) -> str:
    """Make the venv without pip (the host may have neither pip nor ensurepip) and run pip
    from its wheel in the wheelhouse, with no index: every file comes from `house`."""
    q = shlex.quote
    inner = (
        f"test -x {q(venv)}/bin/python || {q(python)} -m venv --without-pip {q(venv)} || exit 1; "
        f"exec {q(venv)}/bin/python {q(house + '/' + pip_wheel + '/pip')} install --no-index "
        f"--find-links {q(house)} --disable-pip-version-check --no-warn-script-location "
        f"--no-cache-dir -q {q(house + '/' + wheel)}"
    )
    return f"{q(python)} -c {q(LOCKED)} {q(base + '/.install.lock')} sh -c {q(inner)} 2>&1"


def _extras(fast: bool, house: Path) -> str:
    """The agent wheel's extras to install: every built-in engine's driver (its extra: any
    run may use any engine), acsylla ([fast]) and the Rust core ([core], when its wheel is
    in the wheelhouse)."""
    names = [*ENGINE_EXTRAS,
             *(n for n, on in (("fast", fast), ("core", core_wheel.in_house(house))) if on)]
    return f"[{','.join(names)}]"


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
        self._house_lock = asyncio.Lock()  # and one wheelhouse per target

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

    async def _wheelhouse(self, name: str, target: PythonTarget) -> tuple[Path, bool]:
        """The cached wheelhouse for the host's Python (built once per target); fast:
        with acsylla, dropped (with an event) when the target has no acsylla wheel."""
        fast = importlib.util.find_spec("acsylla") is not None
        async with self._house_lock:
            started = time.monotonic()
            try:
                path, cached = await asyncio.to_thread(build_wheelhouse, target, fast)
            except LoadtowerError as exc:
                if not fast:
                    raise LoadtowerError(f"agent host {name}: {exc}") from None
                self.sinks.event("agents", f"agent host {name}: the wheels with acsylla "
                                 f"([fast]) failed ({exc}); trying without [fast]", host=name)
                fast = False
                try:
                    path, cached = await asyncio.to_thread(build_wheelhouse, target, fast)
                except LoadtowerError as exc2:
                    raise LoadtowerError(f"agent host {name}: {exc2}") from None
            files = wheels(path)
            size = sum(p.stat().st_size for p in files)
            how = "cached" if cached else f"downloaded in {time.monotonic() - started:.0f} s"
            self.sinks.event("agents", f"agent host {name}: wheelhouse for {target.describe()}: "
                             f"{len(files)} wheels, {size / 1e6:.0f} MB ({how}; {path})",
                             host=name, data={"wheelhouse": str(path), "bytes": size})
            return path, fast

    async def _probe(self, name: str, host: Any) -> PythonTarget:
        _status, out, _err = await self.pool.run(name, probe_command(host.python),
                                                 timeout=CHECK_TIMEOUT_S)
        target = parse_probe(out)
        if target is None:
            last = (out.strip().splitlines() or ["(no output)"])[-1]
            raise LoadtowerError(f"agent host {name}: cannot run {host.python} to bootstrap "
                                 f"the agent: {last}")
        return target

    async def _base_dir(self, name: str, host: Any) -> str:
        status, out, err = await self.pool.run(
            name, f"mkdir -p {_shell_path(host.bootstrap_dir)} && cd "
            f"{_shell_path(host.bootstrap_dir)} && pwd", timeout=CHECK_TIMEOUT_S)
        if status != 0 or not out.strip():
            raise LoadtowerError(f"agent host {name}: cannot create {host.bootstrap_dir}: "
                                 f"{(err or out).strip()}")
        return out.strip().splitlines()[-1]

    async def _copy(self, name: str, files: list[Path], remote_dir: str) -> None:
        """Copy the files the host lacks (by name and size) into remote_dir over SFTP,
        each under a temporary name first, renamed when complete."""
        started = time.monotonic()
        conn = await self.pool.connection(name)
        total = sum(p.stat().st_size for p in files)

        async def copy() -> tuple[int, int]:
            async with conn.start_sftp_client() as sftp:
                await sftp.makedirs(remote_dir, exist_ok=True)
                there = {str(n.filename): n.attrs.size for n in await sftp.readdir(remote_dir)}
                todo = [p for p in files if there.get(p.name) != p.stat().st_size]
                for path in todo:
                    part = f"{remote_dir}/.{path.name}.{secrets.token_hex(4)}.part"
                    await sftp.put(str(path), part)
                    await sftp.posix_rename(part, f"{remote_dir}/{path.name}")
                return len(todo), sum(p.stat().st_size for p in todo)

        limit = UPLOAD_TIMEOUT_S + total / UPLOAD_MIN_BPS
        try:
            copied, sent = await asyncio.wait_for(copy(), limit)
        except TimeoutError:
            raise LoadtowerError(f"agent host {name}: copying {len(files)} files "
                                 f"({total / 1e6:.0f} MB) over SFTP took over {limit:.0f} s"
                                 ) from None
        took = time.monotonic() - started
        self.sinks.event("agents", f"agent host {name}: copied {copied} of {len(files)} files "
                         f"({sent / 1e6:.1f} MB; {len(files) - copied} were there already) "
                         f"to {remote_dir} in {took:.1f} s", host=name,
                         data={"files": copied, "bytes": sent, "seconds": round(took, 2)})

    async def _bootstrap(self, name: str, host: Any, found: str | None) -> str:
        started = time.monotonic()
        self.sinks.event("agents", f"agent host {name} has {found or 'no loadtower'}; "
                         f"bootstrapping {self.expected} into {host.bootstrap_dir}", host=name)
        base = await self._base_dir(name, host)
        venv = f"{base}/venv-{agent_build_id()}"
        python = f"{venv}/bin/python"
        if await self._found(name, python) == self.expected:  # an earlier run's venv
            self.sinks.event("agents", f"agent host {name}: {venv} already runs "
                             f"{self.expected}", host=name, data={"python": python})
            return python
        target = await self._probe(name, host)
        house, fast = await self._wheelhouse(name, target)
        wheel = await self._local_wheel()
        remote_house = f"{base}/wheelhouse"
        await self._copy(name, [wheel, *wheels(house)], remote_house)
        install_started = time.monotonic()
        status, out, err = await self.pool.run(
            name, install_command(host.python, base, venv, remote_house,
                                  pip_wheel_of(house).name, wheel.name + _extras(fast, house)),
            timeout=INSTALL_TIMEOUT_S)
        if status != 0:
            lines = [ln.strip() for ln in (err or out).splitlines() if ln.strip()]
            errors = [ln for ln in lines if ln.startswith("ERROR")]
            last = (errors or lines or ["(no output)"])[0 if errors else -1]
            raise LoadtowerError(
                f"agent host {name}: installing loadtower-agent into {venv} (no index) "
                f"failed: {last}")
        self.sinks.event("agents", f"agent host {name}: installed with no index in "
                         f"{time.monotonic() - install_started:.0f} s", host=name)
        now = await self._found(name, python)
        if now != self.expected:
            raise LoadtowerError(f"agent host {name}: after bootstrapping, {python} reports "
                                 f"{now or 'no loadtower'}, expected {self.expected}")
        self.sinks.event("agents", f"agent host {name}: bootstrapped {now} in {venv} in "
                         f"{time.monotonic() - started:.0f} s", host=name,
                         data={"python": python})
        return python
