"""Bad input that needs no database: store paths that cannot hold a store (not a DuckDB
file, a directory, a full disk, a read-only file system), a disk that fills up while a
run is writing, an SSH host nobody answers on. Each ends in one line and exit code 2
(or a failed run record), never a traceback, never a half-written store file.

Full disks are real: a small tmpfs mounted for the test (needs root or CAP_SYS_ADMIN;
skipped otherwise) and, everywhere, a file-size rlimit (RLIMIT_FSIZE: writes beyond it
fail with EFBIG, as they would with ENOSPC). Read-only: a tmpfs mounted read-only (a
read-only directory would not stop root).
"""

from __future__ import annotations

import queue
import re
import resource
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from loadtower.store import StoreReader
from loadtower.store.admin import mark_interrupted_runs
from tests.reliability.helpers import (
    cli,
    closed_port,
    fill,
    one_error_line,
    tmpfs,
    write_inventory,
)


@pytest.fixture
def inventory(tmp_path: Path) -> Path:
    return write_inventory(tmp_path / "inv.toml", closed_port())


@pytest.fixture
def mounts(tmp_path: Path) -> Iterator:
    with ExitStack() as stack:
        yield lambda name, options: stack.enter_context(tmpfs(tmp_path / name, options))


def _run(inventory: Path, store: Path, **kw: object) -> subprocess.CompletedProcess[str]:
    return cli("run", "quickstart", "--inventory", inventory, "--headless", "--store", store, **kw)


def test_a_file_that_is_not_a_store_is_left_untouched(inventory: Path, tmp_path: Path) -> None:
    store = tmp_path / "results.duckdb"
    store.write_bytes(b"timestamp,ops\n1,2\n")
    done = _run(inventory, store)
    assert done.returncode == 2
    line = one_error_line(done)
    assert str(store.name) in line and "not a valid DuckDB database file" in line
    assert store.read_bytes() == b"timestamp,ops\n1,2\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["inv.toml", "results.duckdb"]


def test_a_directory_or_a_file_in_the_way(inventory: Path, tmp_path: Path) -> None:
    (tmp_path / "adir").mkdir()
    done = _run(inventory, tmp_path / "adir")
    assert done.returncode == 2
    assert "is a directory, not a store file" in one_error_line(done)
    (tmp_path / "afile").write_text("x")
    done = _run(inventory, tmp_path / "afile" / "s.duckdb")
    assert done.returncode == 2
    assert "afile is a file, not a directory" in one_error_line(done)


def test_a_full_tmpfs_leaves_no_half_written_store(inventory: Path, mounts) -> None:
    disk = mounts("full", "size=4k")
    done = _run(inventory, disk / "s.duckdb")
    assert done.returncode == 2
    assert "No space left on device" in one_error_line(done)
    assert list(disk.iterdir()) == []


def test_a_file_size_limit_leaves_no_half_written_store(inventory: Path, tmp_path: Path) -> None:
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (8192, resource.RLIM_INFINITY))

    store = tmp_path / "s.duckdb"
    done = _run(inventory, store, preexec_fn=limit)
    assert done.returncode == 2
    assert "File too large" in one_error_line(done)
    assert not store.exists() and not Path(f"{store}.wal").exists()


def test_a_read_only_file_system(inventory: Path, mounts) -> None:
    disk = mounts("ro", "ro,size=1m")
    for store in (disk / "s.duckdb", disk / "sub" / "s.duckdb"):
        done = _run(inventory, store)
        assert done.returncode == 2
        assert "Read-only file system" in one_error_line(done)
    assert list(disk.iterdir()) == []


def test_an_unreachable_host_fails_the_run_with_the_host_named(
    inventory: Path, tmp_path: Path
) -> None:
    store = tmp_path / "s.duckdb"
    done = _run(inventory, store)
    assert done.returncode == 2
    line = one_error_line(done)
    assert "host db1 (127.0.0.1:" in line or "host agent1 (127.0.0.1:" in line
    assert "cannot connect over SSH" in line
    runs = StoreReader(store).runs()
    assert len(runs) == 1 and runs[0]["status"] == "failed"
    assert "cannot connect over SSH" in runs[0]["reason"]
    assert "inline-secret-1234" not in store.read_bytes().decode(errors="replace")


