"""A workload file's data sets, copied to each agent host over the run's SSH (asyncssh
SFTP) so the agents read them locally (agents/workload/dataset_reader.py).

Each file goes to ``<bootstrap_dir>/datasets/<sha256 prefix>-<name>`` on the host:
the name carries the content's sha256, so a file of that name and the same size is the
same file and is not copied again (a copy is written under a temporary name and
renamed when complete: a name never holds a partial file). The folder is made (or set)
0700 and each copy keeps its source's permissions for the owner and group/others' read
only when the source grants it (a 0600 source is a 0600 copy, never 0644). The workload file spec
sent to that host's agents then carries the absolute agent-side path
(``with_agent_paths``).
"""

from __future__ import annotations

import asyncio
import copy
import hashlib
import secrets
import stat
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loadtower.errors import LoadtowerError
from loadtower.protocol.workload_file_spec import WorkloadFileSpec

DATASETS_DIR = "datasets"
CHECK_TIMEOUT_S = 60.0
UPLOAD_TIMEOUT_S = 300.0  # plus a second per MB (as the agent wheelhouse)
UPLOAD_MIN_BPS = 1e6
_HASH_CHUNK = 4 << 20
_digests: dict[tuple[str, int, int], str] = {}


def sha256_of(path: Path) -> str:
    """The file's sha256 (hex), remembered per path, size and mtime."""
    st = path.stat()
    key = (str(path), st.st_size, st.st_mtime_ns)
    if key not in _digests:
        digest = hashlib.sha256()
        with path.open("rb") as f:
            while chunk := f.read(_HASH_CHUNK):
                digest.update(chunk)
        _digests[key] = digest.hexdigest()
    return _digests[key]


@dataclass(frozen=True)
class Upload:
    """One data set file to put on the agents."""

    name: str  # the data set's name in the workload file
    path: Path
    sha256: str
    size: int

    @property
    def remote_name(self) -> str:
        return f"{self.sha256[:16]}-{self.path.name}"


def uploads(spec: WorkloadFileSpec) -> list[Upload]:
    """The data set files a workload file spec names (their local, resolved paths)."""
    out = []
    for name, dataset in spec.get("model", {}).get("datasets", {}).items():
        path = Path(dataset["file"])
        out.append(Upload(name, path, sha256_of(path), path.stat().st_size))
    return out


def copy_mode(path: Path) -> int:
    """The mode a copy of `path` gets: at least 0600 for its owner, read for group and
    others only when the source allows it, never execute or write for them."""
    return (stat.S_IMODE(path.stat().st_mode) & 0o644) | 0o600


def with_agent_paths(spec: WorkloadFileSpec, paths: dict[str, str]) -> WorkloadFileSpec:
    """The spec with each data set's ``file`` replaced by its agent-side path."""
    if not paths:
        return spec
    out = copy.deepcopy(spec)
    for name, remote in paths.items():
        out["model"]["datasets"][name]["file"] = remote
    return out


def shell_word(text: str) -> str:
    """A path for the remote shell: a leading ``~/`` stays unquoted (the shell expands it)."""
    if text.startswith("~/"):
        return "~/" + _quote(text[2:])
    return _quote(text)


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"


