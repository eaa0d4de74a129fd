"""The writer keeps the store open between flushes and lets go when someone knocks
(store/knock.py): real DuckDB files, a real reader process, every wait bounded."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import duckdb
import pytest

from loadtower.errors import LoadtowerError
from loadtower.store import StoreReader, StoreWriter
from loadtower.store import writer as writer_module
from loadtower.store.connection import connect
from loadtower.store.knock import Knock, knock_dir
from tests.store.holders import holding

NEVER = 3600.0  # no background flush: the test flushes
WAIT_S = 30.0  # a bound on waiting, not a measured time
READ_COUNT = (
    "import sys\nfrom pathlib import Path\nfrom loadtower.store.connection import connect\n"
    "with connect(Path(sys.argv[1]), read_only=True, wait_s=float(sys.argv[2])) as con:\n"
    "    print(con.execute(\"SELECT count(*) FROM events WHERE kind = 'info'\").fetchall()[0][0])"
)


def read_count(path: Path, wait_s: float = WAIT_S) -> subprocess.CompletedProcess[str]:
    """The count of info events, read by another process through connect()."""
    return subprocess.run([sys.executable, "-c", READ_COUNT, str(path), str(wait_s)],
                          capture_output=True, text=True, timeout=WAIT_S * 2)  # fmt: skip


def until(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not check():
        assert time.monotonic() < deadline, f"not within {WAIT_S:g} s: {what}"
        time.sleep(0.02)


def count_writer_opens(monkeypatch: pytest.MonkeyPatch, path: Path) -> list[str]:
    """The read-write opens of `path` from now on (duckdb.connect wrapped until
    `monkeypatch.undo()`), one entry each."""
    opens: list[str] = []
    plain = duckdb.connect

    def counting(database: str = ":memory:", read_only: bool = False, **kw):  # type: ignore[no-untyped-def]
        if database == str(path) and not read_only:
            opens.append(database)
        return plain(database, read_only=read_only, **kw)

    monkeypatch.setattr(duckdb, "connect", counting)
    return opens


class Feeder:
    """A thread handing events to a writer and flushing, continuously, until stopped."""

    def __init__(self, writer: StoreWriter, run_id: str) -> None:
        self.writer, self.run_id, self.fed, self.flushes = writer, run_id, 0, 0
        self.errors: list[BaseException] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._feed, daemon=True)
        self._thread.start()

    def _feed(self) -> None:
        try:
            while not self._stop.is_set():
                self.writer.event(self.run_id, time.time(), "info", f"event {self.fed}")
                self.fed += 1
                if self.fed % 5 == 0:
                    self.writer.flush()
                    self.flushes += 1
                time.sleep(0.005)
        except BaseException as exc:  # noqa: BLE001 - the test asserts none
            self.errors.append(exc)

    def stop(self) -> int:
        self._stop.set()
        self._thread.join(timeout=WAIT_S)
        assert not self._thread.is_alive() and not self.errors, self.errors
        return self.fed


@pytest.fixture
def feeders() -> Iterator[list[Feeder]]:
    started: list[Feeder] = []
    yield started
    for feeder in started:  # also when the test failed
        feeder._stop.set()


def info_count(path: Path) -> int:
    return StoreReader(path).sql("SELECT count(*) FROM events WHERE kind = 'info'")[1][0][0]


def test_a_reader_gets_in_while_the_writer_holds_the_file(
    tmp_path: Path, feeders: list[Feeder]
) -> None:
    path = tmp_path / "s.duckdb"
    with StoreWriter(path, flush_every_s=0.2) as writer:
        run_id = writer.start_run("r", "scn", "", "", {}, {}, {})
        assert writer.holds_file
        feeder = Feeder(writer, run_id)
        feeders.append(feeder)
        until(lambda: feeder.flushes > 5, "the feeder flushed")
        # another process knocks, the writer lets go, the reader reads
        done = read_count(path)
        assert done.returncode == 0, done.stderr
        assert int(done.stdout) > 0
        # another connection of this process (another configuration): the same
        assert StoreReader(path, wait_s=WAIT_S).run(run_id)["status"] == "running"
        # nobody knocks any more: the writer holds the file again
        until(lambda: writer.holds_file, "the writer holds the file again")
        assert list(knock_dir(path).iterdir()) == []  # every knock withdrawn
        fed = feeder.stop()
    assert info_count(path) == fed  # everything handed over is in the file
    assert not knock_dir(path).exists()  # removed at close


def test_the_writer_keeps_one_connection_across_flushes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s.duckdb"
    monkeypatch.setattr(writer_module, "HOLD_S", 3600.0)  # however slow the machine
    with StoreWriter(path, flush_every_s=NEVER) as writer:
        opens = count_writer_opens(monkeypatch, path)  # after the store's creation
        run_id = writer.start_run("r", "scn", "", "", {}, {}, {})
        for i in range(20):
            writer.event(run_id, float(i), "info", f"event {i}")
            writer.flush()
        assert writer.holds_file
    assert len(opens) == 1, opens  # 21 flushes, one open
    monkeypatch.undo()
    assert info_count(path) == 20


def test_the_kept_connection_is_opened_anew_after_hold_s(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """HOLD_S bounds how long DuckDB's cache of written blocks lives (the orchestrator's
    memory over a long run): past it, the flush that commits closes the connection and
    the next one opens it again; nothing is lost across the reopenings."""
    path = tmp_path / "s.duckdb"
    monkeypatch.setattr(writer_module, "HOLD_S", 0.0)  # every commit is past it
    with StoreWriter(path, flush_every_s=NEVER) as writer:
        opens = count_writer_opens(monkeypatch, path)  # after the store's creation
        run_id = writer.start_run("r", "scn", "", "", {}, {}, {})
        for i in range(5):
            writer.event(run_id, float(i), "info", f"event {i}")
            writer.flush()
            assert not writer.holds_file  # let go after its commit
    assert len(opens) == 6, opens  # the start's flush and five more: one open each
    monkeypatch.undo()
    assert info_count(path) == 5


def test_a_knock_makes_the_writer_let_go_until_it_is_withdrawn(tmp_path: Path) -> None:
    path = tmp_path / "s.duckdb"
    with StoreWriter(path, flush_every_s=0.1) as writer:
        run_id = writer.start_run("r", "scn", "", "", {}, {}, {})
        assert writer.holds_file
        knock = Knock(path)
        try:
            assert knock.knock()
            until(lambda: not writer.holds_file, "the writer let go")
            with duckdb.connect(str(path), read_only=True) as con:  # plain DuckDB gets in
                assert con.execute("SELECT count(*) FROM runs").fetchall() == [(1,)]
            writer.event(run_id, 1.0, "info", "while knocked")
            writer.flush()  # opens and closes, as before the writer held the file
            assert not writer.holds_file
        finally:
            knock.withdraw()
        writer.event(run_id, 2.0, "info", "after")
        until(lambda: writer.holds_file, "the writer holds the file again")
    assert info_count(path) == 2


def test_a_stale_knock_does_not_keep_the_writer_out(tmp_path: Path) -> None:
    path = tmp_path / "s.duckdb"
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, timeout=WAIT_S)  # fmt: skip
    dead_pid = int(gone.stdout)
    with StoreWriter(path, flush_every_s=0.1) as writer:
        run_id = writer.start_run("r", "scn", "", "", {}, {}, {})
        folder = knock_dir(path)
        (folder / f"{dead_pid}-{'0' * 16}").write_text(f"{dead_pid}\n")  # its knocker is gone
        old = folder / f"{os.getpid()}-{'1' * 16}"  # a live pid, but never refreshed
        old.write_text(f"{os.getpid()}\n")
        os.utime(old, (time.time() - 3600, time.time() - 3600))
        (folder / "not-a-knock").write_text("")  # ignored, left alone
        for i in range(3):
            writer.event(run_id, float(i), "info", f"event {i}")
            writer.flush()
            assert writer.holds_file
        until(lambda: sorted(p.name for p in folder.iterdir()) == ["not-a-knock"],
              "the stale knocks removed")  # fmt: skip
        (folder / "not-a-knock").unlink()
    assert info_count(path) == 3


@pytest.mark.parametrize("kind", ["symlink", "file", "shared"])
def test_a_knock_folder_that_cannot_be_used_means_no_holding(tmp_path: Path, kind: str) -> None:
    """A symlink (to a folder elsewhere), a file, a folder others may write: nothing is
    created through it, the writer opens the file per flush as before it held it, a
    reader still gets in, and one that cannot names the holder."""
    path = tmp_path / "s.duckdb"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    folder = knock_dir(path)
    if kind == "symlink":
        folder.symlink_to(elsewhere)
    elif kind == "file":
        folder.write_text("")
    else:
        folder.mkdir()
        folder.chmod(0o777)
    with StoreWriter(path, flush_every_s=0.1) as writer:
        run_id = writer.start_run("r", "scn", "", "", {}, {}, {})
        for i in range(3):
            writer.event(run_id, float(i), "info", f"event {i}")
            writer.flush()
            assert not writer.holds_file
        done = read_count(path)
        assert done.returncode == 0, done.stderr
        assert int(done.stdout) == 3
        with holding(path) as holder:  # a process that never lets go
            with pytest.raises(LoadtowerError) as failed:
                with connect(path, read_only=True, wait_s=0.3):
                    pass
            assert f"stayed locked for 0.3 s by pid {holder.pid} (" in str(failed.value)
        writer.event(run_id, 4.0, "info", "after")  # the writer keeps writing
        writer.flush()
    assert info_count(path) == 4
    assert list(elsewhere.iterdir()) == []  # nothing created through the link
    if kind == "symlink":
        assert folder.is_symlink() and folder.resolve() == elsewhere.resolve()
    elif kind == "shared":
        assert list(folder.iterdir()) == []


def test_a_writer_whose_knock_folder_is_removed_lets_go_and_makes_it_again(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.duckdb"
    with StoreWriter(path, flush_every_s=0.1) as writer:
        run_id = writer.start_run("r", "scn", "", "", {}, {}, {})
        assert writer.holds_file
        knock_dir(path).rmdir()  # as another writer of the store does at its close
        until(lambda: not writer.holds_file, "the writer let go")
        writer.event(run_id, 1.0, "info", "again")
        until(lambda: writer.holds_file, "the writer holds the file again")
        assert knock_dir(path).is_dir()
    assert info_count(path) == 1