# ---------------------------------------------------------------- a disk that fills up
WRITER = """
import resource, sys
from loadtower.errors import LoadtowerError
from loadtower.store import StoreWriter
from tests.store.synth import make_lines
path, how = sys.argv[1], sys.argv[2]
w = StoreWriter(path, flush_every_s=0.2)
run_id = w.start_run("fill", "s", "", "", {}, {}, {})
lines, _ = make_lines(seconds=30, agents=2, ops=("read",))
w.phase_started(run_id, 0, "run", "run", float(lines[0]["ts"]), {})
for line in lines[:20]:
    w.add_interval(run_id, line)
w.flush()
print("FIRST", run_id, flush=True)
for command in sys.stdin:
    command = command.strip()
    if command == "fill" and how == "rlimit":
        resource.setrlimit(resource.RLIMIT_FSIZE, (1, resource.RLIM_INFINITY))
    if command == "free" and how == "rlimit":
        resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY,) * 2)
    if command == "more":
        for line in lines[20:]:
            w.add_interval(run_id, line)
    if command == "end":
        try:
            w.end_run(run_id, "completed", None)
            w.close()
            print("ENDED", flush=True)
        except LoadtowerError as exc:
            print("ERROR", exc, flush=True)
        break
"""


class Writer:
    """The writer subprocess, with its stdout read line by line (every wait bounded)."""

    def __init__(self, store: Path, how: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(store), how],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=Path(__file__).parents[2],
        )
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))

    def send(self, command: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()

    def expect(self, prefix: str, timeout: float = 60) -> str:
        while True:
            line = self.lines.get(timeout=timeout)  # queue.Empty fails the test
            if line.startswith(prefix):
                return line

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=30)


def _expected_ops(seconds: int) -> int:
    from tests.store.synth import make_lines

    lines, _ = make_lines(seconds=30, agents=2, ops=("read",))
    return sum(line["ops"]["read"]["ops"] for line in lines[: 2 * seconds])


@pytest.mark.parametrize("how", ["tmpfs", "rlimit"])
@pytest.mark.parametrize("frees_up", [True, False], ids=["space-comes-back", "stays-full"])
def test_a_disk_filling_up_mid_run(tmp_path: Path, mounts, how: str, frees_up: bool) -> None:
    disk = mounts("disk", "size=20m") if how == "tmpfs" else tmp_path
    store = disk / "s.duckdb"
    writer = Writer(store, how)
    filler = None
    try:
        run_id = writer.expect("FIRST").split()[1]
        if how == "tmpfs":
            filler = fill(disk)
        writer.send("fill")
        writer.send("more")
        failed = writer.expect("loadtower store: write failed, will retry:")
        assert ("No space left" if how == "tmpfs" else "File too large") in failed
        if frees_up:
            if filler is not None:
                filler.unlink()
            writer.send("free")
            writer.expect("loadtower store: writes resumed")
        writer.send("end")
        result = writer.expect("ENDED" if frees_up else "ERROR")
        writer.proc.wait(timeout=60)
    finally:
        writer.stop()
    if filler is not None and filler.exists():
        filler.unlink()
    if not frees_up:
        assert result.startswith(f"ERROR cannot write store {store}: ")
        assert "\n" not in result
    reader = StoreReader(store)  # the file is a valid store either way
    _, rows = reader.sql(f"SELECT count(*), sum(ops) FROM op_seconds WHERE run_id = '{run_id}'")
    if frees_up:
        assert rows == [(30, _expected_ops(30))]  # nothing lost
        assert reader.run(run_id)["status"] == "completed"
    else:
        assert rows == [(10, _expected_ops(10))]  # what was committed before it filled up
        assert reader.run(run_id)["status"] == "running"
        assert mark_interrupted_runs(store) == [run_id]


@pytest.mark.parametrize("content", ["not a key\n", ""], ids=["garbage", "empty"])
def test_an_ssh_key_file_that_is_not_a_key(tmp_path: Path, content: str) -> None:
    key = tmp_path / "id_bad"
    key.write_text(content)
    inventory = write_inventory(tmp_path / "inv.toml", closed_port())
    inventory.write_text(inventory.read_text().replace("[ssh]\n", f'[ssh]\nkey = "{key}"\n'))
    done = _run(inventory, tmp_path / "s.duckdb")
    assert done.returncode == 2
    line = one_error_line(done)
    assert re.search(rf"host (db1|agent1): cannot use the SSH key {key}: ", line), line
