"""The sudo rules of the cluster sandbox's user: exactly the node actions of each DB host.

One rule per (node, action): ``ltsandbox ALL=(root) NOPASSWD: PYTHON -m loadtower
sandbox node ACTION --dir DIR N``. All hosts share one kernel and so one sudoers file:
the rule alone cannot say from which host it is run, so the node action itself checks
that it runs inside the namespace of node N's host when started by sudo
(``cluster_actions.check_own_host``): each host acts on its own node only.
"""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

from loadtower.errors import LoadtowerError
from loadtower.sandbox import host_user, inventory_file
from loadtower.sandbox.cluster_layout import DB_HOSTS

USER = host_user.USER
NODE_ACTIONS = (*inventory_file.NODE_ACTIONS, "partition", "heal")  # what ltsandbox may sudo
SAFE_PATH = re.compile(r"^[A-Za-z0-9_./+-]+$")


def check_path(what: str, path: Path | str) -> None:
    """sudoers and the inventory's shell commands carry these paths verbatim."""
    if not SAFE_PATH.match(str(path)):
        raise LoadtowerError(
            f"{what} {path}: the cluster sandbox needs a path of letters, digits and "
            "_ . / + - only (it goes into sudo rules)"
        )


def node_argv(directory: Path, action: str, node: int) -> list[str]:
    return [
        sys.executable,
        "-m",
        "loadtower",
        "sandbox",
        "node",
        action,
        "--dir",
        str(directory),
        str(node),
    ]


def node_command(directory: Path, action: str, node: int) -> str:
    """The shell command an inventory action runs over SSH on the node's host."""
    return shlex.join(["sudo", "-n", *node_argv(directory, action, node)])


def rules(directory: Path) -> list[str]:
    check_path("the sandbox directory", directory)
    check_path("the Python", sys.executable)
    return [
        host_user.command_rule(node_argv(directory, action, host.node))
        for host in DB_HOSTS
        for action in NODE_ACTIONS
    ]
