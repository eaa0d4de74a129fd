"""The cluster sandbox's hosts as network namespaces on two bridges (issue 19).

Two networks, both only inside namespaces we create: DATA 198.18.0.0/24 on the bridge
``ltc-data`` (root namespace address 198.18.0.1) and MGMT 198.19.0.0/24 on ``ltc-mgmt``
(198.19.0.1, SSH control only). A host NAME is the namespace ``ltc-NAME`` with two veth
pairs: ``ltcd-NAME`` (root side, on ltc-data) / ``data0`` (inside, 198.18.0.X/24) and
``ltcm-NAME`` / ``mgmt0`` (198.19.0.X/24), and ``lo`` up. There is no default route
inside, so a host reaches nothing but its two /24s and itself; ip_forward is not
touched. IPv6 is switched off on every link we make, so not even link-local
solicitations leave them.

A partition (``set_data_link``) takes both ends of a host's DATA link down, while its
MGMT link, and so SSH, keeps working. It must also work from inside the host's own
namespace (``heal`` is sent over SSH to the partitioned host and run with sudo), where
the root-side end ``ltcd-NAME`` is not visible. ``nsenter --net=/proc/1/ns/net`` is no
way back here: /proc/1/ns/net is not readable on this machine kind (pid 1 holds a
capability our bounding set lacks, so the ptrace access check fails). So
``create_fabric`` bind-mounts the orchestrator's network namespace on ``ROOT_NET``
(/run/loadtower-cluster/root.net) and the root side is reached with
``nsenter --net=ROOT_NET ip link set dev ltcd-NAME down|up``; the inside end with
``ip -n ltc-NAME link set dev data0 down|up``. ``link_commands`` gives those exact
argvs, for the sudo rules of the ``partition`` / ``heal`` node actions.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from loadtower.errors import LoadtowerError

HOSTS: dict[str, int] = {"db1": 11, "db2": 12, "db3": 13, "agent1": 21, "agent2": 22, "ch1": 31}
PREFIX = "ltc-"
DATA_BRIDGE = "ltc-data"
MGMT_BRIDGE = "ltc-mgmt"
DATA_NET = "198.18.0"
MGMT_NET = "198.19.0"
ROOT_OCTET = 1
DATA_INSIDE = "data0"
MGMT_INSIDE = "mgmt0"
ROOT_NET_DIR = Path("/run/loadtower-cluster")
ROOT_NET = ROOT_NET_DIR / "root.net"
IFNAMSIZ = 15  # the kernel's limit on an interface name (without the NUL)
TIMEOUT = 30.0


def check_name(name: str) -> None:
    """One clear line for a host name the cluster design does not know."""
    if name not in HOSTS:
        raise LoadtowerError(
            f"unknown cluster host {name!r}: the cluster sandbox's hosts are {', '.join(HOSTS)}"
        )
    for link in (data_link(name), mgmt_link(name)):
        if len(link) > IFNAMSIZ:  # only reachable if HOSTS gains a long name
            raise LoadtowerError(f"cluster host name {name!r} is too long for link {link!r}")


def namespace(name: str) -> str:
    return f"{PREFIX}{name}"


def data_address(name: str) -> str:
    check_name(name)
    return f"{DATA_NET}.{HOSTS[name]}"


def mgmt_address(name: str) -> str:
    check_name(name)
    return f"{MGMT_NET}.{HOSTS[name]}"


def data_link(name: str) -> str:
    """The root-side end of the host's DATA veth pair (on the ltc-data bridge)."""
    return f"ltcd-{name}"


def mgmt_link(name: str) -> str:
    """The root-side end of the host's MGMT veth pair (on the ltc-mgmt bridge)."""
    return f"ltcm-{name}"


PACKAGES = {"ip": "iproute2", "sudo": "sudo", "visudo": "sudo", "useradd": "passwd", "userdel": "passwd"}


def tool(name: str) -> str:
    """Absolute path of a system tool (sudo rules need absolute paths)."""
    for directory in ("/usr/sbin", "/usr/bin", "/sbin", "/bin"):
        path = Path(directory) / name
        if path.exists():
            return str(path)
    found = shutil.which(name)
    if not found:
        raise LoadtowerError(f"{name} is not installed (apt-get install {PACKAGES.get(name, 'util-linux')})")
    return found


def run(argv: list[str], timeout: float = TIMEOUT, check: bool = True) -> str:
    """Run a system tool; its output, or one LoadtowerError line naming the command."""
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as exc:
        raise LoadtowerError(f"{' '.join(argv)}: no answer after {timeout:.0f} s") from exc
    except OSError as exc:
        raise LoadtowerError(f"{' '.join(argv)}: {exc}") from exc
    if check and proc.returncode != 0:
        detail = (proc.stderr.strip() or proc.stdout.strip()).splitlines()
        raise LoadtowerError(f"{' '.join(argv)}: {detail[0] if detail else f'exit {proc.returncode}'}")
    return proc.stdout


def ip(*args: str, netns: str | None = None, check: bool = True) -> str:
    return run([tool("ip"), *(["-n", netns] if netns else []), *args], check=check)


def namespaces() -> list[str]:
    """Every ``ltc-*`` network namespace (ours, by name)."""
    out = ip("-j", "netns", "list", check=False).strip()
    names = [entry["name"] for entry in json.loads(out)] if out else []
    return sorted(n for n in names if n.startswith(PREFIX))


def links(netns: str | None = None) -> dict[str, dict]:
    """Interface name -> ``ip -j link`` record, in the root namespace or ``netns``."""
    out = ip("-j", "link", "show", netns=netns, check=False).strip()
    return {entry["ifname"]: entry for entry in json.loads(out)} if out else {}


