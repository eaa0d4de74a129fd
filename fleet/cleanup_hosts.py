"""The `loadtower cleanup` pass: list marked processes per machine, stop the leftovers."""

from __future__ import annotations

import asyncio
import contextlib
import shlex
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from loadtower.errors import LoadtowerError
from loadtower.fleet.cleanup_script import (
    LIST_SCRIPT,
    Found,
    MachineId,
    decide,
    describe_owner,
    parse_listing,
    parse_stop,
    stop_script,
)
from loadtower.fleet.cleanup_secrets import describe, sweep_script
from loadtower.fleet.dataset_cleanup import remove_all
from loadtower.scenarios.models import Inventory

if TYPE_CHECKING:
    from loadtower.fleet.ssh_pool import Endpoint, HostPool

LIST_TIMEOUT_S = 60.0
Runner = Callable[[str, float], Awaitable[tuple[int, str, str]]]


@dataclass
class CleanupOptions:
    dry_run: bool = False
    run_id: str | None = None
    stop_all: bool = False
    timeout_s: float = 10.0
    accept_new_host_keys: bool = False
    datasets: bool = False  # also remove the data set copies on the agent hosts


@dataclass
class Machine:
    """One machine, reached through one or more inventory hosts (or this machine)."""

    labels: list[str]
    run: Runner
    id: MachineId | None = None
    found: list[Found] = field(default_factory=list)


async def _local(script: str, timeout: float) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        "sh", "-c", script, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise LoadtowerError(f"the process listing took over {timeout:g} s") from None
    return proc.returncode or 0, out.decode(errors="replace"), err.decode(errors="replace")


def _remote(pool: HostPool, name: str) -> Runner:
    async def run(script: str, timeout: float) -> tuple[int, str, str]:
        return await pool.run(name, f"sh -c {shlex.quote(script)}", timeout=timeout)

    return run


async def _list(machine: Machine) -> str | None:
    """Fill machine.boot and machine.found; an error line if the machine cannot be checked."""
    try:
        status, out, err = await machine.run(LIST_SCRIPT, LIST_TIMEOUT_S)
    except LoadtowerError as exc:
        return str(exc)
    if "MACHINE " not in out:
        detail = (err.strip().splitlines() or [f"exit status {status}"])[-1]
        return f"cannot list processes: {detail}"
    machine.id, machine.found = parse_listing(out)
    return None


def _group_hosts(inventory: Inventory, pool: HostPool) -> list[Machine]:
    by_endpoint: dict[Endpoint, list[str]] = {}
    for name in inventory.hosts:
        by_endpoint.setdefault(pool.endpoint(name), []).append(name)
    machines = []
    for endpoint, names in by_endpoint.items():
        where = f"{endpoint.host}:{endpoint.port}"
        machines.append(Machine([f"{', '.join(names)} ({where})"], _remote(pool, names[0])))
    return machines


def _merge(machines: list[Machine]) -> list[Machine]:
    """Endpoints that reach the same machine (boot id and pid namespace) become one."""
    merged: dict[tuple[str, str], Machine] = {}
    out = []
    for machine in machines:
        key = machine.id.key if machine.id else None
        if key and key in merged:
            merged[key].labels += machine.labels
            continue
        if key:
            merged[key] = machine
        out.append(machine)
    return out


async def _handle(machine: Machine, options: CleanupOptions) -> bool:
    """Print what was found on `machine` and stop the leftovers; False on any failure."""
    label = " and ".join(machine.labels)
    procs = [p for p in machine.found if options.run_id in (None, p.run_id)]
    stop = [p for p in procs if decide(p, machine.id, options.stop_all)]
    if not procs:
        print(f"{label}: no loadtower processes")
        return True
    print(f"{label}: {len(procs)} loadtower process(es), {len(stop)} to stop")
    outcome: dict[int, str] = {}
    ok = True
    if stop and not options.dry_run:
        script = stop_script([(p.pid, p.start) for p in stop], options.timeout_s)
        try:
            _status, out, _err = await machine.run(script, options.timeout_s + 30)
            outcome = parse_stop(out)
        except LoadtowerError as exc:
            print(f"  could not stop them: {exc}")
            ok = False
    for proc in procs:
        if proc not in stop:
            action = "left alone" + ("" if proc.state == "alive" else " (--all stops it)")
        elif options.dry_run:
            action = "would stop"
        else:
            result = outcome.get(proc.pid, "not confirmed")
            action = {
                "gone": "already gone",
                "terminated": "stopped (SIGTERM)",
                "killed": "stopped (SIGKILL after SIGTERM)",
                "survived": "STILL RUNNING after SIGKILL",
            }.get(result, result)
            ok = ok and result in ("gone", "terminated", "killed")
        print(f"  pid {proc.pid}  run {proc.run_id}  {describe_owner(proc)}: {action}")
        print(f"      {proc.command}")
    return ok


async def _sweep_secrets(machine: Machine, options: CleanupOptions) -> bool:
    """Remove the private directories (link key, secrets) of runs that died."""
    label = " and ".join(machine.labels)
    try:
        _status, out, _err = await machine.run(
            sweep_script(options.run_id, options.dry_run), LIST_TIMEOUT_S)
    except LoadtowerError as exc:
        print(f"{label}: could not remove the runs' private directories: {exc}")
        return False
    lines, ok = describe(label, out)
    for line in lines:
        print(line)
    return ok


def _agent_dirs(inventory: Inventory, pool: HostPool) -> list[tuple[str, Runner, str]]:
    """Each agent host's data set directory once per machine endpoint and directory."""
    by_place: dict[tuple[Endpoint, str], list[str]] = {}
    for name, host in inventory.with_role("agent", include_standby=True).items():
        by_place.setdefault((pool.endpoint(name), str(host.bootstrap_dir)), []).append(name)
    return [(", ".join(names), _remote(pool, names[0]), base)
            for (_endpoint, base), names in by_place.items()]


async def cleanup(inventory: Inventory, options: CleanupOptions) -> int:
    # deferred: the SSH pool loads asyncssh (imported when the cleanup runs)
    from loadtower.fleet.ssh_pool import HostPool

    pool = HostPool(inventory, accept_new_host_keys=options.accept_new_host_keys)
    try:
        machines = _group_hosts(inventory, pool)
        machines.append(Machine(["this machine"], _local))
        errors = await asyncio.gather(*(_list(m) for m in machines))
        ok = True
        reachable = []
        for machine, error in zip(machines, errors, strict=True):
            if error is None:
                reachable.append(machine)
            else:
                ok = False
                print(f"{' and '.join(machine.labels)}: NOT CHECKED: {error}")
        for machine in _merge(reachable):
            ok = await _handle(machine, options) and ok
        for machine in reachable:  # each SSH user's own: not merged by machine
            ok = await _sweep_secrets(machine, options) and ok
        if options.datasets:
            ok = await remove_all(_agent_dirs(inventory, pool), options.dry_run) and ok
    finally:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(pool.close(), 15)
    return 0 if ok else 2
