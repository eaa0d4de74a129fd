"""The cluster sandbox's host substrate on real namespaces, veths, bridges, cgroups, a
real user with sudo rules and one real sshd per host (issue 19).

Run under the cluster lock (the names are fixed, one cluster per machine):
    flock /tmp/lt-cluster.lock timeout 900 .venv/bin/pytest -m integration -q \\
        tests/sandbox/test_netns_hosts.py
One module fixture brings up two hosts (db1, db2); it calls ``remove_all`` in a
``finally`` and checks that nothing is left. Every packet goes to 198.18.0.0/15
addresses inside namespaces made here, or nowhere.
"""

from __future__ import annotations

import errno
import os
import select
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from loadtower.sandbox import host_cgroup, host_sshd, host_teardown, host_user, netns
from loadtower.sandbox.processes import spawn, wait_until
from tests.leftovers import cluster_leftovers

pytestmark = pytest.mark.integration

HOSTS = ("db1", "db2")
ECHO_PORT = 7000
ID_RULE = [netns.tool("id"), "-un"]

ECHO = textwrap.dedent(
    """
    import socket, sys, threading
    srv = socket.create_server((sys.argv[1], int(sys.argv[2])))
    def serve(conn):
        with conn:
            while data := conn.recv(4096):
                conn.sendall(data)
    while True:
        conn, _ = srv.accept()
        threading.Thread(target=serve, args=(conn,), daemon=True).start()
    """
)

PROBE = textwrap.dedent(
    """
    import errno, socket, sys
    try:
        with socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=float(sys.argv[3])) as s:
            s.settimeout(float(sys.argv[3]))
            s.sendall(b"ping")
            print("echo:" + s.recv(16).decode())
    except socket.timeout:
        print("error:timeout")
    except OSError as exc:
        print("error:" + errno.errorcode.get(exc.errno or 0, str(exc)))
    """
)