async def ship_datasets(pool: Any, host: str, bootstrap_dir: str, files: list[Upload],
                        event: Any = None) -> dict[str, str]:
    """Copy `files` to `host` (skipping those already there); data set name -> the
    path the agent reads. `pool`: the run's HostPool; `event(message, data)`: a line
    for the run's events."""
    if not files:
        return {}
    directory = f"{bootstrap_dir.rstrip('/')}/{DATASETS_DIR}"
    status, out, err = await pool.run(
        host, f"mkdir -p {shell_word(directory)} && chmod 700 {shell_word(directory)} && "
              f"cd {shell_word(directory)} && pwd",
        timeout=CHECK_TIMEOUT_S)
    if status != 0 or not out.strip():
        raise LoadtowerError(f"agent host {host}: cannot create {directory}: "
                             f"{(err or out).strip()}")
    remote_dir = out.strip().splitlines()[-1]
    started = time.monotonic()
    conn = await pool.connection(host)
    total = sum(f.size for f in files)

    async def copy_missing() -> list[Upload]:
        async with conn.start_sftp_client() as sftp:
            there = {str(n.filename): n.attrs.size for n in await sftp.readdir(remote_dir)}
            todo = [f for f in files if there.get(f.remote_name) != f.size]
            for f in todo:
                part = f"{remote_dir}/.{f.remote_name}.{secrets.token_hex(4)}.part"
                try:
                    await sftp.put(str(f.path), part)
                    await sftp.chmod(part, copy_mode(f.path))
                    await sftp.posix_rename(part, f"{remote_dir}/{f.remote_name}")
                finally:
                    if await sftp.exists(part):
                        await sftp.remove(part)
            for f in files:  # a copy an older loadtower left (0644) is set too
                if f not in todo:
                    await sftp.chmod(f"{remote_dir}/{f.remote_name}", copy_mode(f.path))
            return todo

    limit = UPLOAD_TIMEOUT_S + total / UPLOAD_MIN_BPS
    try:
        copied = await asyncio.wait_for(copy_missing(), limit)
    except TimeoutError:
        raise LoadtowerError(f"agent host {host}: copying {len(files)} data set files "
                             f"({total / 1e6:.0f} MB) over SFTP took over {limit:.0f} s") from None
    if event is not None:
        sent = sum(f.size for f in copied)
        event(f"agent host {host}: copied {len(copied)} of {len(files)} data set files "
              f"({sent / 1e6:.1f} MB; {len(files) - len(copied)} were there already) to "
              f"{remote_dir} in {time.monotonic() - started:.1f} s",
              {"files": len(copied), "bytes": sent})
    return {f.name: f"{remote_dir}/{f.remote_name}" for f in files}


def plan_uploads(workloads: dict[str, Any]) -> list[Upload]:
    """Every data set file of a plan's workload files (``Plan.workloads``: checked
    files, whose data sets' ``file`` is the resolved local path), each file once."""
    out: dict[Path, Upload] = {}
    for checked in workloads.values():
        for name, dataset in checked.model.datasets.items():
            path = Path(dataset.file)
            if path not in out:
                out[path] = Upload(name, path, sha256_of(path), path.stat().st_size)
    return list(out.values())


async def ship_plan_datasets(pool: Any, inventory: Any, workloads: dict[str, Any],
                             event: Any = None) -> dict[str, str]:
    """Copy the plan's data set files to every agent host at once: local path -> the
    path the agents read (the same on every host: the absolute path when all hosts
    have it, else ``<bootstrap_dir>/datasets/<name>`` with ``~`` expanded by the agent;
    agent hosts with different bootstrap_dir settings are refused in one line)."""
    files = plan_uploads(workloads)
    agents = inventory.with_role("agent")
    if not files or not agents:
        return {}
    dirs = {str(host.bootstrap_dir).rstrip("/") for host in agents.values()}
    if len(dirs) > 1:
        raise LoadtowerError("the agent hosts have different bootstrap_dir settings "
                             f"({', '.join(sorted(dirs))}): a workload file's data sets go "
                             "to one path on every agent host")
    base = next(iter(dirs))
    keyed = [Upload(str(f.path), f.path, f.sha256, f.size) for f in files]
    got = await asyncio.gather(*(ship_datasets(pool, name, str(host.bootstrap_dir), keyed,
                                               event) for name, host in agents.items()))
    out = {}
    for f in keyed:
        there = {paths[f.name] for paths in got}
        out[f.name] = there.pop() if len(there) == 1 else f"{base}/{DATASETS_DIR}/{f.remote_name}"
    return out


def agent_spec(spec: WorkloadFileSpec, paths: dict[str, str]) -> WorkloadFileSpec:
    """`spec` with each data set's local ``file`` replaced by its agent-side path
    (`paths`: local path -> agent path, from ``ship_plan_datasets``)."""
    named = {name: paths[d["file"]] for name, d in spec.get("model", {}).get(
        "datasets", {}).items() if d.get("file") in paths}
    return with_agent_paths(spec, named)
