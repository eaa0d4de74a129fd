"""Folders and files the agent makes in a shared place (the spool under /tmp), made so
that another user of the host can neither plant nor read them.

- a folder is created with mode 0700 or, when it exists, used only when it is a real
  folder (not a symlink) owned by this user with no access for group or others;
- a file that is appended to is opened with ``O_NOFOLLOW`` (a planted symlink fails to
  open) and checked to be a regular file of this user;
- a file that is (re)written is written under a fresh name with
  ``O_CREAT | O_EXCL | O_NOFOLLOW`` and renamed over the old name (a rename replaces a
  symlink itself, never the file it points to);
- a file that is read is opened with ``O_NOFOLLOW`` and checked to be a regular file.

Anything else is one line (:class:`UnsafePath`, exit 2), and nothing is written.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from pathlib import Path
from typing import IO

from loadtower.errors import LoadtowerError

_NOFOLLOW = os.O_NOFOLLOW | os.O_CLOEXEC


class UnsafePath(LoadtowerError):
    """A shared-location folder or file another user could have planted or can reach."""


def private_dir(path: str | Path) -> Path:
    """`path` made with mode 0700 (its parent must exist) or checked: a real folder,
    owned by this user, no access for group or others; UnsafePath otherwise."""
    folder = Path(path)
    try:
        folder.mkdir(mode=0o700)
    except FileExistsError:
        pass
    except OSError as exc:
        raise UnsafePath(f"{folder}: cannot create this folder: {exc.strerror}") from None
    check_private_dir(folder)
    return folder


def check_private_dir(folder: Path) -> None:
    try:
        info = os.lstat(folder)
    except OSError as exc:
        raise UnsafePath(f"{folder}: cannot use this folder: {exc.strerror}") from None
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        raise UnsafePath(f"{folder}: not a folder (a symlink or a file): refusing to use it")
    if info.st_uid != os.getuid():
        raise UnsafePath(f"{folder}: owned by uid {info.st_uid}, not by this user "
                         f"({os.getuid()}): refusing to use it (remove it)")
    if info.st_mode & 0o077:
        raise UnsafePath(f"{folder}: mode {stat.S_IMODE(info.st_mode):04o} lets others in, "
                         "not 700: refusing to use it (remove it)")


def _check_file(fd: int, path: Path) -> None:
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid():
        os.close(fd)
        raise UnsafePath(f"{path}: not a regular file of this user (uid {info.st_uid}): "
                         "refusing to use it")


def _open(path: Path, flags: int, mode: int = 0o600) -> int:
    try:
        return os.open(path, flags | _NOFOLLOW, mode)
    except OSError as exc:
        what = "a symlink" if exc.errno == errno.ELOOP else exc.strerror
        raise UnsafePath(f"{path}: cannot open it safely ({what}): refusing to use it") from None


def open_append(path: str | Path) -> IO[str]:
    """`path` opened for appending text (created 0600), never through a symlink."""
    where = Path(path)
    fd = _open(where, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    _check_file(fd, where)
    return os.fdopen(fd, "a", encoding="utf-8")


def write_replace(path: str | Path, text: str) -> None:
    """`text` as the whole of `path` (0600): written under a fresh name, then renamed."""
    where = Path(path)
    part = where.with_name(f".{where.name}.{secrets.token_hex(4)}.part")
    fd = _open(part, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(part, where)
    except BaseException:
        part.unlink(missing_ok=True)
        raise


def open_read(path: str | Path) -> IO[bytes]:
    """`path` opened for reading bytes, never through a symlink (a regular file only)."""
    where = Path(path)
    fd = _open(where, os.O_RDONLY | os.O_NONBLOCK)
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise UnsafePath(f"{where}: not a regular file: refusing to read it")
    return os.fdopen(fd, "rb")


def read_text(path: str | Path) -> str:
    with open_read(path) as fh:
        return fh.read().decode("utf-8", errors="replace")
