"""Opening the store file: connections retried while another process holds it.

DuckDB lets one process open a file read-write and no other process open it at the
same time, even read-only. The run's writer keeps its read-write connection open between
flushes; readers open the file for each query. Whoever finds it locked knocks (knock.py:
a file in `<store>.knock/` asking the writer to let go; withdrawn once connected or on
giving up) and retries for a while, then names the process that holds it
(lock_holder.py).

Read-only connections are locked down, whatever SQL runs on them: external access is off
(`enable_external_access = false`: no other file is read or written, no ATTACH, no
INSTALL/LOAD), DuckDB's local file system is switched off for the connection's database
instance once the store is open (`disabled_filesystems = 'LocalFileSystem'`, because
external access still lets COPY TO write the store's own file and WAL), and then the
configuration is locked (`lock_configuration = true`), so no SET can undo either. The
store's own reads need none of it: the file is already open, its views are plain SQL
over its own tables, and the extensions they may use (json, icu, parquet) are built into
DuckDB's Python package. A query too big for memory cannot spill to disk here and fails.
Read-only connections also carry the store's SQL functions (sql_functions.py).

Read-write connections (the run's writer, `loadtower repair`, deleting a run) have
external access off too: a store is a file anyone may hand over, and its views (or a
view standing where a table should be) must never read another file when the writer
runs them. The writer's own file and WAL are DuckDB's to write, external access or not.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from loadtower.errors import LoadtowerError
from loadtower.store.knock import Knock
from loadtower.store.lock_holder import describe_holder

RETRY_S = 0.01
# one configuration for every read-only connection: connections of one process to one
# file must agree on it, or DuckDB refuses the second ("different configuration")
READ_ONLY_CONFIG = {"enable_external_access": False}
READ_WRITE_CONFIG = {"enable_external_access": False}  # no view reads another file
# then, on the open database (these cannot be given at connect time; connections of one
# process to one file share a database instance, so a later one finds them done)
LOCK_DOWN = ("SET disabled_filesystems = 'LocalFileSystem'", "SET lock_configuration = true")
_BUSY = ("could not set lock", "conflicting lock", "different configuration")


def is_busy(exc: BaseException) -> bool:
    text = str(exc).lower()
    return any(word in text for word in _BUSY)


@contextmanager
def connect(
    path: Path, read_only: bool, wait_s: float = 30.0
) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection to `path`, retrying up to `wait_s` while another process has it open."""
    con = open_connection(path, read_only, wait_s)
    try:
        yield con
    finally:
        con.close()


def open_connection(path: Path, read_only: bool, wait_s: float = 30.0) -> duckdb.DuckDBPyConnection:
    """`connect`'s connection, for a caller that closes it itself (the writer holds one)."""
    path = Path(path)
    if read_only and not path.exists():
        raise LoadtowerError(f"no store at {path} (run a scenario first, or pass --store)")
    deadline = time.monotonic() + wait_s
    delay = RETRY_S
    knock = Knock(path)
    try:
        while True:
            try:
                if read_only:
                    con = duckdb.connect(str(path), read_only=True, config=dict(READ_ONLY_CONFIG))
                else:
                    con = duckdb.connect(str(path), read_only=False,
                                         config=dict(READ_WRITE_CONFIG))
                break
            except (duckdb.IOException, duckdb.ConnectionException) as exc:
                if not is_busy(exc):
                    raise LoadtowerError(f"cannot open store {path}: {exc}") from exc
                if time.monotonic() > deadline:
                    holder = describe_holder(str(exc))
                    raise LoadtowerError(
                        f"store {path} stayed locked for {wait_s:g} s by {holder}: "
                        "wait for it to end, or stop it"
                    ) from exc
                knock.knock()  # a writer holding the file lets go (knock.py)
                time.sleep(delay)
                delay = min(delay * 1.5, 0.2)
    finally:
        knock.withdraw()
    if read_only:
        try:
            # deferred: sql_functions loads pyarrow and numpy, needed only by read-only connections
            from loadtower.store import sql_functions

            _lock_down(con, path)
            sql_functions.register(con)
        except BaseException:
            con.close()
            raise
    return con


def _lock_down(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    """Apply LOCK_DOWN (see the module's doc), then check that the store's own file can
    no longer be reached through SQL (it can while only external access is off)."""
    for statement in LOCK_DOWN:
        try:
            con.execute(statement)
        except duckdb.InvalidInputException as exc:
            if "locked" not in str(exc):  # locked: another connection did it first
                raise
    quoted = str(path.absolute()).replace("'", "''")  # as DuckDB allows it
    locked = con.execute("SELECT current_setting('lock_configuration')").fetchall()[0][0]
    try:
        con.execute(f"SELECT count(*) FROM glob('{quoted}')").fetchall()
    except duckdb.PermissionException:
        if locked:
            return
    con.close()
    raise LoadtowerError(f"cannot open store {path} read-only: DuckDB did not lock it down")
