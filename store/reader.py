"""StoreReader: read-only access to a store, safe while a writer process is running.

Every call opens the file read-only, queries and closes it again (see connection.py),
knocking (the writer lets go of the file, knock.py) and retrying while the writer holds
it or is in the middle of a flush. While a reader has the file open
the writer cannot commit, so users' SQL on a store that a live run is writing is stopped
after `live_query_limit_s` (docs/store.md, "Readers and the writer").
"""

from __future__ import annotations

import json
import math
import threading
import time
from pathlib import Path
from typing import Any

import duckdb
import numpy as np

from loadtower.errors import LoadtowerError
from loadtower.store import hdr
from loadtower.store.connection import connect
from loadtower.store.engine_compare import phase_durations
from loadtower.store.phase_rate import ops_per_s, round_duration
from loadtower.store.query_cancel import QueryCancelled
from loadtower.store.ramp_steps import ramp_of
from loadtower.store.search_sql import SEARCH_RESULT_SQL
from loadtower.store.sql_guard import check_query, explain_error
from loadtower.store.table_reads import PREFIX, phase_tables, with_tombstones

# users' SQL while a run is being written to the store: stopped after this long, so the
# writer (which cannot commit while the file is open here) is held up at most this much
LIVE_QUERY_LIMIT_S = 2.0
# a run counts as being written while its heartbeat (refreshed at least every 5 s by the
# writer, writer.HEARTBEAT_S) is younger than this
LIVE_HEARTBEAT_S = 15.0
CANCEL_POLL_S = 0.05  # how often a running query looks at its cancel event
LISTED_CHARS = 4096  # a text column's characters a listing (`runs`) reads at most


def _capped(column: str) -> str:
    """`column` cut to LISTED_CHARS in the query, saying how long it was."""
    return (f"CASE WHEN length({column}) > {LISTED_CHARS} THEN left({column}, {LISTED_CHARS})"
            f" || '... (' || length({column}) || ' characters)' ELSE {column} END AS {column}")


def _capped_json(column: str) -> str:
    """A JSON column, or when longer than LISTED_CHARS a JSON note of its length."""
    return (f"CASE WHEN length({column}) > {LISTED_CHARS} THEN '{{\"left_out\": \"' || "
            f"length({column}) || ' characters\"}}' ELSE {column} END AS {column}")


STEPPED = ("ramp", "search")  # the phase types that run steps, each under its own label
_JSON_FIELDS = {"versions", "host_facts", "extra", "params", "result", "data", "errors_by_class"}


def _interrupt_when(
    cancel: threading.Event, done: threading.Event, con: duckdb.DuckDBPyConnection
) -> None:
    """Interrupt `con`'s query once `cancel` is set, and again every CANCEL_POLL_S until
    the query is `done`: an interrupt that comes before the query starts running (the
    cancel set while it was checked) is lost, and the query would run on for hours."""
    while not done.is_set():
        if cancel.wait(CANCEL_POLL_S):
            while not done.is_set():
                con.interrupt()
                done.wait(CANCEL_POLL_S)
            return


