"""The writer never drops rows it took for a flush: a value the store cannot take is
repaired and reported (a bad_sample event naming table and column), and a flush that
fails puts back what it took."""

from __future__ import annotations

from pathlib import Path

import pytest

from loadtower.errors import LoadtowerError
from loadtower.store import StoreReader, StoreWriter
from tests.store.holders import holding

NEVER = 3600.0  # no background flush: the test flushes


def stored(path: Path, query: str) -> list[tuple]:
    return StoreReader(path).sql(query)[1]


def test_the_good_rows_of_a_poisoned_second_are_stored(tmp_path: Path) -> None:
    path = tmp_path / "s.duckdb"
    with StoreWriter(path, flush_every_s=NEVER) as writer:
        run_id = writer.start_run("r", "scn", "", "", {}, {}, {})
        # one second: a good event, an event whose text is not UTF-8, a node sample
        writer.event(run_id, 10.0, "info", "good event", host="db0")
        writer.event(run_id, 10.0, "info", "bad \udcff", host="db0")
        writer.add_node_sample(run_id, 10.0, "db0", 40.0, 1, 2, 0.0, 0.0, 0.0, 0.0)
        writer.log(run_id, 10.0, "db0", "stderr", "a log line")
        writer.flush()
    events = stored(path, "SELECT kind, message FROM events ORDER BY kind, message")
    assert ("info", "good event") in events
    assert ("info", "bad \\udcff") in events  # kept, the bad character spelled out
    reports = [m for k, m in events if k == "bad_sample"]
    assert len(reports) == 1 and reports[0].startswith("events.message: text that is not UTF-8")
    assert stored(path, "SELECT host, cpu_pct FROM node_samples") == [("db0", 40.0)]
    assert stored(path, "SELECT text FROM logs") == [("a log line",)]


def test_a_wrong_type_becomes_null_and_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "s.duckdb"
    with StoreWriter(path, flush_every_s=NEVER) as writer:
        run_id = writer.start_run("r", "scn", "", "", {}, {}, {})
        writer.add_node_sample(run_id, 10.0, "db0", 40.0, 1, 2, 0.0, 0.0, 0.0, 0.0)
        writer.add_node_sample(run_id, 10.0, "db1", "n/a", 1 << 70, 2, 0.0, 0.0, 0.0, 0.0)
        writer.add_agent_sample(run_id, 10.0, "a/0", "h\udcff", 5.0, 10.0, "running")
        writer.flush()
    rows = stored(path, "SELECT host, cpu_pct, mem_used_bytes FROM node_samples ORDER BY host")
    assert rows == [("db0", 40.0, 1), ("db1", None, None)]
    assert stored(path, "SELECT host FROM agent_samples") == [("h\\udcff",)]
    reports = sorted(m.split(":")[0] for (m,) in stored(
        path, "SELECT message FROM events WHERE kind = 'bad_sample'"))  # fmt: skip
    assert reports == ["agent_samples.host", "node_samples.cpu_pct", "node_samples.mem_used_bytes"]


def test_run_phase_and_interval_text_that_is_not_utf8(tmp_path: Path) -> None:
    from tests.store.synth import make_lines

    path = tmp_path / "s.duckdb"
    lines, _ = make_lines(seconds=2, agents=1, ops=("read",), per_second=5, phase="ph\udcff")
    with StoreWriter(path, flush_every_s=NEVER) as writer:
        run_id = writer.start_run("name \udcff", "scn", "", "", {}, {}, {})
        writer.phase_started(run_id, 0, "ph\udcff", "run", float(lines[0]["ts"]), {})
        for line in lines:
            writer.add_interval(run_id, line)
        writer.end_run(run_id, "failed", "reason \udcff")
    assert stored(path, "SELECT name, reason FROM runs") == [("name \\udcff", "reason \\udcff")]
    assert stored(path, "SELECT name FROM phases") == [("ph\\udcff",)]
    assert stored(path, "SELECT DISTINCT phase FROM op_intervals") == [("ph\\udcff",)]
    assert stored(path, "SELECT sum(ops) FROM op_seconds")[0][0] == sum(
        line["ops"]["read"]["ops"] for line in lines
    )


def test_a_failed_flush_puts_everything_back(tmp_path: Path) -> None:
    path = tmp_path / "s.duckdb"
    writer = StoreWriter(path, flush_every_s=NEVER, lock_wait_s=0.2)
    try:
        run_id = writer.start_run("r", "scn", "", "", {}, {}, {})
        writer.phase_started(run_id, 0, "load", "run", 10.0, {})
        writer.event(run_id, 10.0, "info", "during the lock")
        writer.add_node_sample(run_id, 10.0, "db0", 40.0, 1, 2, 0.0, 0.0, 0.0, 0.0)
        with holding(path) as holder:
            with pytest.raises(LoadtowerError) as failed:
                writer.flush()
            # the holder named: its pid and command line
            assert f"stayed locked for 0.2 s by pid {holder.pid} (" in str(failed.value)
            assert "lock-holder-for-test" in str(failed.value)
            writer.event(run_id, 11.0, "info", "after the failed flush")
        writer.flush()
    finally:
        writer.close()
    assert stored(path, "SELECT message FROM events ORDER BY ts") == [
        ("during the lock",), ("after the failed flush",)
    ]
    assert stored(path, "SELECT count(*) FROM node_samples") == [(1,)]
    assert stored(path, "SELECT name FROM phases") == [("load",)]


def test_a_statement_the_store_refuses_does_not_block_later_flushes(tmp_path: Path) -> None:
    path = tmp_path / "s.duckdb"
    with StoreWriter(path, flush_every_s=NEVER) as writer:
        run_id = writer.start_run("first", "scn", "", "", {}, {}, {}, run_id="dup")
        writer.event(run_id, 10.0, "info", "before")
        with pytest.raises(LoadtowerError, match="refused 1 statement"):
            writer.start_run("second", "scn", "", "", {}, {}, {}, run_id="dup")  # same id
        writer.phase_started(run_id, 0, "load", "run", 11.0, {})
        writer.event(run_id, 11.0, "info", "after")
        writer.flush()
    assert stored(path, "SELECT name FROM runs") == [("first",)]
    assert stored(path, "SELECT name FROM phases") == [("load",)]
    events = stored(path, "SELECT kind, message FROM events ORDER BY ts, kind")
    assert [m for k, m in events if k == "info"] == ["before", "after"]
    (report,) = [m for k, m in events if k == "bad_sample"]
    assert report.startswith("runs: statement refused: ") and "Duplicate key" in report


def test_repaired_line_finds_a_bad_string_wherever_it_sits() -> None:
    """The one-pass check (json's encoder) and the walk agree: a clean line comes back as
    the same object; a lone surrogate in a key, a nested list or a value is spelled out
    and reported; a value json cannot write (bytes) leaves the decision to the walk."""
    from loadtower.store.writer_values import repaired_line

    clean = {"ts": 1, "agent": "a/0", "ops": {"read": {"ops": 3, "errors": {"Timeout": 1}}}}
    assert repaired_line(clean) == (clean, [])
    assert repaired_line(clean)[0] is clean
    for line in ({"ops": {"re\udcffad": {"ops": 1}}},
                 {"tags": ["ok", ["deep \udcff"]]},
                 {"host": "h\ud800"}):  # fmt: skip
        fixed, bad = repaired_line(line)
        assert len(bad) == 1 and "not UTF-8" in bad[0], bad
        assert "\\ud" in str(fixed) and fixed is not line
    with_bytes = {"raw": b"\xff", "host": "ok"}
    assert repaired_line(with_bytes) == (with_bytes, [])
