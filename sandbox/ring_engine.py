"""The engine whose nodes make the sandbox's ring: its sandbox part, found through the
kinds (issue 30).

The loopback sandbox (sandbox.py) and the cluster sandbox (cluster_*.py) choose where
each ring node lives and listens (a `NodePlace`), start and stop its process, pause it,
wait for its client port, and keep the state; the ring engine's package says the rest
(``loadtower.engines.NAME.sandbox``, a `RingEngine`): what its nodes need fetched once
and installed, a node's configuration files, command line and admin tool (a
`RingNode`), the log it writes, and how the sandbox's login role is made. The engine
is the one whose kind names a ``sandbox_ring`` (``"module:attribute"``,
protocol/engine_kinds.py); its name is the inventory's section and its hosts' engine,
the key of `status --json`, the folder of its nodes (DIR/NAME/nodeN) and its password
file's name (DIR/secrets/NAME.password).

The sandbox imports no engine package: the ring engine is found through the kinds.
"""

from __future__ import annotations

import subprocess
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from loadtower.errors import LoadtowerError
from loadtower.protocol.engine_kinds import KINDS, load_attribute
from loadtower.sandbox.auth import ClientTls, secret


@dataclass(frozen=True)
class NodeCerts:
    """A node's TLS files: ``ca`` the trusted CA's PEM, ``combined`` its key and
    certificate in one PEM (sandbox/tls_certs.py makes them)."""

    ca: Path
    combined: Path


@dataclass(frozen=True)
class NodePlace:
    """Where one ring node lives and listens, as the sandbox chose it."""

    index: int
    address: str
    home: Path  # its folder: configuration, data, logs
    seed: str  # the seed node's address
    storage_port: int  # between the nodes
    native_port: int  # the clients'
    jmx_port: int  # its admin tool's, on 127.0.0.1
    heap: str = "1G"
    # tuned for many short runs over top speed (`sandbox up --lean`; the engine says how):
    # less CPU to start a node and per run, a lower top rate
    lean: bool = False
    dc: str | None = None  # set: a data centre of its own (the cluster sandbox's)
    rack: str | None = None
    tls: NodeCerts | None = None  # set: clients must use TLS; between DCs too


class RingNode(Protocol):
    """One node as the engine configures and runs it."""

    @property
    def stdout_log(self) -> Path:
        """Where its process's output goes."""

    def write_config(self) -> None:
        """Its configuration files below its home (written anew at every start)."""

    def command(self) -> list[str]:
        """Its server's command line (in the foreground)."""

    def nodetool(self, *args: str, timeout: float = 120.0) -> subprocess.CompletedProcess:
        """Its admin tool with these arguments (flush, compact, status, decommission,
        repair), against its JMX port."""


# a node's admin tool, run where the node lives: (*args, timeout=...) -> its process
AdminTool = Callable[..., subprocess.CompletedProcess]


class RingEngine(ABC):
    """The ring engine's sandbox part (engines/NAME/sandbox/ring.py)."""

    name: str  # the engine: inventory section, hosts' engine, status key, folder, secret
    title: str  # in messages ("TITLE node 2 (127.0.0.2)", "its TITLE ring has 3 nodes")
    version: str  # its server's version, for `status`
    username: str = "loadtower"  # the sandbox's login role
    about: str  # its nodes for `sandbox --help` ("N TITLE VERSION nodes (...)")
    fetch_help: str  # `sandbox fetch`'s help: what it downloads or builds, from where
    # its ports: the cluster sandbox's (each node its own host), the loopback sandbox's
    # when free (the admin port the first node's, the next ones counting up)
    native_port: int  # the clients'
    storage_port: int  # between the nodes
    admin_port: int  # its admin tool's, local to the node

    @property
    def nodes_flag(self) -> str:
        """`sandbox up`'s option for the number of running nodes (``--NAME-nodes``)."""
        return f"--{self.name}-nodes"

    @abstractmethod
    def fetch(self, quiet: bool = True) -> str:
        """Fetch what its nodes run, once (cached); a line saying what and where (`sandbox
        fetch` prints it). ``quiet``: the fetching tool's output is kept, not shown."""

    @abstractmethod
    def check_runtime(self) -> None:
        """Raise a LoadtowerError when this machine cannot run its nodes."""

    @abstractmethod
    def node(self, place: NodePlace) -> RingNode:
        """The node living and listening at ``place``."""

    @abstractmethod
    def node_log(self, home: Path) -> Path:
        """The server log of the node whose home is ``home``."""

    @abstractmethod
    def can_login(self, address: str, port: int, directory: Path,
                  tls: ClientTls | None = None) -> bool:
        """The sandbox's role logs in on the node at address:port."""

    @abstractmethod
    def ensure_login(self, address: str, port: int, directory: Path,
                     tls: ClientTls | None = None, timeout: float = 120.0) -> None:
        """Make the sandbox's role (once) with its password, and lock the server's default
        login; over TLS when ``tls`` is given."""

    @abstractmethod
    def spread_login(self, address: str, port: int, dcs: Sequence[str], tls: ClientTls,
                     admin: AdminTool, where: str) -> None:
        """Before `ensure_login` on a ring of several data centres (the cluster sandbox's
        ``dcs``): make what a login reads readable in every DC, through the node at
        address:port and its ``admin`` tool (``where``: that node, in messages); nothing
        for an engine whose logins are readable everywhere already."""

    # what every ring engine has alike
    def password_file(self, directory: Path) -> Path:
        return directory / "secrets" / f"{self.name}.password"

    def password(self, directory: Path) -> str:
        """Its role's password (generated once, mode 0600)."""
        return secret(self.password_file(directory))


def ring_engine() -> RingEngine:
    """The registered engine whose kind names a ``sandbox_ring`` (exactly one)."""
    found = {kind.sandbox_ring for kind in KINDS.values() if kind.sandbox_ring}
    if len(found) != 1:
        raise LoadtowerError(
            "the sandbox needs one registered engine for its ring (a kind with a "
            f"sandbox_ring); the registered engines name {len(found)}"
        )
    ring: RingEngine = load_attribute(found.pop())
    return ring
