"""Store maintenance: deleting a run, marking runs whose orchestrator died."""

from __future__ import annotations

import os
import socket
from pathlib import Path

from loadtower.errors import LoadtowerError
from loadtower.store.connection import connect
from loadtower.store.schema import RUN_TABLES


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def delete_run(path: Path | str, run_id: str) -> None:
    """Remove a run and every sample of it."""
    with connect(Path(path), read_only=False) as con:
        if not con.execute("SELECT 1 FROM runs WHERE id = ?", [run_id]).fetchall():
            raise LoadtowerError(f"no run '{run_id}' in {path}")
        con.execute("BEGIN")
        for table, column in RUN_TABLES.items():
            con.execute(f"DELETE FROM {table} WHERE {column} = ?", [run_id])
        con.execute("COMMIT")


def mark_interrupted_runs(path: Path | str) -> list[str]:
    """Runs still 'running' whose orchestrator process (on this host) is gone -> 'interrupted'."""
    host = socket.gethostname()
    with connect(Path(path), read_only=False) as con:
        rows = con.execute("SELECT id, pid, hostname FROM runs WHERE status = 'running'").fetchall()
        dead = [r[0] for r in rows if r[2] == host and r[1] and not _pid_alive(int(r[1]))]
        for run_id in dead:
            con.execute(
                "UPDATE runs SET status = 'interrupted', reason = ?, "
                "ended = coalesce(ended, (SELECT max(ts) FROM op_intervals WHERE run_id = ?)) "
                "WHERE id = ?",
                ["orchestrator process ended without finishing the run", run_id, run_id],
            )
    return dead
