"""The versioned DuckDB schema: an ordered list of migrations plus the public views.

Add a migration by appending to MIGRATIONS; never edit one that has shipped.
Views are re-created by every writer open, so they always match the code.
"""

from __future__ import annotations

import time

import duckdb

from loadtower.errors import LoadtowerError
from loadtower.store.phase_rate import SQL_DURATION, SQL_OPS_PER_S
from loadtower.store.search_sql import SEARCH_RESULT_SQL

_STATS = "p50_ms DOUBLE, p90_ms DOUBLE, p99_ms DOUBLE, p999_ms DOUBLE, max_ms DOUBLE"
_HISTS = "service_hist BLOB, response_hist BLOB"  # hdrh encode() minus base64

MIGRATIONS: list[list[str]] = [
    # 1: runs, phases, events, logs, per-agent op intervals, merged seconds, samples
    [
        """CREATE TABLE runs (id VARCHAR PRIMARY KEY, name VARCHAR, scenario VARCHAR,
            scenario_text VARCHAR, inventory_text VARCHAR, versions VARCHAR, host_facts VARCHAR,
            extra VARCHAR, started DOUBLE, ended DOUBLE, status VARCHAR, reason VARCHAR,
            pid INTEGER, hostname VARCHAR)""",
        """CREATE TABLE phases (run_id VARCHAR, idx INTEGER, name VARCHAR, type VARCHAR,
            started DOUBLE, ended DOUBLE, params VARCHAR, result VARCHAR)""",
        """CREATE TABLE events (run_id VARCHAR, ts DOUBLE, kind VARCHAR, message VARCHAR,
            host VARCHAR, phase VARCHAR, data VARCHAR)""",
        "CREATE TABLE logs (run_id VARCHAR, ts DOUBLE, host VARCHAR, stream VARCHAR, text VARCHAR)",
        f"""CREATE TABLE op_intervals (run_id VARCHAR, ts BIGINT, agent VARCHAR, host VARCHAR,
            phase VARCHAR, op VARCHAR, ops BIGINT, errors BIGINT, errors_by_class VARCHAR,
            late BIGINT, {_STATS})""",
        f"""CREATE TABLE op_second (run_id VARCHAR, ts BIGINT, phase VARCHAR, op VARCHAR,
            ops BIGINT, errors BIGINT, errors_by_class VARCHAR, late BIGINT, {_STATS}, {_HISTS})""",
        """CREATE TABLE node_samples (run_id VARCHAR, ts DOUBLE, host VARCHAR, cpu_pct DOUBLE,
            mem_used_bytes BIGINT, mem_total_bytes BIGINT, disk_read_bps DOUBLE,
            disk_write_bps DOUBLE, net_rx_bps DOUBLE, net_tx_bps DOUBLE)""",
        """CREATE TABLE agent_samples (run_id VARCHAR, ts DOUBLE, agent VARCHAR, host VARCHAR,
            cpu_pct DOUBLE, ops DOUBLE, state VARCHAR)""",
    ],
    # 2: rollups per minute and per phase, so long windows stay fast
    [
        f"""CREATE TABLE op_minute (run_id VARCHAR, ts BIGINT, phase VARCHAR, op VARCHAR,
            ops BIGINT, errors BIGINT, late BIGINT, {_STATS}, {_HISTS})""",
        f"""CREATE TABLE op_phase (run_id VARCHAR, phase VARCHAR, op VARCHAR, first_ts BIGINT,
            last_ts BIGINT, ops BIGINT, errors BIGINT, late BIGINT, {_STATS}, {_HISTS})""",
    ],
    # 3: who writes a run (with pid and hostname from 1): the process's start time and the
    # machine's boot id, so a reused pid or a reboot is not taken for a live orchestrator;
    # and a heartbeat, refreshed by every flush, for writers on other machines
    [
        "ALTER TABLE runs ADD COLUMN pid_started BIGINT",
        "ALTER TABLE runs ADD COLUMN boot_id VARCHAR",
        "ALTER TABLE runs ADD COLUMN heartbeat DOUBLE",
    ],
    # 4: the measured span of a phase's ops (phase_rate.py): the earliest intended start
    # and the latest completion among its interval lines (NULL: lines without a span)
    [
        "ALTER TABLE op_phase ADD COLUMN first_start DOUBLE",
        "ALTER TABLE op_phase ADD COLUMN last_done DOUBLE",
    ],
    # 5: the database's own figures of a node (an engine's ``node_stats`` hook, e.g.
    # a document store's server status), beside node_samples: long format, any engine, any figure
    [
        """CREATE TABLE node_stats (run_id VARCHAR, ts DOUBLE, host VARCHAR, engine VARCHAR,
            name VARCHAR, value DOUBLE)""",
    ],
    # 6: the open model's lateness (send - intended start, the lines' ``lateness_hist``)
    # per second, minute and phase: the scheduler's share of response time, kept apart
    [f"ALTER TABLE {table} ADD COLUMN {column}"
     for table in ("op_second", "op_minute", "op_phase")
     for column in ("lateness_p50_ms DOUBLE", "lateness_p99_ms DOUBLE", "lateness_hist BLOB")],
    # 7: a scenario's [[thresholds]] as each phase met or breached them (one row per
    # threshold and phase it applies to; live = found by the live check that aborts)
    [
        """CREATE TABLE threshold_results (run_id VARCHAR, ts DOUBLE, phase VARCHAR,
            op VARCHAR, metric VARCHAR, bound VARCHAR, threshold DOUBLE, measured DOUBLE,
            passed BOOLEAN, live BOOLEAN, target VARCHAR)""",
    ],
]
SCHEMA_VERSION = len(MIGRATIONS)
LATENESS_COLUMNS = "lateness_p50_ms, lateness_p99_ms"  # phase_summary's, from schema 6

