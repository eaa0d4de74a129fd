"""StoreWriter: the one writer of a store file, batching everything it is given.

Calls only append to Python lists. A background thread flushes about once a second:
it folds interval lines into per-agent rows and merged rollups (see rollups.py),
opens the file, appends Arrow tables, re-writes the rollup rows that changed, commits
and closes the file again, so readers in other processes can open it in between.
A killed writer loses at most what arrived since the last flush (about a second).
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import threading
import time
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from loadtower.store import hdr
from loadtower.store.admin import mark_interrupted_runs
from loadtower.store.connection import connect
from loadtower.store.redact import redact
from loadtower.store.rollups import Level, Rollups, level_rows
from loadtower.store.schema import migrate

FLUSH_EVERY_S = 1.0
_COLUMNS = {
    "events": ["run_id", "ts", "kind", "message", "host", "phase", "data"],
    "logs": ["run_id", "ts", "host", "stream", "text"],
    "node_samples": ["run_id", "ts", "host", "cpu_pct", "mem_used_bytes", "mem_total_bytes"]
    + ["disk_read_bps", "disk_write_bps", "net_rx_bps", "net_tx_bps"],
    "agent_samples": ["run_id", "ts", "agent", "host", "cpu_pct", "ops", "state"],
}


def new_run_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(2)


def _json(value: Any) -> str | None:
    return None if value is None else json.dumps(value, default=str, sort_keys=True)


class StoreWriter:
    def __init__(self, path: Path | str, flush_every_s: float = FLUSH_EVERY_S) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with connect(self.path, read_only=False) as con:
            migrate(con)
        mark_interrupted_runs(self.path)
        self._lock = threading.Lock()  # guards the buffers below
        self._flush_lock = threading.Lock()  # one flush at a time
        self._rows: dict[str, list[tuple]] = {name: [] for name in _COLUMNS}
        self._lines: list[tuple[str, dict]] = []
        self._meta: list[tuple[str, list]] = []
        self._tables: list[tuple[str, pa.Table]] = []  # ingested, not yet committed
        self._facts: dict[str, dict] = {}
        self._rollups = Rollups()
        self._stop = threading.Event()
        self._every = flush_every_s
        self._thread = threading.Thread(target=self._loop, name="store-writer", daemon=True)
        self._thread.start()

    # -- calls from the orchestrator ------------------------------------------------
    def start_run(
        self,
        name: str,
        scenario_name: str,
        scenario_text: str | None,
        inventory_text: str | None,
        versions: dict,
        host_facts: dict,
        extra: dict,
        run_id: str | None = None,
        started: float | None = None,
    ) -> str:
        """Record a new run; `run_id`/`started` are for imports and fixtures."""
        run_id = run_id or new_run_id()
        self._facts[run_id] = dict(host_facts or {})
        row = [run_id, name, scenario_name, redact(scenario_text), redact(inventory_text)]
        row += [_json(versions or {}), _json(self._facts[run_id]), _json(extra or {})]
        row += [started or time.time(), None, "running", None, os.getpid(), socket.gethostname()]
        self._queue_meta(f"INSERT INTO runs VALUES ({', '.join('?' * len(row))})", row)
        self.flush()
        return run_id

    def phase_started(
        self, run_id: str, index: int, label: str, type: str, ts: float, params: dict
    ) -> None:
        row = [run_id, index, label, type, ts, None, _json(params or {}), None]
        self._queue_meta("INSERT INTO phases VALUES (?, ?, ?, ?, ?, ?, ?, ?)", row)

    def phase_ended(self, run_id: str, index: int, ts: float, result: dict) -> None:
        sql = "UPDATE phases SET ended = ?, result = ? WHERE run_id = ? AND idx = ?"
        self._queue_meta(sql, [ts, _json(result or {}), run_id, index])

    def event(
        self,
        run_id: str,
        ts: float,
        kind: str,
        message: str,
        host: str | None = None,
        phase: str | None = None,
        data: dict | None = None,
    ) -> None:
        self._append("events", (run_id, ts, kind, message, host, phase, _json(data)))

    def log(self, run_id: str, ts: float, host: str, stream: str, text: str) -> None:
        self._append("logs", (run_id, ts, host, stream, text))

    def add_interval(self, run_id: str, line: dict) -> None:
        with self._lock:
            self._lines.append((run_id, line))

    def add_agent_sample(
        self, run_id: str, ts: float, agent: str, host: str, cpu_pct: float, ops: float, state: str
    ) -> None:
        self._append("agent_samples", (run_id, ts, agent, host, cpu_pct, ops, state))

    def add_node_sample(
        self,
        run_id: str,
        ts: float,
        host: str,
        cpu_pct: float,
        mem_used_bytes: int,
        mem_total_bytes: int,
        disk_read_bps: float,
        disk_write_bps: float,
        net_rx_bps: float,
        net_tx_bps: float,
    ) -> None:
        row = (run_id, ts, host, cpu_pct, mem_used_bytes, mem_total_bytes, disk_read_bps)
        self._append("node_samples", row + (disk_write_bps, net_rx_bps, net_tx_bps))

    def set_host_facts(self, run_id: str, facts: dict) -> None:
        merged = self._facts.setdefault(run_id, {})
        merged.update(facts or {})
        self._queue_meta("UPDATE runs SET host_facts = ? WHERE id = ?", [_json(merged), run_id])

    def end_run(
        self, run_id: str, status: str, reason: str | None, ended: float | None = None
    ) -> None:
        sql = "UPDATE runs SET status = ?, reason = ?, ended = ? WHERE id = ?"
        self._queue_meta(sql, [status, reason, ended or time.time(), run_id])
        self.flush()
        with self._flush_lock:
            self._rollups.forget_run(run_id)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=60)
        self.flush()

    def __enter__(self) -> StoreWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- buffering and flushing ------------------------------------------------------
    def _append(self, table: str, row: tuple) -> None:
        with self._lock:
            self._rows[table].append(row)

    def _queue_meta(self, sql: str, params: list) -> None:
        with self._lock:
            self._meta.append((sql, params))

    def _loop(self) -> None:
        while not self._stop.wait(self._every):
            try:
                self.flush()
            except Exception as exc:  # noqa: BLE001 - keep the data; retry next tick
                print(f"loadtower store: flush failed, will retry: {exc}", flush=True)

    def flush(self) -> None:
        """Write everything buffered so far (blocks while a reader holds the file)."""
        with self._flush_lock:
            with self._lock:
                lines, self._lines = self._lines, []
                rows, self._rows = self._rows, {name: [] for name in _COLUMNS}
                meta, self._meta = self._meta, []
            if lines:
                table = self._rollups.ingest(lines)
                if table is not None:
                    self._tables.append(("op_intervals", table))
            for name, batch in rows.items():
                if batch:
                    cols = list(zip(*batch, strict=True))
                    arrays = [pa.array(c, from_pandas=True) for c in cols]
                    self._tables.append((name, pa.table(arrays, names=_COLUMNS[name])))
            levels = self._rollups.seconds, self._rollups.minutes, self._rollups.phases
            if not (meta or self._tables or any(lv.dirty for lv in levels)):
                return
            try:
                with connect(self.path, read_only=False) as con:
                    con.execute("BEGIN")
                    for sql, params in meta:
                        con.execute(sql, params)
                    for name, table in self._tables:
                        con.register("batch_rows", table)
                        con.execute(f"INSERT INTO {name} BY NAME SELECT * FROM batch_rows")
                        con.unregister("batch_rows")
                    for level in levels:
                        _write_level(con, level)
                    con.execute("COMMIT")
            except BaseException:
                with self._lock:
                    self._meta = meta + self._meta
                raise
            self._tables = []
            for level in levels:
                for key in level.dirty:
                    level.accs[key].written = True
                level.dirty.clear()
                level.late_keys.clear()
            self._rollups.evict()


def _merge_from_file(con: duckdb.DuckDBPyConnection, level: Level) -> None:
    """Keys whose counts left memory but got late data: add the stored row back in."""
    for key in level.late_keys:
        run_id, ts, phase, op = key
        row = con.execute(
            f"SELECT ops, errors, late, service_hist, response_hist FROM {level.name} "
            "WHERE run_id = ? AND ts = ? AND phase = ? AND op = ?",
            [run_id, ts, phase, op],
        ).fetchall()
        if not row:
            continue
        row = row[0]
        acc = level.accs[key]
        acc.ops, acc.errors, acc.late = acc.ops + row[0], acc.errors + row[1], acc.late + row[2]
        for blob, target in ((row[3], acc.svc), (row[4], acc.resp)):
            no, idx, cnt = hdr.decode_many([bytes(blob)], b64=False)
            target += hdr.dense(no, idx, cnt, 1)[0]
        acc.written = True


def _write_level(con: duckdb.DuckDBPyConnection, level: Level) -> None:
    if not level.dirty:
        return
    _merge_from_file(con, level)
    keys = sorted(level.dirty, key=lambda k: (k[0], k[1] or 0, k[2], k[3]))
    old = [k for k in keys if level.accs[k].written]
    if old:
        gone = pa.table({n: [k[i] for k in old] for i, n in enumerate(("r", "t", "p", "o"))})
        con.register("gone_keys", gone)
        where = "x.run_id = g.r AND x.phase = g.p AND x.op = g.o"
        if level.name != "op_phase":
            lo, hi = min(k[1] for k in old), max(k[1] for k in old)
            where += f" AND x.ts = g.t AND x.ts BETWEEN {int(lo)} AND {int(hi)}"
        con.execute(f"DELETE FROM {level.name} x USING gone_keys g WHERE {where}")
        con.unregister("gone_keys")
    con.register("level_rows", level_rows(level, keys))
    con.execute(f"INSERT INTO {level.name} BY NAME SELECT * FROM level_rows")
    con.unregister("level_rows")