def _no_ipv6(link: str) -> None:
    """Root-namespace link: no IPv6 (no link-local address, no solicitations)."""
    path = Path(f"/proc/sys/net/ipv6/conf/{link}/disable_ipv6")
    if path.exists():
        path.write_text("1\n")


def _mount_root_net() -> None:
    """Name this (the orchestrator's) network namespace for ``nsenter`` (module doc)."""
    if ROOT_NET.exists() and os.path.ismount(ROOT_NET):
        return
    ROOT_NET_DIR.mkdir(mode=0o755, parents=True, exist_ok=True)
    ROOT_NET.touch(mode=0o444)
    run([tool("mount"), "--bind", f"/proc/{os.getpid()}/ns/net", str(ROOT_NET)])


def unmount_root_net() -> bool:
    """Undo ``_mount_root_net``; True when there was something to remove."""
    found = False
    if ROOT_NET.exists():
        found = True
        while os.path.ismount(ROOT_NET):
            run([tool("umount"), str(ROOT_NET)])
        ROOT_NET.unlink()
    if ROOT_NET_DIR.exists():
        found = True
        ROOT_NET_DIR.rmdir()
    return found


def mac(network: int, octet: int, inside: bool) -> str:
    """A fixed, locally administered MAC per link: DATA is network 0, MGMT 1; a bridge
    is octet 1 (outside). A host's links made again (``add_host`` repairing a crash)
    get the same MACs, so no peer's neighbour entry goes stale, and a bridge keeps its
    address whatever ports come and go."""
    return f"02:4c:54:{network:02x}:{0 if inside else 1:02x}:{octet:02x}"


def create_fabric() -> None:
    """Both bridges with their root-namespace addresses, up. Idempotent."""
    if os.geteuid() != 0:
        raise LoadtowerError("the cluster sandbox needs root (network namespaces, cgroups)")
    _mount_root_net()
    present = links()
    for network, (bridge, net) in enumerate(((DATA_BRIDGE, DATA_NET), (MGMT_BRIDGE, MGMT_NET))):
        address = mac(network, ROOT_OCTET, inside=False)
        if bridge not in present:
            ip("link", "add", "name", bridge, "address", address, "type", "bridge")
        ip("link", "set", "dev", bridge, "address", address)
        _no_ipv6(bridge)
        ip("addr", "replace", f"{net}.{ROOT_OCTET}/24", "dev", bridge)
        ip("link", "set", "dev", bridge, "up")


def add_host(name: str) -> None:
    """The host's namespace, its two veth pairs on the bridges, addresses, links and
    lo up. Idempotent (a half-made host from a crash is completed)."""
    check_name(name)
    ns = namespace(name)
    if ns not in namespaces():
        ip("netns", "add", ns)
    # before any link exists inside: no IPv6 on links made in this namespace
    conf = "/proc/sys/net/ipv6/conf"
    no_ipv6 = f"[ ! -d {conf} ] || {{ echo 1 > {conf}/default/disable_ipv6; echo 1 > {conf}/all/disable_ipv6; }}"
    run([tool("ip"), "netns", "exec", ns, "/bin/sh", "-c", no_ipv6])
    inside = links(ns)
    present = links()
    pairs = (
        (data_link(name), DATA_INSIDE, DATA_BRIDGE, data_address(name)),
        (mgmt_link(name), MGMT_INSIDE, MGMT_BRIDGE, mgmt_address(name)),
    )
    for network, (outer, inner, bridge, address) in enumerate(pairs):
        outer_mac, inner_mac = (mac(network, HOSTS[name], inside) for inside in (False, True))
        if outer in present and inner not in inside:  # a pair half-made by a crash
            ip("link", "delete", "dev", outer)
            del present[outer]
        if outer not in present:
            if inner in inside:  # an inside end whose outer end is gone
                ip("link", "delete", "dev", inner, netns=ns)
            ip("link", "add", "name", outer, "address", outer_mac, "type", "veth",
               "peer", "name", inner, "address", inner_mac, "netns", ns)
        ip("link", "set", "dev", outer, "address", outer_mac)
        ip("link", "set", "dev", inner, "address", inner_mac, netns=ns)
        _no_ipv6(outer)
        ip("link", "set", "dev", outer, "master", bridge, "up")
        ip("addr", "replace", f"{address}/24", "dev", inner, netns=ns)
        ip("link", "set", "dev", inner, "up", netns=ns)
    ip("link", "set", "dev", "lo", "up", netns=ns)


def link_commands(name: str, up: bool) -> list[list[str]]:
    """The argvs that take the host's DATA link (both ends) up or down, from any
    network namespace, as root: what ``set_data_link`` runs and what the sudo rules
    of the partition / heal node actions allow (module doc)."""
    check_name(name)
    state = "up" if up else "down"
    return [
        [tool("nsenter"), f"--net={ROOT_NET}", tool("ip"), "link", "set", "dev", data_link(name), state],
        [tool("ip"), "-n", namespace(name), "link", "set", "dev", DATA_INSIDE, state],
    ]


def set_data_link(name: str, up: bool) -> None:
    """Partition (``up=False``) or heal the host: both ends of its DATA link."""
    commands = link_commands(name, up)
    if not up:
        commands.reverse()  # inside first: the host's own sockets fail at once
    for argv in commands:
        run(argv)


def data_link_up(name: str) -> bool:
    """Both ends of the host's DATA link are administratively up."""
    check_name(name)
    outer = [tool("nsenter"), f"--net={ROOT_NET}", tool("ip"), "-j", "link", "show"]
    out = run([*outer, "dev", data_link(name)], check=False).strip()
    inside = ip("-j", "link", "show", "dev", DATA_INSIDE, netns=namespace(name), check=False).strip()
    if not out or not inside:
        return False
    return all("UP" in json.loads(text)[0]["flags"] for text in (out, inside))
