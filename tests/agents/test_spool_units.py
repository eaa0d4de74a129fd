"""The agent spool: numbered lines on disk, incremental reads, the process watcher."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

from loadtower.agents.spool import SeenSeqs, Spool, parse_read, read, spool_dir


def _read(directory: Path, offsets: dict[str, int]) -> list[tuple[str, int, dict | None]]:
    out = io.StringIO()
    read(str(directory), offsets, out)
    return list(parse_read(out.getvalue()))


def test_lines_are_numbered_written_and_read_from_an_offset(tmp_path: Path) -> None:
    spool = Spool(tmp_path, 0, "agent1/0")
    spool.number({"type": "interval", "ts": 100, "ops": {}})
    spool.number({"type": "configured"})  # control lines are not spooled
    spool.number({"type": "event", "kind": "warning", "ts": 100.5, "message": "m"})
    first = _read(tmp_path, {})
    lines = [line for _f, _e, line in first if line is not None]
    assert [(x["type"], x["seq"], x["agent"]) for x in lines] == [
        ("interval", 1, "agent1/0"),
        ("event", 2, "agent1/0"),
    ]
    end = first[0][1]
    assert end == (tmp_path / "0.jsonl").stat().st_size
    spool.number({"type": "interval", "ts": 101, "ops": {}})
    again = [line for _f, _e, line in _read(tmp_path, {"0.jsonl": end}) if line is not None]
    assert [x["seq"] for x in again] == [3]
    spool.exited("stopped by the master")
    spool.close()
    assert json.loads((tmp_path / "0.exit").read_text())["reason"] == "stopped by the master"
    assert json.loads((tmp_path / "0.pid").read_text())["agent"] == "agent1/0"


def test_a_line_being_written_is_left_for_the_next_read(tmp_path: Path) -> None:
    (tmp_path / "3.jsonl").write_text('{"type":"interval","seq":1,"ts":5}\n{"type":"inter')
    rows = _read(tmp_path, {})
    assert rows[0] == ("3.jsonl", 35, None)
    assert [line["seq"] for _f, _e, line in rows if line] == [1]


def test_reading_a_missing_spool_gives_nothing(tmp_path: Path) -> None:
    assert _read(tmp_path / "absent", {}) == []


def test_spool_dir_names_are_safe() -> None:
    assert spool_dir("20250101-000000-abcd", "rack 1/agent") == (
        "/tmp/loadtower-spool/20250101-000000-abcd/rack_1_agent"
    )


def test_seen_seqs_reports_each_line_once_in_any_order() -> None:
    seen = SeenSeqs()
    assert [seen.add("a", n) for n in (1, 3, 2, 3, 1)] == [True, True, True, False, False]
    assert seen.floor["a"] == 3 and seen.above["a"] == set()
    assert seen.add("b", 1) and seen.count("a") == 3 and seen.count("b") == 1


def _watch_lines(proc: subprocess.Popen, until: str, limit: int = 200) -> list[dict]:
    assert proc.stdout is not None
    lines = []
    for _ in range(limit):  # ticks come once a second; the pytest timeout bounds the wait
        raw = proc.stdout.readline()
        if not raw:
            break
        line = json.loads(raw)
        lines.append(line)
        if line["type"] == until:
            break
    return lines


def test_watcher_reports_a_killed_worker_and_one_that_left_an_exit_record(tmp_path: Path) -> None:
    victims = [subprocess.Popen(["sleep", "300"]) for _ in range(2)]
    watcher = subprocess.Popen(
        [sys.executable, "-m", "loadtower.agents.spool", "watch", str(tmp_path)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        for index, victim in enumerate(victims):
            info = {"pid": victim.pid, "agent": f"a/{index}"}
            (tmp_path / f"{index}.pid").write_text(json.dumps(info))
        (tmp_path / "1.exit").write_text(json.dumps({"reason": "stopped its load by itself"}))
        seen = _watch_lines(watcher, "alive") + _watch_lines(watcher, "alive")
        assert {x["agent"] for x in seen if x["type"] == "alive"} == {"a/0", "a/1"}
        for victim in victims:
            victim.kill()  # not reaped yet: a zombie counts as gone
        gone = _watch_lines(watcher, "gone") + _watch_lines(watcher, "gone")
        reasons = {x["agent"]: x["reason"] for x in gone if x["type"] == "gone"}
        assert reasons == {
            "a/0": "killed or crashed (it left no exit record)",
            "a/1": "stopped its load by itself",
        }
    finally:
        watcher.kill()
        watcher.wait(timeout=10)
        for victim in victims:
            if victim.poll() is None:
                victim.kill()
                victim.wait(timeout=10)


def test_lines_the_reader_has_are_skipped_and_a_periodic_read_stops_at_recent_ones(
    tmp_path: Path,
) -> None:
    spool = Spool(tmp_path, 0, "agent1/0")
    for ts in (10, 11, 12, 13):
        spool.number({"type": "interval", "ts": ts, "ops": {}})
    spool.close()
    size = (tmp_path / "0.jsonl").stat().st_size

    def run(**opts: object) -> tuple[int, list[int]]:
        out = io.StringIO()
        read(str(tmp_path), {}, out, **opts)  # type: ignore[arg-type]
        rows = list(parse_read(out.getvalue()))
        return rows[0][1], [line["seq"] for _f, _e, line in rows if line]

    assert run() == (size, [1, 2, 3, 4])
    assert run(floors={"0.jsonl": 2}) == (size, [3, 4])
    end, seqs = run(floors={"0.jsonl": 1}, before=12)  # seq 3 (second 12) may be in flight
    assert seqs == [2] and 0 < end < size
    assert run(floors={"0.jsonl": 3}, before=12) == (size - len(_last_line(tmp_path)), [])


def _last_line(directory: Path) -> bytes:
    return (directory / "0.jsonl").read_bytes().splitlines(keepends=True)[-1]


def test_the_spool_root_is_shared_like_tmp(tmp_path: Path) -> None:
    import stat

    from loadtower.agents.spool import shared_root

    root = tmp_path / "spool"
    root.mkdir(mode=0o755)  # as an older loadtower made it, under the umask
    shared_root(root)
    assert stat.S_IMODE(root.stat().st_mode) == 0o1777
    fresh = tmp_path / "fresh"
    shared_root(fresh)
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o1777