def _rows(cur: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    names = [d[0] for d in cur.description or []]
    out = []
    for row in cur.fetchall():
        item = dict(zip(names, row, strict=True))
        for key in _JSON_FIELDS & item.keys():
            if isinstance(item[key], str):
                item[key] = json.loads(item[key])
        out.append(item)
    return out


def live_runs(con: duckdb.DuckDBPyConnection, now: float | None = None) -> list[str]:
    """Ids of the runs a writer is writing now (status running, fresh heartbeat)."""
    now = time.time() if now is None else now
    try:
        rows = con.execute(
            "SELECT id FROM runs WHERE status = 'running' AND heartbeat > ? ORDER BY id",
            [now - LIVE_HEARTBEAT_S],
        ).fetchall()
    except duckdb.BinderException:  # schema 2 or older: no heartbeat column
        rows = con.execute("SELECT id FROM runs WHERE status = 'running' ORDER BY id").fetchall()
    except duckdb.CatalogException:  # no runs table: nothing is written here
        return []
    return [r[0] for r in rows]


class StoreReader:
    def __init__(
        self,
        path: Path | str,
        wait_s: float = 30.0,
        live_query_limit_s: float | None = LIVE_QUERY_LIMIT_S,
    ) -> None:
        self.path = Path(path)
        self.wait_s = wait_s
        self.live_query_limit_s = live_query_limit_s
        if not self.path.exists():
            raise LoadtowerError(f"no store at {self.path} (run a scenario first, or pass --store)")

    def _query(self, sql: str, params: list[Any] | None = None, run_id: str | None = None
    ) -> list[dict[str, Any]]:
        with connect(self.path, read_only=True, wait_s=self.wait_s) as con:
            if (
                run_id is not None
                and not con.execute("SELECT 1 FROM runs WHERE id = ?", [run_id]).fetchall()
            ):
                raise LoadtowerError(f"no run '{run_id}' in {self.path} (see 'loadtower runs')")
            return _rows(con.execute(sql, params or []))

    def runs(self) -> list[dict[str, Any]]:
        # a listing: each text capped (a crafted store's 100 MB reason stays in DuckDB,
        # never becomes Python strings and table cells); `run()` reads a run whole
        return self._query(
            f"SELECT id, {_capped('name')}, {_capped('scenario')}, status, "
            f"{_capped('reason')}, started, ended, {_capped_json('versions')} FROM runs "
            "ORDER BY started NULLS FIRST, id"
        )

    def run(self, run_id: str) -> dict[str, Any]:
        return self._query("SELECT * FROM runs WHERE id = ?", [run_id], run_id)[0]

    def phases(self, run_id: str) -> list[dict[str, Any]]:
        return self._query(
            'SELECT idx AS "index", name, type, started, ended, params, result FROM phases '
            "WHERE run_id = ? ORDER BY idx",
            [run_id],
            run_id,
        )

    def events(self, run_id: str) -> list[dict[str, Any]]:
        sql = "SELECT ts, kind, message, host, phase, data FROM events WHERE run_id = ? ORDER BY ts"
        return self._query(sql, [run_id], run_id)

    def op_seconds(self, run_id: str, phase: str | None = None) -> list[dict[str, Any]]:
        sql = "SELECT * FROM op_seconds WHERE run_id = ?"
        params: list[Any] = [run_id]
        if phase is not None:
            sql, params = sql + " AND phase = ?", params + [phase]
        return self._query(sql + " ORDER BY ts, op", params, run_id)

    def op_second_hists(self, run_id: str, kind: str = "response") -> list[dict[str, Any]]:
        """Per second, phase and op: ``ts, phase, op, ops, hist`` (the stored HDR BLOB of
        that second's response or service times, None without latencies), by ts."""
        if kind not in ("response", "service"):
            raise LoadtowerError(f"kind must be 'response' or 'service', not '{kind}'")
        sql = (f"SELECT ts, phase, op, ops, {kind}_hist AS hist FROM op_second "
               "WHERE run_id = ? ORDER BY ts, phase, op")  # fmt: skip
        return self._query(sql, [run_id], run_id)

    def node_seconds(self, run_id: str) -> list[dict[str, Any]]:
        sql = "SELECT * FROM node_seconds WHERE run_id = ? ORDER BY ts, host"
        return self._query(sql, [run_id], run_id)

    def node_stats(self, run_id: str, host: str | None = None) -> list[dict[str, Any]]:
        """The database's own figures of each node (``ts, host, engine, name, value``);
        none from a store of schema 4 or older that no writer has migrated yet."""
        sql = "SELECT ts, host, engine, name, value FROM node_stats WHERE run_id = ?"
        if not self._query("SELECT 1 FROM duckdb_tables() WHERE table_name = 'node_stats'"):
            self._query("SELECT 1", run_id=run_id)  # an unknown run is still one clear line
            return []
        params: list[Any] = [run_id]
        if host is not None:
            sql, params = sql + " AND host = ?", params + [host]
        return self._query(sql + " ORDER BY ts, host, name", params, run_id)

    def threshold_results(self, run_id: str) -> list[dict[str, Any]]:
        """The run's thresholds as its phases met or breached them, in order; none from a
        store of schema 5 or older that no writer has migrated yet."""
        if not self._query(
            "SELECT 1 FROM duckdb_tables() WHERE table_name = 'threshold_results'"
        ):
            self._query("SELECT 1", run_id=run_id)  # an unknown run is still one clear line
            return []
        sql = ("SELECT ts, phase, op, metric, bound, threshold, measured, passed, live, target "
               "FROM threshold_results WHERE run_id = ? ORDER BY ts, phase, target")  # fmt: skip
        return self._query(sql, [run_id], run_id)

    def agent_samples(self, run_id: str) -> list[dict[str, Any]]:
        sql = "SELECT * FROM agent_samples WHERE run_id = ? ORDER BY ts, agent"
        return self._query(sql, [run_id], run_id)

    def phase_summary(self, run_id: str) -> list[dict[str, Any]]:
        """One row per phase and op, with the tombstones per read of the table the phase
        read (``table_reads.py``: the same figures in every report)."""
        rows = self._query(
            "SELECT * FROM phase_summary WHERE run_id = ? ORDER BY first_ts, phase, op",
            [run_id],
            run_id,
        )
        for row in rows:
            row.pop("first_ts", None)
        return with_tombstones(rows, self.table_reads(run_id))

    def table_reads(self, run_id: str) -> dict[str, list[dict[str, Any]]]:
        """Per phase name, each table it read with its tombstones per read
        (``table_reads.phase_tables``); {} where no engine sampled them."""
        if not self._query("SELECT 1 FROM duckdb_tables() WHERE table_name = 'node_stats'"):
            return {}  # a store of schema 4 or older
        stats = self._query(
            "SELECT ts, host, name, value FROM node_stats WHERE run_id = ? "
            "AND starts_with(name, ?) ORDER BY ts", [run_id, PREFIX])
        if not stats:
            return {}
        return phase_tables(self.phases(run_id), stats)

    def table_reads_engines(self, run_id: str) -> list[str]:
        """The engines whose nodes gave the run's tombstones per read (``table_reads``),
        as stored (node_stats' ``engine``), in name order."""
        if not self._query("SELECT 1 FROM duckdb_tables() WHERE table_name = 'node_stats'"):
            return []
        rows = self._query(
            "SELECT DISTINCT engine FROM node_stats WHERE run_id = ? AND starts_with(name, ?) "
            "AND engine IS NOT NULL ORDER BY engine", [run_id, PREFIX])
        return [str(r["engine"]) for r in rows]

    def window_percentiles(
        self,
        run_id: str,
        start_ts: float,
        end_ts: float,
        op: str | None = None,
        phase: str | None = None,
        kind: str = "response",
    ) -> dict[str, Any]:
        """Exact percentiles over [start_ts, end_ts): merge the stored histograms.

        Whole minutes inside the window come from the per-minute rollup, the edges
        from the per-second rows.
        """
        if kind not in ("response", "service"):
            raise LoadtowerError(f"kind must be 'response' or 'service', not '{kind}'")
        start, end = math.ceil(start_ts), math.ceil(end_ts)
        m_lo, m_hi = -(-start // 60) * 60, end // 60 * 60
        filters, params = "", [run_id]
        if op is not None:
            filters, params = filters + " AND op = ?", params + [op]
        if phase is not None:
            filters, params = filters + " AND phase = ?", params + [phase]
        column = f"{kind}_hist"
        if m_lo < m_hi:
            sql = (
                f"SELECT ops, errors, {column} FROM op_minute WHERE run_id = ?{filters} "
                f"AND ts >= {m_lo} AND ts < {m_hi} UNION ALL "
                f"SELECT ops, errors, {column} FROM op_second WHERE run_id = ?{filters} "
                f"AND ts >= {start} AND ts < {end} AND NOT (ts >= {m_lo} AND ts < {m_hi})"
            )
            params = params + params
        else:
            sql = (
                f"SELECT ops, errors, {column} FROM op_second WHERE run_id = ?{filters} "
                f"AND ts >= {start} AND ts < {end}"
            )
        rows = self._query(sql, params, run_id)
        blobs = [bytes(r[column]) for r in rows if r[column] is not None]
        no, idx, cnt = hdr.decode_many(blobs, b64=False)
        counts = np.bincount(idx, weights=cnt, minlength=hdr.COUNTS_LEN).astype(np.int64)
        stats = hdr.dense_stats(counts[None, :])[0]
        out: dict[str, Any] = {
            "ops": int(sum(r["ops"] for r in rows)),
            "errors": int(sum(r["errors"] for r in rows)),
        }
        for j, name in enumerate(["p50_ms", "p90_ms", "p99_ms", "p999_ms", "max_ms"]):
            out[name] = None if np.isnan(stats[j]) else float(stats[j])
        return out

    def sql(
        self, query: str, max_rows: int | None = None, cancel: threading.Event | None = None
    ) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Run one read-only query; anything that could write is refused (sql_guard.py).
        With `max_rows`, at most that many rows are fetched (the rest are never read).

        While a run is being written to the store, the query is stopped after
        `live_query_limit_s` (None: never), so the writer is not held up longer.
        Setting `cancel` (from any thread: Ctrl-C, a TUI key) stops the query within
        CANCEL_POLL_S and raises QueryCancelled.
        """
        with connect(self.path, read_only=True, wait_s=self.wait_s) as con:
            check_query(con, query)
            limit = self.live_query_limit_s
            live = live_runs(con) if limit is not None else []
            timer = threading.Timer(limit, con.interrupt) if live and limit is not None else None
            done = threading.Event()
            watcher = None
            if cancel is not None:
                watcher = threading.Thread(
                    target=_interrupt_when, args=(cancel, done, con), daemon=True,
                    name="store-sql-cancel",
                )
                watcher.start()
            try:
                if timer is not None:
                    timer.start()
                if cancel is not None and cancel.is_set():
                    raise QueryCancelled("query cancelled")
                cur = con.execute(query)
                rows = cur.fetchall() if max_rows is None else cur.fetchmany(max_rows)
                return [d[0] for d in cur.description or []], rows
            except duckdb.InterruptException as exc:
                if cancel is not None and cancel.is_set():
                    raise QueryCancelled("query cancelled") from None
                raise LoadtowerError(
                    f"query stopped after {limit:g} s: run {live[0]} is being written to this "
                    "store, and the writer cannot commit while a query holds the file; run long "
                    "queries after the run ends"
                ) from exc
            except duckdb.Error as exc:
                raise explain_error(exc) or LoadtowerError(f"query failed: {exc}") from exc
            finally:
                done.set()
                if timer is not None:
                    timer.cancel()
                if watcher is not None:
                    watcher.join()

    def phase_totals(self, run_id: str, kind: str = "response") -> dict[str, dict[str, Any]]:
        """phase label -> its figures over all its ops: ops, errors, late, duration_s,
        ops_per_s (phase_rate.py: the figure of its live result and of phase_summary),
        p50/p90/p99/p999/max ms from the merged op histograms, first_ts. A ramp's steps
        are labels of their own (``saturation@40``)."""
        if kind not in ("response", "service"):
            raise LoadtowerError(f"kind must be 'response' or 'service', not '{kind}'")
        with connect(self.path, read_only=True, wait_s=self.wait_s) as con:
            if not con.execute("SELECT 1 FROM runs WHERE id = ?", [run_id]).fetchall():
                raise LoadtowerError(f"no run '{run_id}' in {self.path} (see 'loadtower runs')")
            rows = con.execute(
                f"SELECT phase, ops, errors, late, first_ts, {kind}_hist "
                "FROM op_phase WHERE run_id = ? ORDER BY first_ts, phase, op",
                [run_id],
            ).fetchall()
            durations = phase_durations(con, run_id)  # the one measured duration per phase
        grouped: dict[str, list[tuple[Any, ...]]] = {}
        for row in rows:
            grouped.setdefault(str(row[0]), []).append(row)
        out: dict[str, dict[str, Any]] = {}
        for phase, items in grouped.items():
            duration = durations.get(phase)
            blobs = [bytes(r[5]) for r in items if r[5] is not None]
            _no, idx, cnt = hdr.decode_many(blobs, b64=False)
            counts = np.bincount(idx, weights=cnt, minlength=hdr.COUNTS_LEN).astype(np.int64)
            stats = hdr.dense_stats(counts[None, :])[0]
            ops = int(sum(r[1] for r in items))
            figures: dict[str, Any] = {
                "phase": phase,
                "ops": ops,
                "errors": int(sum(r[2] for r in items)),
                "late": int(sum(r[3] for r in items)),
                "duration_s": round_duration(duration),
                "ops_per_s": ops_per_s(ops, duration),
                "first_ts": min(r[4] for r in items),
            }
            for j, name in enumerate(["p50_ms", "p90_ms", "p99_ms", "p999_ms", "max_ms"]):
                figures[name] = None if np.isnan(stats[j]) else float(stats[j])
            out[phase] = figures
        return out

    def ramp_steps(self, run_id: str) -> list[dict[str, Any]]:
        """One row per step of every ramp and search of the run, in order: ``ramp`` (its
        phase label), ``kind`` (``ramp`` or ``search``), ``label`` (the step's phase
        label, e.g. ``saturation@40``), ``step``, ``asked`` and ``unit`` (ops/s or
        users), the step's stored figures (``ops``, ``duration_s``,
        ``achieved_ops_per_s``, ``p50_ms``, ``p90_ms``, ``p99_ms``, ``p999_ms``,
        ``errors``) and the phase's verdict (``passed``, ``why``; None while it has not
        ended; a search step's ``stage``: bracket, narrow or confirm). The figures are those of phase_summary for that label."""
        phases = self.phases(run_id)
        ramps = {p["name"]: p for p in phases if p["type"] in STEPPED}
        if not ramps:
            return []
        totals = self.phase_totals(run_id)
        out: list[dict[str, Any]] = []
        for name, phase in ramps.items():
            result = phase["result"] if isinstance(phase["result"], dict) else {}
            judged = {s["label"]: s for s in result.get("steps") or [] if "label" in s}
            labels = list(judged) + [
                label for label in totals if label not in judged and ramp_of(label, ramps) == name
            ]
            for number, label in enumerate(labels, start=1):
                verdict = judged.get(label, {})
                figures = totals.get(label, {})
                level = label.rsplit("@", 1)[-1].split("#", 1)[0]
                out.append(
                    {
                        "ramp": name,
                        "label": label,
                        "step": verdict.get("step", number),
                        "asked": verdict.get("asked", float(level) if _is_number(level) else None),
                        "unit": verdict.get("unit", result.get("unit")),
                        "ops": figures.get("ops", 0),
                        "duration_s": figures.get("duration_s"),
                        "achieved_ops_per_s": figures.get("ops_per_s", 0.0),
                        "p50_ms": figures.get("p50_ms"),
                        "p90_ms": figures.get("p90_ms"),
                        "p99_ms": figures.get("p99_ms"),
                        "p999_ms": figures.get("p999_ms"),
                        "errors": figures.get("errors", 0),
                        "kind": phase["type"],
                        "stage": verdict.get("stage"),
                        "passed": verdict.get("passed"),
                        "why": verdict.get("why", verdict.get("reason")),
                    }
                )
        return out


    def search_results(self, run_id: str) -> list[dict[str, Any]]:
        """One row per `search` phase of the run, in order: the ``search_result`` view's
        columns (store/search_sql.py): the rate found, its bracket, the target."""
        rows = self._query(
            f"SELECT * FROM ({SEARCH_RESULT_SQL}) WHERE run_id = ? ORDER BY idx", [run_id], run_id
        )
        for row in rows:
            row.pop("idx", None)
        return rows


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
