"""A dead orchestrator's run becomes `interrupted` at the next loadtower start; a live
one (another process writing right now) never does. Real processes, real store files."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from loadtower.protocol.process_identity import (
    ProcessId,
    boot_id,
    pid_alive,
    start_ticks,
    this_process,
    verdict,
)
from loadtower.store import StoreReader, StoreWriter
from loadtower.store.admin import STALE_AFTER_S, mark_interrupted_runs
from loadtower.store.schema import migrate
from tests.reliability.helpers import cli

# a writer that stores one interval line per second of synthetic time, printing each
# second once it has been handed over, and never ends by itself
WRITER = """
import sys, time
from loadtower.store import StoreWriter
from tests.store.synth import make_lines
w = StoreWriter(sys.argv[1])
run_id = w.start_run("k", "s", "", "", {}, {}, {})
print("RUN", run_id, flush=True)
lines, _ = make_lines(seconds=600, agents=1, ops=("read",), start=int(time.time()) - 600)
w.phase_started(run_id, 0, "run", "run", float(lines[0]["ts"]), {})
for line in lines:
    w.add_interval(run_id, line)
    print("TS", line["ts"], flush=True)
    time.sleep(0.05)
time.sleep(3600)
"""


def _start_writer(store: Path) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(store)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).parents[2],
    )
    assert proc.stdout is not None
    first = proc.stdout.readline().split()
    assert first[:1] == ["RUN"], first
    return proc, first[1]


def _stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.wait(timeout=30)


def _stored_seconds(store: Path, run_id: str) -> set[int]:
    _, rows = StoreReader(store).sql(f"SELECT ts FROM op_seconds WHERE run_id = '{run_id}'")
    return {int(r[0]) for r in rows}


def _runs_json(store: Path) -> tuple[dict, str]:
    done = cli("runs", "--store", store, "--json")
    assert done.returncode == 0, done.stderr
    return {r["id"]: r for r in json.loads(done.stdout)}, done.stderr


def test_liveness_names_a_process_by_pid_start_time_and_boot() -> None:
    me = this_process()
    assert verdict(me) == "alive"
    assert ProcessId.decode(me.encode()) == me
    assert verdict(ProcessId(me.hostname, me.pid, (me.started or 0) + 1, me.boot_id)) == "dead"
    assert verdict(ProcessId(me.hostname, me.pid, me.started, "another-boot")) == "dead"
    assert verdict(ProcessId("not-" + socket.gethostname(), me.pid, me.started)) == "unknown"
    child = subprocess.Popen(["sleep", "60"])
    try:
        started = start_ticks(child.pid)
        assert started is not None
        assert verdict(ProcessId(me.hostname, child.pid, started, boot_id())) == "alive"
        child.kill()
        deadline = time.monotonic() + 30
        while pid_alive(child.pid) and time.monotonic() < deadline:  # a zombie is not alive
            time.sleep(0.01)
        assert not pid_alive(child.pid)
        assert verdict(ProcessId(me.hostname, child.pid, started, boot_id())) == "dead"
    finally:
        child.kill()
        child.wait(timeout=30)
    assert ProcessId.decode("garbage") is None


def test_a_live_writer_keeps_its_run_and_a_killed_one_is_marked_with_its_data(
    tmp_path: Path,
) -> None:
    store = tmp_path / "k.duckdb"
    proc, run_id = _start_writer(store)
    try:
        assert proc.stdout is not None
        handed = [int(proc.stdout.readline().split()[1]) for _ in range(40)]
        deadline = time.monotonic() + 60  # wait until the 40th second is committed
        while handed[-1] not in _stored_seconds(store, run_id):
            assert time.monotonic() < deadline, "the writer never committed"
            time.sleep(0.1)
        runs, err = _runs_json(store)  # a loadtower start while the writer is alive
        assert runs[run_id]["status"] == "running" and "interrupted" not in err
        assert mark_interrupted_runs(store) == []
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        _stop(proc)
    seconds = _stored_seconds(store, run_id)
    assert set(handed) <= seconds  # everything committed before the kill is there
    assert seconds == set(range(min(seconds), max(seconds) + 1))  # and without a gap
    before = store.read_bytes()
    runs, err = _runs_json(store)  # a read: names the dead run, changes nothing
    assert runs[run_id]["status"] == "running" and store.read_bytes() == before
    assert f"run {run_id} is still 'running' but the orchestrator" in err
    assert "loadtower repair --store" in err
    done = cli("repair", "--store", store)  # the explicit write
    assert done.returncode == 0, done.stderr
    assert f"run {run_id} marked interrupted" in done.stdout
    runs, err = _runs_json(store)
    run = runs[run_id]
    assert run["status"] == "interrupted"
    assert f"pid {proc.pid} on {socket.gethostname()}" in run["reason"]
    assert "samples up to" in run["reason"]
    assert run["ended"] >= max(seconds)  # the last stored activity, not the time of marking
    events = StoreReader(store).events(run_id)
    assert any("marked interrupted" in e["message"] for e in events)
    _, err = _runs_json(store)
    assert err == ""  # marked once


def _insert_running(store: Path, run_id: str, **cols: object) -> None:
    row = {"id": run_id, "name": run_id, "status": "running", "started": time.time()} | cols
    con = duckdb.connect(str(store))
    try:
        names = ", ".join(row)
        con.execute(f"INSERT INTO runs ({names}) VALUES ({', '.join('?' * len(row))})",
                    list(row.values()))  # fmt: skip
    finally:
        con.close()


def test_pid_reuse_reboot_and_writers_on_other_machines(tmp_path: Path) -> None:
    store = tmp_path / "r.duckdb"
    StoreWriter(store).close()
    me = this_process()
    host, other = me.hostname, "not-" + me.hostname
    now = time.time()
    mine = {"hostname": host, "pid": me.pid, "pid_started": me.started, "boot_id": me.boot_id}
    _insert_running(store, "alive", **mine)
    _insert_running(store, "pid-reused", **(mine | {"pid_started": (me.started or 0) + 7}))
    _insert_running(store, "rebooted", **(mine | {"boot_id": "an-earlier-boot"}))
    _insert_running(store, "remote-fresh", hostname=other, pid=1, heartbeat=now)
    _insert_running(store, "remote-silent", hostname=other, pid=1, heartbeat=now - 2 * STALE_AFTER_S)
    _insert_running(store, "remote-unknown", hostname=other, pid=1)
    assert sorted(mark_interrupted_runs(store)) == ["pid-reused", "rebooted", "remote-silent"]
    status = {r["id"]: (r["status"], r["reason"]) for r in StoreReader(store).runs()}
    assert status["alive"] == ("running", None)
    assert status["remote-fresh"][0] == status["remote-unknown"][0] == "running"
    assert "stopped writing" in status["remote-silent"][1]
    assert "ended without finishing" in status["pid-reused"][1]


def test_a_store_of_an_older_schema_is_checked_too(tmp_path: Path) -> None:
    """`loadtower runs` and `repair` on a store written before the liveness columns existed."""
    store = tmp_path / "old.duckdb"
    con = duckdb.connect(str(store))
    migrate(con, target=2)
    con.close()
    child = subprocess.Popen(["true"])
    child.wait(timeout=30)
    _insert_running(store, "old-dead", hostname=socket.gethostname(), pid=child.pid)
    runs, err = _runs_json(store)
    assert runs["old-dead"]["status"] == "running" and "is still 'running' but" in err
    done = cli("repair", "--store", store)
    assert done.returncode == 0 and "run old-dead marked interrupted" in done.stdout, done.stderr
    runs, err = _runs_json(store)
    assert runs["old-dead"]["status"] == "interrupted", runs


@pytest.mark.parametrize("command", ["runs", "sql", "export"])
def test_commands_on_a_file_that_is_not_a_store(tmp_path: Path, command: str) -> None:
    store = tmp_path / "notes.duckdb"
    store.write_text("these are my notes\n")
    args = {
        "runs": ["runs"],
        "sql": ["sql", "SELECT 1"],
        "export": ["export", "some-run", "--out", str(tmp_path / "out")],
    }[command]
    done = cli(*args, "--store", store, timeout=60)
    assert store.read_text() == "these are my notes\n"
    assert done.returncode == 2
    assert "not a valid DuckDB database file" in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_an_idle_writer_keeps_its_runs_heartbeat_fresh(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from loadtower.store import writer as writer_module

    monkeypatch.setattr(writer_module, "HEARTBEAT_S", 0.2)
    store = tmp_path / "h.duckdb"
    with StoreWriter(store, flush_every_s=0.05) as writer:
        run_id = writer.start_run("h", "s", "", "", {}, {}, {})
        first = StoreReader(store).run(run_id)["heartbeat"]
        deadline = time.monotonic() + 30  # no data is added: only the heartbeat moves
        while StoreReader(store).run(run_id)["heartbeat"] == first:
            assert time.monotonic() < deadline, "the heartbeat never moved"
            time.sleep(0.05)
        writer.end_run(run_id, "completed", None)
        ended = StoreReader(store).run(run_id)["heartbeat"]
        time.sleep(0.5)
        assert StoreReader(store).run(run_id)["heartbeat"] == ended  # only open runs beat