class Cluster:
    """Two hosts with sshd, the user, sudo rules and an echo server on each DATA address."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.paths: host_sshd.SshdPaths | None = None

    def up(self) -> None:
        netns.create_fabric()
        for name in HOSTS:
            netns.add_host(name)
            host_cgroup.create(name)
        self.paths = host_sshd.prepare(self.directory, list(HOSTS))
        rules = [host_user.command_rule(ID_RULE)]
        for up in (False, True):
            rules += [host_user.command_rule(argv) for argv in netns.link_commands("db1", up)]
        host_user.install_sudoers(rules)
        for name in HOSTS:
            log = self.directory / f"{name}-sshd.log"
            host_sshd.start(name, self.paths["configs"][name], log)
            echo = [sys.executable, "-c", ECHO, netns.data_address(name), str(ECHO_PORT)]
            spawn(host_cgroup.wrap(name, echo), self.directory / f"{name}-echo.log")

    def ssh(self, name: str, command: str, known_hosts: str | None = None) -> subprocess.CompletedProcess[str]:
        assert self.paths is not None
        argv = [
            "ssh", "-F", "/dev/null", "-i", self.paths["key"], "-o", "IdentitiesOnly=yes",
            "-o", f"UserKnownHostsFile={known_hosts or self.paths['known_hosts']}",
            "-o", "StrictHostKeyChecking=yes", "-o", "BatchMode=yes", "-o", "ConnectTimeout=10",
            f"{host_user.USER}@{netns.mgmt_address(name)}", command,
        ]  # fmt: skip
        return subprocess.run(argv, capture_output=True, text=True, timeout=60)


def probe(host: str, address: str, port: int, timeout: float = 3.0) -> str:
    """Connect from inside ``host`` and echo 'ping': 'echo:ping' or 'error:ERRNO'."""
    argv = host_cgroup.wrap(host, [sys.executable, "-c", PROBE, address, str(port), str(timeout)])
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout + 30)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def probe_until(host: str, address: str, port: int, want: str, timeout: float = 20.0) -> str:
    """``probe`` until it answers ``want`` (a server or a link needs a moment)."""
    deadline = time.monotonic() + timeout
    while True:
        got = probe(host, address, port, timeout=2.0)
        if got == want or time.monotonic() >= deadline:
            return got
        time.sleep(0.2)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    if os.geteuid() != 0:
        pytest.skip("the cluster sandbox needs root (network namespaces, cgroups, useradd)")
    for tool in ("ip", "sshd", "sudo", "visudo", "ssh", "nsenter"):
        if not (shutil.which(tool) or Path("/usr/sbin", tool).exists()):
            pytest.skip(f"{tool} is not installed (scripts/install.sh installs it)")
    present = cluster_leftovers()
    if present:
        pytest.fail(f"a cluster sandbox is already up on this machine (`loadtower sandbox down`): {present}")
    box = Cluster(tmp_path_factory.mktemp("cluster"))
    try:
        box.up()
        yield box
    finally:
        host_teardown.remove_all()
        left = cluster_leftovers()
        assert left == [], f"left behind: {left}"


def test_hosts_reach_each_other_on_data_and_nothing_outside(cluster: Cluster) -> None:
    for here, there in (("db1", "db2"), ("db2", "db1")):
        assert probe_until(here, netns.data_address(there), ECHO_PORT, "echo:ping") == "echo:ping"
    # No default route in a host: the kernel refuses at once with ENETUNREACH, so no
    # packet is sent, and 198.51.100.1 (TEST-NET-2) is never actually contacted.
    assert probe("db1", "198.51.100.1", 80) == f"error:{errno.errorcode[errno.ENETUNREACH]}"
    routes = subprocess.run(
        [netns.tool("ip"), "-n", netns.namespace("db1"), "route", "show"],
        capture_output=True, text=True, timeout=30, check=True,
    ).stdout  # fmt: skip
    assert "default" not in routes and "198.18.0.0/24" in routes and "198.19.0.0/24" in routes
    # no IPv6 on any of our links, inside or out: not even link-local solicitations
    for where in ([netns.tool("ip"), "-n", netns.namespace("db1")], [netns.tool("ip")]):
        addresses = subprocess.run([*where, "-6", "-o", "addr", "show"], capture_output=True, text=True, timeout=30, check=True).stdout
        assert not [line for line in addresses.splitlines() if any(f" {link} " in line for link in ("data0", "mgmt0", "ltcd-db1", "ltcm-db1", "ltc-data", "ltc-mgmt"))]


def test_sshd_per_host_as_ltsandbox_in_the_hosts_cgroup(cluster: Cluster) -> None:
    assert cluster.paths is not None
    for name in HOSTS:
        proc = cluster.ssh(name, "whoami; cat /proc/self/cgroup")
        assert proc.returncode == 0, proc.stderr
        lines = proc.stdout.splitlines()
        assert lines[0] == host_user.USER
        joined = {line.split(":")[1]: line.split(":")[2] for line in lines[1:] if line.count(":") >= 2}
        assert joined["memory"] == f"/loadtower/{name}"
        assert any(f"/loadtower/{name}" == path for key, path in joined.items() if "cpuacct" in key)
    keys = {n: (host_sshd.host_dir(cluster.directory, n) / "ssh_host_ed25519_key.pub").read_text().split()[1] for n in HOSTS}
    assert keys["db1"] != keys["db2"]
    # db2's address with db1's key in known_hosts: the client refuses db2's real key
    wrong = cluster.directory / "wrong_known_hosts"
    wrong.write_text(f"{netns.mgmt_address('db2')} ssh-ed25519 {keys['db1']}\n")
    refused = cluster.ssh("db2", "true", known_hosts=str(wrong))
    assert refused.returncode != 0 and "Host key verification failed" in refused.stderr


def test_sudo_allows_the_rules_only(cluster: Cluster) -> None:
    allowed = cluster.ssh("db1", f"sudo -n {' '.join(ID_RULE)}")
    assert allowed.returncode == 0, allowed.stderr
    assert allowed.stdout.strip() == "root"
    refused = cluster.ssh("db1", "sudo -n id")
    assert refused.returncode != 0
    assert "uid=0" not in refused.stdout and "password is required" in refused.stderr


def test_busy_loop_charges_its_own_hosts_cgroup_only(cluster: Cluster) -> None:
    before = {name: host_cgroup.usage(name)[0] for name in HOSTS}
    busy = "import time\nwhile time.process_time() < 0.5:\n    pass\nprint(time.process_time_ns())"
    proc = subprocess.run(host_cgroup.wrap("db1", [sys.executable, "-c", busy]), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    spent = int(proc.stdout)
    after = {name: host_cgroup.usage(name)[0] for name in HOSTS}
    assert after["db1"] - before["db1"] >= spent
    assert after["db2"] - before["db2"] < spent
    assert host_cgroup.usage("db1")[1] > 0


def test_partition_cuts_data_keeps_mgmt_and_heal_over_ssh_restores(cluster: Cluster) -> None:
    db1 = netns.data_address("db1")
    assert probe_until("db2", db1, ECHO_PORT, "echo:ping") == "echo:ping"
    netns.set_data_link("db1", False)
    try:
        assert not netns.data_link_up("db1")
        assert probe("db2", db1, ECHO_PORT).startswith("error:")
        assert probe("db1", netns.data_address("db2"), ECHO_PORT).startswith("error:")
        assert cluster.ssh("db1", "true").returncode == 0  # MGMT still works
        # heal from inside the partitioned host, over SSH, with its sudo rules
        heal = " && ".join("sudo -n " + " ".join(argv) for argv in netns.link_commands("db1", True))
        healed = cluster.ssh("db1", heal)
        assert healed.returncode == 0, healed.stderr
    finally:
        netns.set_data_link("db1", True)
    assert netns.data_link_up("db1")
    assert probe_until("db2", db1, ECHO_PORT, "echo:ping") == "echo:ping"


def test_create_again_is_idempotent_and_repairs_a_half_made_host(cluster: Cluster) -> None:
    netns.create_fabric()
    netns.add_host("db1")
    assert sorted(netns.namespaces()) == [netns.namespace(n) for n in sorted(HOSTS)]
    # a crash between the two ends: the root side gone takes its peer data0 with it
    netns.ip("link", "delete", "dev", netns.data_link("db2"))
    assert netns.DATA_INSIDE not in netns.links(netns.namespace("db2"))
    assert not netns.data_link_up("db2")
    netns.add_host("db2")
    assert netns.data_link_up("db2")
    assert probe_until("db1", netns.data_address("db2"), ECHO_PORT, "echo:ping") == "echo:ping"


CRASHING_UP = textwrap.dedent(
    """
    import subprocess, sys, time
    from pathlib import Path
    from loadtower.sandbox import host_cgroup, host_sshd, netns
    netns.create_fabric()
    netns.add_host("agent1")
    host_cgroup.create("agent1")
    paths = host_sshd.prepare(Path(sys.argv[1]), ["agent1"])
    host_sshd.start("agent1", paths["configs"]["agent1"], Path(sys.argv[1]) / "agent1-sshd.log")
    sleeper = subprocess.Popen(host_cgroup.wrap("agent1", ["sleep", "600"]), start_new_session=True)
    print(sleeper.pid, flush=True)
    time.sleep(600)
    """
)


def test_remove_all_after_sigkill_of_the_creator_leaves_nothing(cluster: Cluster) -> None:
    child = subprocess.Popen([sys.executable, "-c", CRASHING_UP, str(cluster.directory)], stdout=subprocess.PIPE, text=True)
    try:
        ready, _, _ = select.select([child.stdout], [], [], 60)
        assert ready, "the child did not create its host within 60 s"
        assert child.stdout is not None
        sleeper = int(child.stdout.readline())
        # the sleeper's shell joins the cgroup a moment after it starts
        assert wait_until(lambda: sleeper in host_cgroup.pids("agent1"), 20)
        assert netns.namespace("agent1") in netns.namespaces()
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    orphans = host_teardown.processes()
    assert sleeper in orphans and len(orphans) > 1  # sshds, echo servers, the sleeper
    removed = host_teardown.remove_all()
    assert f"namespace {netns.namespace('agent1')}" in removed
    assert f"user {host_user.USER}" in removed
    assert cluster_leftovers() == []
    assert not any(host_cgroup.alive(pid) for pid in orphans)
    cluster.up()  # the other tests' hosts again, whatever order the tests run in
