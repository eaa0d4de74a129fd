"""Users' SQL cannot write, read other files, attach, reconfigure or load anything.

Each attempt goes through `loadtower sql` as a user would type it; the store file must be
byte-for-byte the same afterwards and no file must appear next to it.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from loadtower.errors import LoadtowerError
from loadtower.store import StoreReader, StoreWriter
from loadtower.store.connection import connect
from tests.store.synth import make_lines


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "loadtower", *args]
    root = Path(__file__).resolve().parents[2]
    env = {"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin", "HOME": str(cwd)}
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=cwd, env=env)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def store(written: dict, tmp_path: Path) -> Path:
    """A private copy of the shared store, alone in its directory."""
    copy = tmp_path / "store.duckdb"
    shutil.copy(written["path"], copy)
    return copy


ATTEMPTS = {
    "copy to the store": ("COPY (SELECT 'oops') TO '{store}'", "COPY statements are refused"),
    "copy to a file": ("COPY runs TO '{dir}/runs.csv'", "COPY statements are refused"),
    "copy over the store, no temp file": (
        "COPY (SELECT 'oops') TO '{store}' (USE_TMP_FILE false)", "COPY statements are refused"),
    "copy to the wal": ("COPY (SELECT 'oops') TO '{store}.wal'", "COPY statements are refused"),
    "explain analyze copy": (
        "EXPLAIN ANALYZE COPY (SELECT 'oops') TO '{store}'", "EXPLAIN of COPY is refused"),
    "explain analyze copy, comments": (
        "/* a */ EXPLAIN /* b */ ANALYZE COPY (SELECT 1) TO '{store}'",
        "EXPLAIN of COPY is refused"),
    "explain with options, copy": (
        "EXPLAIN (FORMAT json) COPY (SELECT 1) TO '{store}'", "EXPLAIN of COPY is refused"),
    "read_text": ("SELECT * FROM read_text('/etc/hostname')", "reading or writing files"),
    "read_csv": ("SELECT * FROM read_csv('/etc/hostname')", "reading or writing files"),
    "read_blob": ("SELECT * FROM read_blob('{store}')", "reading or writing files"),
    "glob": ("SELECT * FROM glob('/etc/*')", "reading or writing files"),
    "attach": ("ATTACH '{dir}/other.duckdb' AS other", "ATTACH statements are refused"),
    "set": ("SET threads = 1", "SET statements are refused"),
    "reset": ("RESET enable_external_access", "SET statements are refused"),
    "pragma setting": ("PRAGMA enable_profiling", "settings cannot be changed"),
    "install": ("INSTALL httpfs", "LOAD statements are refused"),
    "load": ("LOAD httpfs", "LOAD statements are refused"),
    "export database": ("EXPORT DATABASE '{dir}/dump'", "EXPORT statements are refused"),
    "import database": ("IMPORT DATABASE '{dir}'", "IMPORT DATABASE is refused"),
    "import pragma": ("PRAGMA import_database('{dir}')", "IMPORT DATABASE is refused"),
    "delete": ("DELETE FROM runs", "DELETE statements are refused"),
    "two statements": ("SELECT 1; DELETE FROM runs", "exactly one SQL statement"),
}


@pytest.mark.parametrize("name", sorted(ATTEMPTS))
def test_refused_with_a_clear_line_and_the_store_unchanged(store: Path, name: str) -> None:
    query, reason = ATTEMPTS[name]
    query = query.format(store=store, dir=store.parent)
    before, files = digest(store), sorted(store.parent.iterdir())
    done = cli("sql", "--store", str(store), query, cwd=store.parent)
    assert done.returncode == 2, done
    assert reason in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert done.stdout == ""
    assert digest(store) == before
    assert sorted(store.parent.iterdir()) == files


def test_the_connection_itself_is_locked_down(store: Path) -> None:
    """Under the statement check: what slipped past it still could not touch a file."""
    before = digest(store)
    with connect(store, read_only=True) as con:
        for query in (
            f"COPY (SELECT 'oops') TO '{store}'",
            # external access off alone lets these through (the store's own paths):
            f"COPY (SELECT 'oops') TO '{store}' (USE_TMP_FILE false)",
            f"COPY (SELECT 'oops') TO '{store}.wal'",
            f"SELECT * FROM read_blob('{store}')",
            f"EXPORT DATABASE '{store}.tmp'",
            "SELECT * FROM read_text('/etc/hostname')",
            f"ATTACH '{store.parent}/x.duckdb'",
            f"EXPORT DATABASE '{store.parent}/d'",
        ):
            with pytest.raises(duckdb.PermissionException):
                con.execute(query)
        for query in ("SET enable_external_access = true", "SET threads = 1",
                      "SET disabled_filesystems = ''", "RESET disabled_filesystems"):  # fmt: skip
            with pytest.raises(duckdb.InvalidInputException, match="locked"):
                con.execute(query)
        with pytest.raises(duckdb.Error):
            con.execute("LOAD httpfs")
    assert digest(store) == before
    assert sorted(p.name for p in store.parent.iterdir()) == ["store.duckdb"]


def test_queries_and_the_store_reads_still_work(store: Path, written: dict) -> None:
    reader = StoreReader(store)
    run_id = written["run_id"]
    assert len(reader.op_seconds(run_id)) == len(written["raw"])
    assert len(reader.phase_summary(run_id)) == 3
    assert reader.window_percentiles(run_id, 0, 2e9)["ops"] > 0
    for query in ("EXPLAIN SELECT * FROM op_seconds", "EXPLAIN ANALYZE SELECT count(*) FROM runs",
                  "EXPLAIN (SELECT 1)", "PRAGMA show_tables", "FROM runs", "DESCRIBE runs",
                  "SELECT json_extract_string(versions, '$.x'), to_timestamp(started) FROM runs",
                  "SELECT * FROM information_schema.tables"):  # fmt: skip
        columns, rows = reader.sql(query)
        assert columns and rows, query
    with pytest.raises(LoadtowerError, match="bad SQL"):
        reader.sql("SELEC 1")


def test_a_query_on_a_live_store_is_stopped_and_a_finished_one_is_not(tmp_path: Path) -> None:
    path = tmp_path / "live.duckdb"
    slow = "SELECT count(*) FROM range(100000) a, range(100000) b WHERE a.range + b.range = 7"
    writer = StoreWriter(path, flush_every_s=3600)
    try:
        run_id = writer.start_run("live", "scn", "", "", {}, {}, {})
        with pytest.raises(LoadtowerError, match=f"stopped after 0.2 s: run {run_id} is being"):
            StoreReader(path, live_query_limit_s=0.2).sql(slow)
        lines, _ = make_lines(seconds=2, agents=1, ops=("read",), per_second=5)
        for line in lines:
            writer.add_interval(run_id, line)
        writer.end_run(run_id, "completed", None)
    finally:
        writer.close()
    # nothing is being written now: a query is never stopped, however long it takes
    query = "SELECT count(*) FROM range(3000) a, range(3000) b WHERE a.range + b.range = 7"
    assert StoreReader(path, live_query_limit_s=0.001).sql(query)[1] == [(8,)]


def test_a_query_stops_when_its_cancel_event_is_set(tmp_path) -> None:
    import threading

    from loadtower.store import StoreWriter
    from loadtower.store.query_cancel import QueryCancelled
    from loadtower.store.reader import StoreReader

    path = tmp_path / "s.duckdb"
    StoreWriter(path).close()
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    with pytest.raises(QueryCancelled):
        StoreReader(path).sql(
            "SELECT count(*) FROM range(1000000000) a, range(10000) b", cancel=cancel
        )


def test_a_cancel_that_comes_before_the_query_runs_still_stops_it() -> None:
    """The watcher interrupts again until the query is done: a first interrupt that came
    while the query was being checked (before it ran) does nothing in DuckDB."""
    import threading

    from loadtower.store.reader import _interrupt_when

    class Connection:
        def __init__(self) -> None:
            self.interrupts = 0
            self.tried_again = threading.Event()

        def interrupt(self) -> None:
            self.interrupts += 1
            if self.interrupts >= 2:
                self.tried_again.set()

    con, cancel, done = Connection(), threading.Event(), threading.Event()
    watcher = threading.Thread(target=_interrupt_when, args=(cancel, done, con), daemon=True)
    watcher.start()
    cancel.set()
    try:
        assert con.tried_again.wait(20.0)  # the first missed: it interrupts again
    finally:
        done.set()
        watcher.join(20.0)
    assert not watcher.is_alive()
