"""A folder only this user may use (the control sockets' /tmp/loadtower-UID).

A folder under /tmp may have been made by someone else before the first run: reusing
it would let them replace or read the sockets in it. So the folder is created with
mode 0700 or, when it exists, used only when it is a real folder (not a symlink) owned
by this user with no access for group or others; otherwise one clear line, exit 2.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from loadtower.errors import LoadtowerError


def socket_folder() -> Path:
    """The per-user folder of control sockets whose STORE.d path is too long for a UNIX
    socket (scenarios/control_api.py control_path puts them here)."""
    return Path(f"/tmp/loadtower-{os.getuid()}")


def check_socket_folder() -> None:
    """Refuse (one line) a socket folder that exists and is not this user's private one;
    `loadtower run` calls it before anything starts."""
    folder = socket_folder()
    if os.path.lexists(folder):
        private_dir(folder)


def private_dir(path: Path) -> Path:
    """`path` made (mode 0700, parents as needed) or checked; LoadtowerError otherwise."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        path.mkdir(mode=0o700)
    except FileExistsError:
        pass
    try:
        info = os.lstat(path)
    except OSError as exc:
        raise LoadtowerError(f"{path}: cannot use this folder: {exc.strerror}") from None
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        raise LoadtowerError(f"{path}: not a folder (a symlink or a file): refusing to use it")
    if info.st_uid != os.getuid():
        raise LoadtowerError(
            f"{path}: owned by uid {info.st_uid}, not by this user ({os.getuid()}): "
            "refusing to put control sockets in it (remove it, or use --control)"
        )
    if info.st_mode & 0o077:
        raise LoadtowerError(
            f"{path}: mode {stat.S_IMODE(info.st_mode):04o} lets others in; "
            f"expected 0700 (chmod 700 {path})"
        )
    return path
