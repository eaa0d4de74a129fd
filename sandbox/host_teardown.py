"""Remove the whole cluster substrate by name, with or without a state file.

Everything the cluster sandbox makes is found by its name: ``ltc-*`` namespaces, the
root-side veths ``ltcd-*`` / ``ltcm-*`` and the bridges ``ltc-data`` / ``ltc-mgmt``,
the cgroup directories under ``loadtower/`` in each hierarchy, the user ``ltsandbox``,
/etc/sudoers.d/loadtower-sandbox and the root-namespace handle
/run/loadtower-cluster/root.net. So ``down`` after a SIGKILL of ``up`` removes it all.
Processes are found by ``ip netns pids`` and in the cgroups' ``cgroup.procs`` and get
SIGCONT, SIGTERM, then SIGKILL after the timeout.
"""

from __future__ import annotations

from pathlib import Path

from loadtower.errors import LoadtowerError
from loadtower.sandbox import host_cgroup, host_user, netns


def _link_names() -> list[str]:
    """Root-namespace links of ours: the veths' root ends, then the bridges."""
    names = netns.links()
    veths = sorted(n for n in names if n.startswith(("ltcd-", "ltcm-")))
    bridges = sorted(n for n in names if n.startswith(netns.PREFIX))
    return veths + bridges


def _cgroup_dirs() -> list[Path]:
    """Host cgroups first, then each hierarchy's ``loadtower`` parent."""
    parents = [p for p in host_cgroup.parents() if p.exists()]
    children = sorted(d for p in parents for d in p.iterdir() if d.is_dir())
    return children + parents


def processes() -> set[int]:
    """Every process in an ``ltc-*`` namespace or a ``loadtower/*`` cgroup."""
    found: set[int] = set()
    for ns in netns.namespaces():
        found |= {int(p) for p in netns.ip("netns", "pids", ns, check=False).split()}
    for directory in _cgroup_dirs():
        found |= host_cgroup.pids_in(directory)
    return {pid for pid in found if host_cgroup.alive(pid)}


def _describe(pid: int) -> str:
    try:
        comm = Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        comm = "?"
    return f"process {pid} ({comm})"


def remove_all(timeout: float = 20.0) -> list[str]:
    """Remove, in order: every process in our namespaces and cgroups, the namespaces,
    the root-side veths, both bridges, the cgroups, the user and its sudo rules, the
    root-namespace handle. Idempotent; returns what it removed."""
    removed: list[str] = []
    for _ in range(3):  # again, for what started meanwhile (a new SSH session's sshd)
        found = processes()
        if not found:
            break
        removed += [_describe(pid) for pid in sorted(found)]
        host_cgroup.kill_all(found, timeout)
    for ns in netns.namespaces():
        netns.ip("netns", "delete", ns)
        removed.append(f"namespace {ns}")
    for link in _link_names():
        if link in netns.links():  # a veth goes with its peer's namespace
            netns.ip("link", "delete", "dev", link, check=False)
            if link in netns.links():
                raise LoadtowerError(f"cannot delete link {link} (ip link delete dev {link})")
            removed.append(f"link {link}")
    for directory in _cgroup_dirs():
        if host_cgroup.rmdir(directory, timeout):
            removed.append(f"cgroup {directory}")
    if host_user.exists():
        host_user.remove(timeout)
        removed.append(f"user {host_user.USER}")
    if host_user.SUDOERS.exists():
        host_user.SUDOERS.unlink()
        removed.append(f"file {host_user.SUDOERS}")
    if netns.unmount_root_net():
        removed.append(f"file {netns.ROOT_NET}")
    return removed


def leftovers() -> list[str]:
    """Anything of the cluster substrate still present (empty when ``down`` is done)."""
    found = [_describe(pid) for pid in sorted(processes())]
    found += [f"namespace {ns}" for ns in netns.namespaces()]
    found += [f"link {link}" for link in _link_names()]
    found += [f"cgroup {d}" for d in _cgroup_dirs()]
    if host_user.exists():
        found.append(f"user {host_user.USER}")
        found += [_describe(pid) for pid in sorted(host_user.processes())]
    if host_user.HOME.exists():
        found.append(f"directory {host_user.HOME}")
    if host_user.SUDOERS.exists():
        found.append(f"file {host_user.SUDOERS}")
    if netns.ROOT_NET_DIR.exists():
        found.append(f"file {netns.ROOT_NET}")
    return found

