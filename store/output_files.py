"""Writing reports and exports: never onto a store, never half-written, never elsewhere.

A user's `--out` is careless input (`report RUN --out loadtower.duckdb` once replaced a
store with 14 KB of HTML) and an output folder may hold hostile symlinks. So:

- The output folder is opened once (a directory file descriptor); every file is then
  reached by its bare name relative to that descriptor, never by a path that could be
  swapped for a symlink between the check and the write.
- A name that already exists is refused unless `force`; even with `force`, a directory,
  a device, a pipe or a socket is never replaced, nor a DuckDB file (its magic bytes,
  "DUCK" at offset 8) or the store in use (same inode as the store or its WAL). A
  symbolic link is never followed: with `force` the link itself is replaced and its
  target is left alone; a link whose target is a store is refused.
- The content goes to a new temporary file in the same folder (O_CREAT | O_EXCL |
  O_NOFOLLOW), is flushed to disk and then renamed over the name: a failed write (full
  disk, /dev/full, Ctrl-C) leaves what was there before, and no partial file.
Every refusal is one line (LoadtowerError, exit 2) that names the path.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import BinaryIO

from loadtower.errors import LoadtowerError
from loadtower.store.terminal_text import visible

DUCKDB_MAGIC = b"DUCK"
DUCKDB_MAGIC_AT = 8  # DuckDB's file header: an 8-byte checksum, then the magic bytes


def is_duckdb_file(path: Path | str, dir_fd: int | None = None) -> bool:
    """True when the regular file at `path` starts like a DuckDB database (links followed)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=dir_fd)
    except OSError:
        return False
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        head = os.pread(fd, DUCKDB_MAGIC_AT + len(DUCKDB_MAGIC), 0)
    except OSError:
        return False
    finally:
        os.close(fd)
    return head[DUCKDB_MAGIC_AT:] == DUCKDB_MAGIC


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _why(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


class OutputDir:
    """One output folder; files in it are checked, then written whole (see the module doc)."""

    def __init__(self, folder: Path, protect: Iterable[Path] = (), force: bool = False) -> None:
        self.folder = Path(folder)
        self.force = force
        wal = [Path(f"{p}.wal") for p in protect]
        self._protected = {i for i in map(_identity, [*protect, *wal]) if i is not None}
        shown = visible(self.folder)
        if self.folder.exists() and not self.folder.is_dir():
            raise LoadtowerError(f"{shown} is a file, not a directory")
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            self.fd = os.open(self.folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError as exc:
            raise LoadtowerError(f"cannot write into {shown}: {_why(exc)}") from None

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> OutputDir:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def shown(self, name: str) -> str:
        return visible(self.folder / name)

    def check(self, name: str) -> None:
        """Raise LoadtowerError unless `name` may be (re)placed in the folder."""
        shown = self.shown(name)
        if not name or name in (".", "..") or "/" in name or "\0" in name:
            raise LoadtowerError(f"{shown}: not a file name")
        try:
            st = os.stat(name, dir_fd=self.fd, follow_symlinks=False)
        except FileNotFoundError:
            return
        except OSError as exc:
            raise LoadtowerError(f"cannot write {shown}: {_why(exc)}") from None
        if stat.S_ISDIR(st.st_mode):
            raise LoadtowerError(f"{shown} is a directory: give a file name")
        if stat.S_ISLNK(st.st_mode):
            target = self._followed(name)
            if target is not None and (target in self._protected or is_duckdb_file(name, self.fd)):
                raise LoadtowerError(f"{shown} is a link to a DuckDB store: never replaced")
            if not self.force:
                raise LoadtowerError(
                    f"{shown} exists (a symbolic link): pass --force to replace the link "
                    "(its target is never written)"
                )
            return
        if not stat.S_ISREG(st.st_mode):
            raise LoadtowerError(f"{shown} is not a regular file (a device, pipe or socket)")
        if (st.st_dev, st.st_ino) in self._protected:
            raise LoadtowerError(f"{shown} is the store in use: never replaced")
        if is_duckdb_file(name, self.fd):
            raise LoadtowerError(f"{shown} is a DuckDB store: never replaced")
        if not self.force:
            raise LoadtowerError(f"{shown} exists: pass --force to replace it")

    def _followed(self, name: str) -> tuple[int, int] | None:
        try:
            st = os.stat(name, dir_fd=self.fd, follow_symlinks=True)
        except OSError:
            return None  # a dangling link
        return st.st_dev, st.st_ino

    def write(self, name: str, fill: Callable[[BinaryIO], None]) -> None:
        """Check `name`, write it whole through `fill(file)` into a temporary file of the
        folder, then rename that over `name`."""
        self.check(name)
        tmp = f".{name}.{secrets.token_hex(4)}.tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            fd = os.open(tmp, flags, 0o644, dir_fd=self.fd)
        except OSError as exc:
            raise LoadtowerError(f"cannot write {self.shown(name)}: {_why(exc)}") from None
        try:
            with os.fdopen(fd, "wb") as handle:
                fill(handle)
                handle.flush()
                os.fsync(handle.fileno())
            self.check(name)  # again: the folder may have changed meanwhile
            os.replace(tmp, name, src_dir_fd=self.fd, dst_dir_fd=self.fd)
        except OSError as exc:
            self._discard(tmp)
            raise LoadtowerError(f"cannot write {self.shown(name)}: {_why(exc)}") from None
        except BaseException:
            self._discard(tmp)
            raise

    def _discard(self, tmp: str) -> None:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=self.fd)


def write_file(
    out: Path, fill: Callable[[BinaryIO], None], protect: Iterable[Path] = (), force: bool = False
) -> None:
    """Write one file whole (`report --out`), with OutputDir's checks."""
    with OutputDir(out.parent, protect, force) as folder:
        folder.write(out.name, fill)


def check_file(out: Path, protect: Iterable[Path] = (), force: bool = False) -> None:
    """OutputDir's checks for one file, before the work of making its content."""
    if not out.parent.exists():
        return  # made by write_file
    if not out.parent.is_dir():
        raise LoadtowerError(f"{visible(out.parent)} is a file, not a directory")
    with OutputDir(out.parent, protect, force) as folder:
        folder.check(out.name)
