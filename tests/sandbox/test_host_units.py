"""The cluster host substrate's pure parts: names and addresses, the argv ``wrap``
builds, the cgroup hierarchies found in /proc/mounts, sudo rules (checked by the real
visudo on a temporary file) and the sshd_config / known_hosts text."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from loadtower.errors import LoadtowerError
from loadtower.sandbox import host_cgroup, host_sshd, host_user, netns

SPLIT_MOUNTS = """\
tmpfs /sys/fs/cgroup tmpfs rw,relatime,mode=755 0 0
cgroup /sys/fs/cgroup/cpu cgroup rw,relatime,cpu 0 0
cgroup /sys/fs/cgroup/cpuacct cgroup rw,relatime,cpuacct 0 0
cgroup /sys/fs/cgroup/memory cgroup rw,relatime,memory 0 0
cgroup2 /sys/fs/cgroup/unified cgroup2 rw,relatime 0 0
"""
SHARED_MOUNTS = """\
cgroup /sys/fs/cgroup/cpu,cpuacct cgroup rw,nosuid,cpu,cpuacct 0 0
cgroup /sys/fs/cgroup/memory cgroup rw,nosuid,memory 0 0
"""


def test_addresses_and_names_follow_the_cluster_design() -> None:
    assert netns.HOSTS == {"db1": 11, "db2": 12, "db3": 13, "agent1": 21, "agent2": 22, "ch1": 31}
    assert netns.data_address("db2") == "198.18.0.12"
    assert netns.mgmt_address("agent1") == "198.19.0.21"
    assert netns.namespace("ch1") == "ltc-ch1"
    for name in netns.HOSTS:
        assert len(netns.data_link(name)) <= netns.IFNAMSIZ
        assert len(netns.mgmt_link(name)) <= netns.IFNAMSIZ


def test_macs_are_fixed_locally_administered_and_distinct() -> None:
    macs = [netns.mac(network, octet, inside) for network in (0, 1) for octet in [1, *netns.HOSTS.values()] for inside in (False, True)]
    assert len(set(macs)) == len(macs)
    for address in macs:
        first = int(address.split(":")[0], 16)
        assert first & 0b10 and not first & 0b1  # locally administered, unicast
    assert netns.mac(0, 11, inside=True) == "02:4c:54:00:00:0b"


@pytest.mark.parametrize("name", ["db9", "", "DB1", "db1; reboot", "agent1x"])
def test_unknown_host_names_are_one_clear_line(name: str) -> None:
    with pytest.raises(LoadtowerError, match=r"unknown cluster host .*db1, db2, db3, agent1, agent2, ch1$") as info:
        netns.data_address(name)
    assert "\n" not in str(info.value)
    with pytest.raises(LoadtowerError):
        host_cgroup.wrap(name, ["true"], SPLIT_MOUNTS)


def test_link_commands_take_both_ends_of_the_data_link() -> None:
    down = netns.link_commands("db3", False)
    assert len(down) == 2
    outer, inner = down
    assert outer[0].startswith("/") and outer[1] == f"--net={netns.ROOT_NET}"
    assert outer[2:] == [netns.tool("ip"), "link", "set", "dev", "ltcd-db3", "down"]
    assert inner == [netns.tool("ip"), "-n", "ltc-db3", "link", "set", "dev", "data0", "down"]
    assert [argv[-1] for argv in netns.link_commands("db3", True)] == ["up", "up"]


def test_cgroup_hierarchies_apart_or_shared() -> None:
    assert host_cgroup.directories("db1", SPLIT_MOUNTS) == [
        Path("/sys/fs/cgroup/cpu/loadtower/db1"),
        Path("/sys/fs/cgroup/cpuacct/loadtower/db1"),
        Path("/sys/fs/cgroup/memory/loadtower/db1"),
    ]
    assert host_cgroup.directories("db1", SHARED_MOUNTS) == [
        Path("/sys/fs/cgroup/cpu,cpuacct/loadtower/db1"),
        Path("/sys/fs/cgroup/memory/loadtower/db1"),
    ]
    with pytest.raises(LoadtowerError, match="no cgroup v1 hierarchy for memory"):
        host_cgroup.mounts(SPLIT_MOUNTS.replace("memory", "blkio"))


def test_wrap_joins_every_cgroup_then_execs_nsenter_with_argv_untouched() -> None:
    argv = ["/usr/bin/python3", "-c", "print('a b'); import sys", "$HOME", "it's"]
    wrapped = host_cgroup.wrap("agent2", argv, SHARED_MOUNTS)
    assert wrapped[:2] == ["/bin/sh", "-c"]
    assert wrapped[3:] == ["sh", *argv]  # positional: never parsed by the shell
    script = wrapped[2]
    joins = [
        "echo $$ > /sys/fs/cgroup/cpu,cpuacct/loadtower/agent2/cgroup.procs",
        "echo $$ > /sys/fs/cgroup/memory/loadtower/agent2/cgroup.procs",
    ]
    nsenter = netns.tool("nsenter")
    assert script == f'set -e; {"; ".join(joins)}; exec {nsenter} --net=/run/netns/ltc-agent2 "$@"'
    syntax = subprocess.run(["/bin/sh", "-n", "-c", script], capture_output=True, timeout=30)
    assert syntax.returncode == 0, syntax.stderr
    with pytest.raises(LoadtowerError, match="nothing to run"):
        host_cgroup.wrap("agent2", [], SHARED_MOUNTS)


def test_sudo_rule_escapes_sudoers_specials_and_wants_absolute_paths() -> None:
    rule = host_user.command_rule(["/usr/bin/nsenter", "--net=/run/x", "/usr/bin/ip", "a:b,c\\d"])
    assert rule == "ltsandbox ALL=(root) NOPASSWD: /usr/bin/nsenter --net\\=/run/x /usr/bin/ip a\\:b\\,c\\\\d"
    with pytest.raises(LoadtowerError, match="absolute path"):
        host_user.command_rule(["ip", "link"])
    with pytest.raises(LoadtowerError, match="blanks"):
        host_user.command_rule(["/usr/bin/ip", "link set"])
    with pytest.raises(LoadtowerError, match="one non-empty line"):
        host_user.sudoers_text(["ltsandbox ALL=(root) NOPASSWD: /usr/bin/id\nALL ALL=(ALL) ALL"])


needs_visudo = pytest.mark.skipif(
    not (shutil.which("visudo") or Path("/usr/sbin/visudo").exists()),
    reason="sudo is not installed (scripts/install.sh installs it)",
)


@needs_visudo
def test_visudo_accepts_the_partition_and_heal_rules(tmp_path: Path) -> None:
    rules = [host_user.command_rule(argv) for up in (False, True) for argv in netns.link_commands("db1", up)]
    text = host_user.sudoers_text(rules)
    assert text.startswith(host_user.HEADER) and text.count("\n") == 5
    path = tmp_path / "rules"
    path.write_text(text)
    host_user.validate(path)


@needs_visudo
def test_visudo_rejects_a_broken_rule_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "rules"
    path.write_text(host_user.sudoers_text(["ltsandbox ALL=(root) NOPASSWD /usr/bin/id"]))  # no colon
    with pytest.raises(LoadtowerError, match=r"^sudo rules for ltsandbox are invalid") as info:
        host_user.validate(path)
    assert "\n" not in str(info.value)


def test_sshd_config_and_known_hosts_text(tmp_path: Path) -> None:
    text = host_sshd.config_text("db2", tmp_path / "key", tmp_path / "sshd.pid")
    lines = set(text.splitlines())
    for wanted in [
        "Port 22",
        "ListenAddress 198.19.0.12",
        f"HostKey {tmp_path / 'key'}",
        "AllowUsers ltsandbox",
        "AllowTcpForwarding yes",
        "Subsystem sftp internal-sftp",
        "PasswordAuthentication no",
        "PermitRootLogin no",
        "StrictModes yes",
    ]:
        assert wanted in lines
    line = host_sshd.known_hosts_line("db2", "ssh-ed25519 AAAAC3Nz loadtower-cluster-db2\n")
    assert line == "198.19.0.12 ssh-ed25519 AAAAC3Nz\n"  # port 22: no [address]:port brackets


def test_sshd_accepts_the_generated_config(tmp_path: Path) -> None:
    if not Path("/run/sshd").is_dir():
        pytest.skip("sshd -t wants its privilege separation directory /run/sshd")
    host_key = tmp_path / "ssh_host_ed25519_key"
    from loadtower.sandbox.ssh_server import keygen

    keygen(host_key, "test")
    config = tmp_path / "sshd_config"
    config.write_text(host_sshd.config_text("db1", host_key, tmp_path / "sshd.pid"))
    check = subprocess.run([*host_sshd.command(config)[:1], "-t", "-f", str(config)], capture_output=True, text=True, timeout=30)
    assert check.returncode == 0, check.stderr