VIEWS = {
    "op_seconds": """SELECT run_id, ts, phase, op, ops, errors, late, p50_ms, p90_ms, p99_ms,
        p999_ms, max_ms FROM op_second""",
    "node_seconds": """SELECT run_id, CAST(floor(ts) AS BIGINT) AS ts, host, cpu_pct,
        100.0 * mem_used_bytes / nullif(mem_total_bytes, 0) AS mem_pct, disk_read_bps,
        disk_write_bps, net_rx_bps, net_tx_bps FROM node_samples""",
    # one row per phase and op; ops_per_s is phase_rate.py's figure (the phase's ops
    # over its measured duration; every op of a phase over the phase's duration)
    "phase_summary": f"""WITH spans AS (
            SELECT o.*, min(first_start) OVER w AS span_start, max(last_done) OVER w AS span_end,
                min(first_ts) OVER w AS p_first_ts, max(last_ts) OVER w AS p_last_ts
            FROM op_phase o WINDOW w AS (PARTITION BY run_id, phase)),
        clocks AS (SELECT run_id AS clock_run, name AS clock_phase, min(started) AS clock_start,
            max(ended) AS clock_end FROM phases GROUP BY run_id, name)
        SELECT run_id, phase, op, ops, {SQL_OPS_PER_S} AS ops_per_s, p50_ms, p90_ms, p99_ms,
            p999_ms, max_ms, errors, first_ts,
            round({SQL_DURATION}, 3) AS duration_s, {LATENESS_COLUMNS}
        FROM spans LEFT JOIN clocks ON clock_run = run_id AND clock_phase = phase""",
    # one row per `search` phase: the rate found, its bracket, the target (search_sql.py)
    "search_result": SEARCH_RESULT_SQL,
}

# tables holding one run's rows (run id column name), in delete order
RUN_TABLES = {
    "op_intervals": "run_id",
    "op_second": "run_id",
    "op_minute": "run_id",
    "op_phase": "run_id",
    "node_samples": "run_id",
    "node_stats": "run_id",
    "threshold_results": "run_id",
    "agent_samples": "run_id",
    "events": "run_id",
    "logs": "run_id",
    "phases": "run_id",
    "runs": "id",
}


def current_version(con: duckdb.DuckDBPyConnection) -> int:
    tables = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
    if "schema_version" not in tables:
        return 0
    rows = con.execute("SELECT max(version) FROM schema_version").fetchall()
    return int(rows[0][0] or 0) if rows else 0


def migrate(con: duckdb.DuckDBPyConnection, target: int = SCHEMA_VERSION) -> int:
    """Apply the missing migrations up to `target` and (at the latest version) the views."""
    con.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER, applied DOUBLE)")
    version = current_version(con)
    if version > SCHEMA_VERSION:
        raise LoadtowerError(
            f"store schema version {version} is newer than this loadtower ({SCHEMA_VERSION})"
        )
    for number in range(version + 1, target + 1):
        con.execute("BEGIN")
        for statement in MIGRATIONS[number - 1]:
            con.execute(statement)
        con.execute("INSERT INTO schema_version VALUES (?, ?)", [number, time.time()])
        con.execute("COMMIT")
    if target == SCHEMA_VERSION:
        for name, body in VIEWS.items():
            con.execute(f"CREATE OR REPLACE VIEW {name} AS {body}")
    return target
