"""Knocks: how a reader asks the store's writer to let go of the file.

A `StoreWriter` keeps its read-write connection open between flushes (writer.py), and
DuckDB lets no other process open a file one process holds, not even read-only (nor
another connection of the same process with another configuration). So whoever finds
the store busy (store/connection.py: every read-only and read-write `connect`) knocks: it
creates a small file in the knock folder beside the store, `<store>.knock/`, named
`<pid>-<random>`, holding its pid and nothing else, keeps it fresh while it retries, and
removes it once connected or when it gives up. The writer looks into the folder every
~50 ms while it holds the file; on a live knock it finishes the flush in progress,
closes the connection (DuckDB's checkpoint) and opens and closes the file per flush, as
it did before it held the file, until no knock has been seen for LINGER_S.

The folder is made by the writer (`mkdir`, mode 0700), never by a reader. Nobody follows
a symlink here: the folder is opened with O_NOFOLLOW|O_DIRECTORY and used only when it is
a real directory owned by this user and writable by nobody else; knock files are created
with O_CREAT|O_EXCL|O_NOFOLLOW relative to that descriptor. A folder that cannot be used
(missing, a symlink, a file, someone else's, no permission) means: no knocks, and a
writer that cannot use it does not hold the file at all, so readers wait for a flush to
end as they did before. A knock whose pid is gone, or not refreshed for STALE_S, is
ignored and removed.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import stat
import time
from pathlib import Path

from loadtower.protocol.process_identity import pid_alive

SUFFIX = ".knock"
STALE_S = 30.0  # a knock not refreshed for this long is ignored (a stopped or reused pid)
REFRESH_S = 5.0  # a waiting knocker touches its knock this often
LINGER_S = 3.0  # after the last knock seen, the writer opens the file per flush this long
_NAME = re.compile(r"(\d{1,10})-[0-9a-f]{16}")
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def knock_dir(store: Path | str) -> Path:
    """The knock folder of a store: beside it, as DuckDB's `.wal` is."""
    return Path(f"{store}{SUFFIX}")


def _open_dir(path: Path) -> int | None:
    """A descriptor of `path` if it is a real directory (not a symlink) owned by this user
    and writable by nobody else, else None."""
    try:
        fd = os.open(path, _DIR_FLAGS)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        usable = (stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid()
                  and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH))  # fmt: skip
    except OSError:
        usable = False
    if not usable:
        os.close(fd)
        return None
    return fd


class Knock:
    """A knocker's knock on one store: `knock()` on every busy retry (places it, or keeps
    it fresh), `withdraw()` once done (always: in a finally)."""

    def __init__(self, store: Path | str) -> None:
        self.dir = knock_dir(store)
        self._fd: int | None = None
        self._name: str | None = None
        self._touched = 0.0

    @property
    def placed(self) -> bool:
        return self._name is not None

    def knock(self) -> bool:
        """Place the knock if it is not there (again: a writer may have removed it as
        stale), refresh it every REFRESH_S; False when the folder cannot be used."""
        if self._name is not None and self._fd is not None:
            if time.monotonic() - self._touched < REFRESH_S:
                return True
            try:
                os.utime(self._name, dir_fd=self._fd, follow_symlinks=False)
                self._touched = time.monotonic()
                return True
            except OSError:
                self.withdraw()  # gone: placed anew below
        fd = _open_dir(self.dir)
        if fd is None:
            return False
        name = f"{os.getpid()}-{secrets.token_hex(8)}"
        try:
            handle = os.open(name, _FILE_FLAGS, 0o600, dir_fd=fd)
        except OSError:
            os.close(fd)
            return False
        try:
            os.write(handle, f"{os.getpid()}\n".encode())
        except OSError:
            pass  # the name says the pid too; the content is for a person looking
        finally:
            os.close(handle)
        self._fd, self._name, self._touched = fd, name, time.monotonic()
        return True

    def withdraw(self) -> None:
        fd, name, self._fd, self._name = self._fd, self._name, None, None
        if fd is None:
            return
        try:
            if name is not None:
                with contextlib.suppress(OSError):
                    os.unlink(name, dir_fd=fd)
        finally:
            os.close(fd)


class Door:
    """The writer's side: may it hold the file now? (its folder usable, no live knock
    seen for LINGER_S)."""

    def __init__(self, store: Path | str) -> None:
        self.dir = knock_dir(store)
        self._last_knock = float("-inf")

    def prepare(self) -> None:
        """Make the folder if it is not there (a reader never makes it)."""
        with contextlib.suppress(OSError):
            os.mkdir(self.dir, 0o700)

    def may_hold(self) -> bool:
        """True when the folder is usable and no live knock is in it, nor was for
        LINGER_S; stale knocks are removed on the way."""
        fd = _open_dir(self.dir)
        if fd is None:
            return False
        try:
            knocked = self._live_knocks(fd)
        except OSError:
            return False
        finally:
            os.close(fd)
        now = time.monotonic()
        if knocked:
            self._last_knock = now
        return now - self._last_knock >= LINGER_S

    def _live_knocks(self, fd: int) -> bool:
        live = False
        with os.scandir(fd) as entries:
            for entry in entries:
                found = _NAME.fullmatch(entry.name)
                if not found or not entry.is_file(follow_symlinks=False):
                    continue  # not a knock: ignored, never removed
                try:
                    age = time.time() - entry.stat(follow_symlinks=False).st_mtime
                except OSError:
                    continue  # withdrawn meanwhile
                if pid_alive(int(found.group(1))) and age < STALE_S:
                    live = True
                else:
                    with contextlib.suppress(OSError):
                        os.unlink(entry.name, dir_fd=fd)
        return live

    def remove(self) -> None:
        """At the writer's close: remove the folder if it is one a writer could use (a
        real directory, this user's, writable by nobody else) and empty. Another writer
        of the store that still holds the file finds it gone, lets go and makes it again."""
        fd = _open_dir(self.dir)
        if fd is None:
            return  # not ours to remove (or gone)
        os.close(fd)
        with contextlib.suppress(OSError):
            os.rmdir(self.dir)  # never a non-empty one; rmdir follows no symlink
