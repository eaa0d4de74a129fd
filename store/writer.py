"""StoreWriter: the one writer of a store file, batching everything it is given.

Calls only append to Python lists. A background thread flushes about once a second:
it folds interval lines into per-agent rows and merged rollups (see rollups.py),
appends Arrow tables and re-writes the rollup rows that changed, in one transaction.
The writer keeps its connection open between flushes (no open and checkpoint per
flush; closed and opened again every HOLD_S, which lets DuckDB's cache go) while nobody
else wants the file: a reader that finds it busy knocks (knock.py),
the thread sees it within KNOCK_CHECK_S, closes the file and then opens and closes it
per flush (readers get in between flushes) until the knocks stop. A flush that fails
closes the connection: the next one opens it anew.
A killed writer loses at most what arrived since the last flush (about a second).
Each flush also refreshes the heartbeat of the runs this writer has open (at least
every HEARTBEAT_S, data or not), and each run row names its writer process, so the
next loadtower start can tell a dead orchestrator's run from a live one (admin.py).
A store that cannot be created (full disk, not a directory) is not left half-written.
Rows taken from the buffers for a flush are never dropped: a value the store cannot take
(text that is not UTF-8, a wrong type) is repaired and reported as a `bad_sample` event
(writer_values.py), and a flush that fails puts back everything it took.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import threading
import time
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from loadtower.errors import LoadtowerError
from loadtower.protocol.process_identity import this_process
from loadtower.store import hdr
from loadtower.store.admin import mark_interrupted_runs
from loadtower.store.connection import connect, is_busy, open_connection
from loadtower.store.heap_trim import HeapTrim
from loadtower.store.knock import Door
from loadtower.store.redact import MASK, mask_url_passwords, redact
from loadtower.store.rollups import Level, Rollups, level_rows
from loadtower.store.schema import migrate
from loadtower.store.writer_values import build_table, repaired_line, repaired_params

FLUSH_EVERY_S = 1.0
# what the store refuses for what a statement holds (a duplicate key, a value it cannot
# take): retrying the same statement cannot help (a lock, a full disk or memory can)
_REFUSED = (duckdb.ConstraintException, duckdb.ConversionException,
            duckdb.InvalidInputException, duckdb.BinderException, duckdb.OutOfRangeException,
            duckdb.TypeMismatchException)  # fmt: skip
HEARTBEAT_S = 5.0
KNOCK_CHECK_S = 0.05  # while it holds the file, the thread looks for knocks this often
# the kept connection is closed (checkpointed) after this long and opened again at the
# next flush: DuckDB keeps the blocks it wrote cached for as long as a connection is
# open (bench/fleet_memory.py at 1,024 workers: +84 MB in 9 minutes held, against +21
# opening it per flush), so holding it for good would grow the orchestrator's memory
HOLD_S = 60.0
THRESHOLD_COLUMNS = ("phase", "op", "metric", "bound", "threshold", "measured", "passed", "live",
                     "target")  # fmt: skip
_COLUMNS = {
    "events": ["run_id", "ts", "kind", "message", "host", "phase", "data"],
    "logs": ["run_id", "ts", "host", "stream", "text"],
    "node_samples": ["run_id", "ts", "host", "cpu_pct", "mem_used_bytes", "mem_total_bytes"]
    + ["disk_read_bps", "disk_write_bps", "net_rx_bps", "net_tx_bps"],
    "agent_samples": ["run_id", "ts", "agent", "host", "cpu_pct", "ops", "state"],
    "node_stats": ["run_id", "ts", "host", "engine", "name", "value"],
}


def new_run_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(2)


def _json(value: Any) -> str | None:
    return None if value is None else json.dumps(value, default=str, sort_keys=True)


def _one_line(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.strerror}: {exc.filename}" if exc.filename else exc.strerror
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    for prefix in ("IO Error: ", "TransactionContext Error: "):
        text = text.replace(prefix, "")
    return text


class StoreWriter:
    def __init__(
        self, path: Path | str, flush_every_s: float = FLUSH_EVERY_S, lock_wait_s: float = 30.0
    ) -> None:
        self.path = Path(path)
        self.lock_wait_s = lock_wait_s  # how long a flush waits for a reader to let go
        self._open_store()
        self._lock = threading.Lock()  # guards the buffers below
        self._flush_lock = threading.Lock()  # one flush at a time
        self._rows: dict[str, list[tuple[Any, ...]]] = {name: [] for name in _COLUMNS}
        # (run id, interval line, whether its every string is ASCII already: no walk)
        self._lines: list[tuple[str, dict[str, Any], bool]] = []
        self._meta: list[tuple[str, list[Any], str]] = []  # (statement, parameters, run id)
        self._tables: list[tuple[str, pa.Table]] = []  # ingested, not yet committed
        self._facts: dict[str, dict[str, Any]] = {}
        self._rollups = Rollups()
        self._stop = threading.Event()
        self._every = flush_every_s
        self._active: set[str] = set()  # runs started here and not ended: heartbeat
        # passwords to mask in every text written (the orchestrator sets them: secrets.py)
        self.secrets: list[str] = []
        self._last_commit = time.time()
        # the connection kept between flushes (None: closed); only under _flush_lock
        self._con: duckdb.DuckDBPyConnection | None = None
        self._held_since = 0.0  # when the kept connection was opened (HOLD_S)
        self._door = Door(self.path)
        # after each flush of the thread, the C heap's free pages go back to the OS
        # (heap_trim.py): the RSS follows what is alive, not the last seconds' peak
        self.trim = HeapTrim()
        self._thread = threading.Thread(target=self._loop, name="store-writer", daemon=True)
        self._thread.start()

    def _open_store(self) -> None:
        """Create or migrate the file; if creating it fails, leave no half-written file."""
        created = not self.path.exists()
        try:
            if self.path.is_dir():
                raise LoadtowerError(f"store {self.path} is a directory, not a store file")
            parent = self.path.parent
            if parent.exists() and not parent.is_dir():
                raise LoadtowerError(f"store {self.path}: {parent} is a file, not a directory")
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with connect(self.path, read_only=False) as con:
                migrate(con)
            mark_interrupted_runs(self.path)
        except (duckdb.Error, OSError, LoadtowerError) as exc:
            if created:
                for leftover in (self.path, Path(f"{self.path}.wal")):
                    with contextlib.suppress(OSError):
                        leftover.unlink(missing_ok=True)
            if isinstance(exc, LoadtowerError):
                raise
            raise LoadtowerError(f"cannot open store {self.path}: {_one_line(exc)}") from None

    def _mask(self, text: str | None) -> str | None:
        if text is None:
            return None
        text = mask_url_passwords(text)
        for secret in self.secrets:
            if secret:
                text = text.replace(secret, MASK)
                escaped = json.dumps(secret)[1:-1]  # as it appears inside JSON text
                if escaped != secret:
                    text = text.replace(escaped, MASK)
        return text

    def _mask_json(self, value: Any) -> str | None:
        return self._mask(_json(value))

    # -- calls from the orchestrator ------------------------------------------------
    def start_run(
        self,
        name: str,
        scenario_name: str,
        scenario_text: str | None,
        inventory_text: str | None,
        versions: dict[str, Any],
        host_facts: dict[str, Any],
        extra: dict[str, Any],
        run_id: str | None = None,
        started: float | None = None,
    ) -> str:
        """Record a new run; `run_id`/`started` are for imports and fixtures."""
        run_id = run_id or new_run_id()
        self._facts[run_id] = dict(host_facts or {})
        me = this_process()
        row = {
            "id": run_id,
            "name": name,
            "scenario": scenario_name,
            "scenario_text": self._mask(redact(scenario_text)),
            "inventory_text": self._mask(redact(inventory_text)),
            "versions": _json(versions or {}),
            "host_facts": self._mask_json(self._facts[run_id]),
            "extra": self._mask_json(extra or {}),
            "started": started or time.time(),
            "status": "running",
            "pid": me.pid,
            "hostname": me.hostname,
            "pid_started": me.started,
            "boot_id": me.boot_id,
            "heartbeat": time.time(),
        }
        sql = f"INSERT INTO runs ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})"
        self._queue_meta(sql, list(row.values()), list(row), run_id)
        with self._lock:
            self._active.add(run_id)
        self.flush()
        return run_id

    def phase_started(
        self, run_id: str, index: int, label: str, type: str, ts: float, params: dict[str, Any]
    ) -> None:
        row = [run_id, index, label, type, ts, None, self._mask_json(params or {}), None]
        columns = ["run_id", "idx", "name", "type", "started", "ended", "params", "result"]
        self._queue_meta(f"INSERT INTO phases ({', '.join(columns)}) VALUES "
                         f"({', '.join('?' * len(columns))})", row, columns, run_id)  # fmt: skip

    def phase_ended(self, run_id: str, index: int, ts: float, result: dict[str, Any]) -> None:
        sql = "UPDATE phases SET ended = ?, result = ? WHERE run_id = ? AND idx = ?"
        params = [ts, self._mask_json(result or {}), run_id, index]
        self._queue_meta(sql, params, ["ended", "result", "run_id", "idx"], run_id)

    def event(
        self,
        run_id: str,
        ts: float,
        kind: str,
        message: str,
        host: str | None = None,
        phase: str | None = None,
        data: dict[str, Any] | None = None,
    ) -> None:
        row = (run_id, ts, kind, self._mask(message), host, phase, self._mask_json(data))
        self._append("events", row)

    def threshold_result(self, run_id: str, ts: float, result: dict[str, Any]) -> None:
        """One threshold as a phase met or breached it (threshold_results; the keys are its
        columns: phase, op, metric, bound, threshold, measured, passed, live, target)."""
        columns = ["run_id", "ts", *THRESHOLD_COLUMNS]
        params = [run_id, ts, *(result.get(c) for c in THRESHOLD_COLUMNS)]
        self._queue_meta(f"INSERT INTO threshold_results ({', '.join(columns)}) VALUES "
                         f"({', '.join('?' * len(columns))})", params, columns, run_id)  # fmt: skip

    def log(self, run_id: str, ts: float, host: str, stream: str, text: str) -> None:
        self._append("logs", (run_id, ts, host, stream, self._mask(text)))

    def add_interval(self, run_id: str, line: dict[str, Any], ascii_text: bool = False) -> None:
        """One interval line; `ascii_text`: the caller knows every string in it is ASCII
        (it was parsed from ASCII JSON text without a \\u escape), so the flush does not
        walk it for text that is not UTF-8."""
        with self._lock:
            self._lines.append((run_id, line, ascii_text))

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

    def node_stats(
        self, run_id: str, ts: float, host: str, engine: str, figures: dict[str, float | None]
    ) -> None:
        """The database's own figures of `host` at `ts` (name -> value; None: not reported),
        one `node_stats` row each, beside the node samples."""
        with self._lock:
            self._rows["node_stats"].extend(
                (run_id, ts, host, engine, name, value) for name, value in figures.items()
            )

    def set_host_facts(self, run_id: str, facts: dict[str, Any]) -> None:
        merged = self._facts.setdefault(run_id, {})
        merged.update(facts or {})
        sql = "UPDATE runs SET host_facts = ? WHERE id = ?"
        self._queue_meta(sql, [self._mask_json(merged), run_id], ["host_facts", "id"], run_id)

    def set_versions(self, run_id: str, versions: dict[str, Any]) -> None:
        """Replace the run's versions (the orchestrator adds the DB and agent hosts' ones)."""
        sql = "UPDATE runs SET versions = ? WHERE id = ?"
        self._queue_meta(sql, [self._mask_json(versions or {}), run_id], ["versions", "id"], run_id)

    def end_run(
        self, run_id: str, status: str, reason: str | None, ended: float | None = None
    ) -> None:
        sql = "UPDATE runs SET status = ?, reason = ?, ended = ? WHERE id = ?"
        params = [status, self._mask(reason), ended or time.time(), run_id]
        self._queue_meta(sql, params, ["status", "reason", "ended", "id"], run_id)
        self._flush_or_explain()
        with self._lock:
            self._active.discard(run_id)
        with self._flush_lock:
            self._rollups.forget_run(run_id)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=60)
        try:
            self._flush_or_explain()
        finally:
            with self._flush_lock:
                self._let_go()
            self._door.remove()

    def _flush_or_explain(self) -> None:
        try:
            self.flush()
        except (duckdb.Error, OSError) as exc:
            raise LoadtowerError(
                f"cannot write store {self.path}: {_one_line(exc)} (what it held before stays "
                "there; the samples since then are lost)"
            ) from None

    def __enter__(self) -> StoreWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- buffering and flushing ------------------------------------------------------
    def _append(self, table: str, row: tuple[Any, ...]) -> None:
        with self._lock:
            self._rows[table].append(row)

    def _queue_meta(self, sql: str, params: list[Any], columns: list[str], run_id: str) -> None:
        """Queue one statement; `columns` names its parameters (for bad_sample events)."""
        table = sql.split()[2] if sql.startswith("INSERT") else sql.split()[1]
        params, bad = repaired_params(table, columns, params)
        with self._lock:
            self._meta.append((sql, params, run_id))
            for why in bad:
                self._rows["events"].append((run_id, time.time(), "bad_sample", why, None, None,
                                             None))  # fmt: skip

    def _loop(self) -> None:
        """Flush every `_every` seconds at a fixed rate (not `_every` after the previous
        flush ended), so what is handed over waits at most `_every` plus one flush."""
        failing = ""
        due = time.monotonic() + self._every
        while not self._stop.wait(min(max(0.0, due - time.monotonic()), KNOCK_CHECK_S)):
            if time.monotonic() < due:
                self._answer_knocks()
                continue
            due = max(due + self._every, time.monotonic())
            try:
                self.flush()
            except Exception as exc:  # noqa: BLE001 - keep the data; retry next tick
                if _one_line(exc) != failing:  # once per kind of failure, not every second
                    failing = _one_line(exc)
                    print(f"loadtower store: write failed, will retry: {failing}", flush=True)
                continue
            self.trim()
            if failing:
                failing = ""
                print("loadtower store: writes resumed", flush=True)

    @property
    def holds_file(self) -> bool:
        """True while the writer keeps the store open between flushes."""
        return self._con is not None

    def _answer_knocks(self) -> None:
        """Let go of the file if someone knocked (or the knock folder went away)."""
        if self._con is None or self._door.may_hold():
            return
        with self._flush_lock:  # the flush in progress ends first
            self._let_go()

    def _let_go(self) -> None:
        """Close the kept connection (DuckDB checkpoints the file); under _flush_lock."""
        con, self._con = self._con, None
        if con is not None:
            with contextlib.suppress(duckdb.Error):
                con.close()

    def _connection(self) -> duckdb.DuckDBPyConnection:
        """The kept connection, opened if it is closed; under _flush_lock."""
        if self._con is None:
            self._door.prepare()
            self._con = open_connection(self.path, read_only=False, wait_s=self.lock_wait_s)
            self._held_since = time.monotonic()
        return self._con

    def flush(self) -> None:
        """Write everything buffered so far (blocks while a reader holds the file)."""
        with self._flush_lock:
            with self._lock:
                lines, self._lines = self._lines, []
                rows, self._rows = self._rows, {name: [] for name in _COLUMNS}
                meta, self._meta = self._meta, []
                active = sorted(self._active)
            try:
                if lines:
                    self._ingest(lines, rows["events"])
                    lines = []  # the rollups hold them now: never handed in twice
                built = self._build(rows)
            except BaseException:
                self._put_back(lines, rows, meta)
                raise
            self._tables.extend(built)
            levels = self._rollups.seconds, self._rollups.minutes, self._rollups.phases
            beat_due = bool(active) and time.time() - self._last_commit >= HEARTBEAT_S
            if not (meta or self._tables or any(lv.dirty for lv in levels) or beat_due):
                return
            refused: list[tuple[str, str]] = []
            try:
                try:
                    self._commit(meta, active, levels)
                except _REFUSED as exc:
                    if is_busy(exc):
                        raise
                    # one statement the store refuses must not block every later flush:
                    # each on its own, the refused ones become bad_sample events
                    refused = self._commit(meta, active, levels, one_by_one=True)
                self._last_commit = time.time()
            except BaseException:
                self._put_back([], {}, meta)  # the tables stay in self._tables
                raise
            self._tables = []
            for level in levels:
                for key in level.dirty:
                    level.accs[key].written = True
                level.dirty.clear()
                level.late_keys.clear()
            self._rollups.evict()
            if refused:
                with self._lock:
                    self._rows["events"].extend(_bad_events(refused))
                raise LoadtowerError(
                    f"store {self.path} refused {len(refused)} statement(s), recorded as "
                    f"bad_sample events; the rest is written: {refused[0][1]}"
                )

    def _commit(
        self, meta: list[tuple[str, list[Any], str]], active: list[str], levels: tuple[Any, ...],
        one_by_one: bool = False,
    ) -> list[tuple[str, str]]:  # fmt: skip
        """Write `meta`, the heartbeat, the tables and the rollups in one transaction; with
        `one_by_one`, each statement of `meta` first in its own (taken out of `meta` once
        committed or refused), skipping those refused. Returns those: (run id, why)."""
        refused = []
        con = self._connection()
        try:
            if one_by_one:
                while meta:  # each leaves `meta` once done: never put back, never run twice
                    sql, params, run_id = meta[0]
                    try:
                        con.execute("BEGIN")
                        con.execute(sql, params)
                        con.execute("COMMIT")
                    except _REFUSED as exc:
                        con.execute("ROLLBACK")
                        table = sql.split()[2] if sql.startswith("INSERT") else sql.split()[1]
                        refused.append((run_id, f"{table}: statement refused: {_one_line(exc)}"))
                    meta.pop(0)
            con.execute("BEGIN")
            for sql, params, _run in meta:
                con.execute(sql, params)
            if active:
                marks = ", ".join("?" * len(active))
                con.execute(
                    f"UPDATE runs SET heartbeat = ? WHERE id IN ({marks})", [time.time(), *active]
                )
            for name, table in self._tables:
                con.register("batch_rows", table)
                con.execute(f"INSERT INTO {name} BY NAME SELECT * FROM batch_rows")
                con.unregister("batch_rows")
            for level in levels:
                _write_level(con, level)
            con.execute("COMMIT")
        except BaseException:
            self._let_go()  # a broken connection never sticks; a transaction left open ends
            raise
        if not self._door.may_hold():
            self._let_go()  # someone knocked: the file is free until the next flush
        elif time.monotonic() - self._held_since >= HOLD_S:
            self._let_go()  # DuckDB's cached blocks go with it (HOLD_S)
        return refused

    def _ingest(self, lines: list[tuple[str, dict[str, Any], bool]],
                events: list[tuple[Any, ...]]) -> None:
        """Fold interval lines into the rollups; text that is not UTF-8 is spelled out and
        reported, lines the rollups reject become bad_sample events."""
        clean = []
        for run_id, line, ascii_text in lines:
            if ascii_text:
                clean.append((run_id, line))
                continue
            line, bad = repaired_line(line)
            clean.append((run_id, line))
            events.extend((run_id, time.time(), "bad_sample", why, None, None, None)
                          for why in bad)  # fmt: skip
        table = self._rollups.ingest(clean)
        if table is not None:
            self._tables.append(("op_intervals", table))
        rejected, self._rollups.rejected = self._rollups.rejected, []
        for run_id, why in rejected:
            events.append((run_id, time.time(), "bad_sample", why, None, None, None))

    def _build(self, rows: dict[str, list[tuple[Any, ...]]]) -> list[tuple[str, pa.Table]]:
        """The buffered rows as Arrow tables; bad values repaired, each one reported as a
        bad_sample event (events last, so that they carry the others' reports)."""
        built = []
        events = list(rows.get("events", []))
        for name, batch in rows.items():
            if name != "events" and batch:
                table, bad = build_table(name, _COLUMNS[name], batch)
                built.append((name, table))
                events.extend(_bad_events(bad))
        if events:
            table, bad = build_table("events", _COLUMNS["events"], events)
            built.append(("events", table))
            if bad:  # reports of bad event values: plain ASCII, they build
                built.append(("events", build_table("events", _COLUMNS["events"],
                                                    _bad_events(bad))[0]))  # fmt: skip
        return built

    def _put_back(
        self, lines: list[tuple[str, dict[str, Any], bool]], rows: dict[str, list[tuple[Any, ...]]],
        meta: list[Any],
    ) -> None:
        """A flush failed: what it took goes back in front of what arrived meanwhile."""
        with self._lock:
            self._lines = lines + self._lines
            for name, batch in rows.items():
                self._rows[name] = batch + self._rows[name]
            self._meta = meta + self._meta


def _bad_events(bad: list[tuple[str, str]]) -> list[tuple[Any, ...]]:
    return [(run_id, time.time(), "bad_sample", why, None, None, None) for run_id, why in bad]


def _merge_from_file(con: duckdb.DuckDBPyConnection, level: Level) -> None:
    """Keys whose counts left memory but got late data: add the stored row back in."""
    for key in list(level.late_keys):
        run_id, ts, phase, op = key
        found = con.execute(
            f"SELECT ops, errors, late, service_hist, response_hist, lateness_hist FROM {level.name} "
            "WHERE run_id = ? AND ts = ? AND phase = ? AND op = ?",
            [run_id, ts, phase, op],
        ).fetchall()
        level.late_keys.discard(key)  # merged into memory now, also if the commit fails
        if not found:
            continue
        row = found[0]
        acc = level.accs[key]
        acc.ops, acc.errors, acc.late = acc.ops + row[0], acc.errors + row[1], acc.late + row[2]
        # the kinds in order (rollups' SERVICE, RESPONSE, LATENESS); lateness is NULL
        # where none came, and then stays as the late lines make it
        for kind, blob in enumerate((row[3], row[4], row[5])):
            if blob is None:
                continue
            no, idx, cnt = hdr.decode_many([bytes(blob)], b64=False)
            level.add_dense(acc, kind, hdr.dense(no, idx, cnt, 1)[0])
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
