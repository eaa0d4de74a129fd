"""Store maintenance: deleting a run, marking runs whose orchestrator died.

Marking is a write, so it happens only in a process that writes the store anyway (the
run's writer, when it opens the store) or in `loadtower repair`; read commands only say
which runs look dead (:func:`dead_runs`, read-only and locked down). Before writing, a
store whose run tables are views (a crafted file, not one loadtower wrote) is refused.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import duckdb

from loadtower.errors import LoadtowerError
from loadtower.protocol.process_identity import ProcessId, verdict
from loadtower.store.connection import connect
from loadtower.store.schema import RUN_TABLES

# a writer refreshes its run's heartbeat at least every HEARTBEAT_S (writer.py); a run
# written from another machine, whose pid cannot be checked from here, is taken for
# dead once its heartbeat is this old
STALE_AFTER_S = 60.0


def delete_run(path: Path | str, run_id: str) -> None:
    """Remove a run and every sample of it."""
    with connect(Path(path), read_only=False) as con:
        if not con.execute("SELECT 1 FROM runs WHERE id = ?", [run_id]).fetchall():
            raise LoadtowerError(f"no run '{run_id}' in {path}")
        con.execute("BEGIN")
        for table, column in RUN_TABLES.items():
            con.execute(f"DELETE FROM {table} WHERE {column} = ?", [run_id])
        con.execute("COMMIT")


def orphan_reason(
    hostname: str | None,
    pid: int | None,
    pid_started: int | None,
    boot: str | None,
    heartbeat: float | None,
    now: float,
) -> str | None:
    """Why a 'running' run has no orchestrator any more, or None while it may have one."""
    if not hostname or not pid:
        return None
    owner = f"pid {pid} on {hostname}"
    state = verdict(ProcessId(hostname, int(pid), pid_started, boot))
    if state == "dead":
        return f"the orchestrator ({owner}) ended without finishing the run"
    if state == "unknown" and heartbeat is not None and now - heartbeat > STALE_AFTER_S:
        return (
            f"the orchestrator ({owner}) stopped writing {now - heartbeat:.0f} s ago "
            "without finishing the run"
        )
    return None


_RUNNING = (
    "SELECT id, hostname, pid, {extra} FROM runs WHERE status = 'running' ORDER BY id"
)
_LAST_ACTIVITY = """SELECT greatest({heartbeat},
    coalesce((SELECT started FROM runs WHERE id = $1), 0),
    coalesce((SELECT max(ts) FROM events WHERE run_id = $1), 0),
    coalesce((SELECT max(ts) FROM node_samples WHERE run_id = $1), 0),
    coalesce((SELECT max(ts) + 1 FROM op_intervals WHERE run_id = $1), 0))"""


def _has_heartbeat(con: duckdb.DuckDBPyConnection) -> bool:
    """False for a store of schema version 2 or older (not migrated by a read command)."""
    return "heartbeat" in {r[0] for r in con.execute("DESCRIBE runs").fetchall()}


def _orphans(con: duckdb.DuckDBPyConnection, now: float) -> dict[str, str]:
    extra = "pid_started, boot_id, heartbeat" if _has_heartbeat(con) else "NULL, NULL, NULL"
    found = {}
    for run_id, hostname, pid, started, boot, beat in con.execute(
        _RUNNING.format(extra=extra)
    ).fetchall():
        reason = orphan_reason(hostname, pid, started, boot, beat, now)
        if reason:
            found[run_id] = reason
    return found


def dead_runs(path: Path | str) -> dict[str, str]:
    """The 'running' runs whose orchestrator is gone, and why, read without writing
    (a read-only, locked-down connection); {} for a file with no runs table."""
    with connect(Path(path), read_only=True) as con:
        if not con.execute(
            "SELECT 1 FROM duckdb_tables() WHERE table_name = 'runs'"
        ).fetchall():
            return {}
        return _orphans(con, time.time())


def check_tables_are_tables(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    """Refuse (one line) a store where a view stands in for one of the run tables."""
    views = {str(r[0]) for r in con.execute(
        "SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()}
    posing = sorted(views & {"runs", *RUN_TABLES})
    if posing:
        raise LoadtowerError(f"store {path}: {', '.join(posing)} is a view, not a table: "
                             "not a store loadtower wrote; refusing to write it")


def mark_interrupted_runs(path: Path | str) -> list[str]:
    """Runs still 'running' whose orchestrator is gone become 'interrupted', with the reason.

    A run stays 'running' while its orchestrator process is alive on this machine (same
    pid, same start time, no reboot since), or, written from another machine, while its
    heartbeat is fresh. Returns the ids of the runs marked.
    """
    path = Path(path)
    now = time.time()
    with connect(path, read_only=True) as con:
        check_tables_are_tables(con, path)
        if not con.execute(
            "SELECT 1 FROM duckdb_tables() WHERE table_name = 'runs'"
        ).fetchall():
            return []
        candidates = _orphans(con, now)
    if not candidates:
        return []
    marked = []
    with connect(path, read_only=False) as con:
        check_tables_are_tables(con, path)
        for run_id, reason in _orphans(con, now).items():  # checked again: things move
            if run_id not in candidates:
                continue
            beat = "coalesce((SELECT heartbeat FROM runs WHERE id = $1), 0)"
            sql = _LAST_ACTIVITY.format(heartbeat=beat if _has_heartbeat(con) else "0")
            ended = float(con.execute(sql, [run_id]).fetchall()[0][0])
            last = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ended))
            full = f"{reason}; samples up to {last} kept"
            con.execute("BEGIN")
            changed = con.execute(
                "UPDATE runs SET status = 'interrupted', reason = ?, ended = coalesce(ended, ?) "
                "WHERE id = ? AND status = 'running'",
                [full, ended, run_id],
            ).fetchall()
            if changed and changed[0][0]:
                con.execute(
                    "INSERT INTO events (run_id, ts, kind, message) VALUES (?, ?, 'run', ?)",
                    [run_id, now, f"run {run_id} marked interrupted: {full}"],
                )
                marked.append(run_id)
            con.execute("COMMIT")
    return marked


def recover_runs(path: Path | str) -> list[str]:
    """mark_interrupted_runs, best effort, one line per run marked (no command calls it
    at its start any more: read commands never write; see `loadtower repair`).

    A store that cannot be opened for writing (read-only file, not a store at all) is
    left to the command itself, which reports it.
    """
    path = Path(path)
    if not path.is_file():
        return []
    try:
        marked = mark_interrupted_runs(path)
    except (LoadtowerError, duckdb.Error, OSError):
        return []
    for run_id in marked:
        print(
            f"loadtower: run {run_id} marked interrupted (its orchestrator is gone)",
            file=sys.stderr,
        )
    return marked
