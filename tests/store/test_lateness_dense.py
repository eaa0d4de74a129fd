"""The rollups' lateness is a kind of their dense count rows (issue 28): its stored
p50/p99 and ``lateness_hist`` counts are what hdrh gives for the merged lateness
histograms (what the store computed with hdrh before), on random histograms; a key no
lateness came to stores NULL; a late line merges with the stored lateness."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
from hdrh.histogram import HdrHistogram

from loadtower.protocol.hdr_encoding import encode, new_hist
from loadtower.store import StoreWriter, hdr
from loadtower.store.rollups import Rollups, level_rows


def _hist(rng: random.Random, n: int) -> HdrHistogram:
    hist = new_hist()
    for _ in range(n):  # microseconds to many seconds, a long tail
        hist.record_value(min(int(rng.lognormvariate(5, 2.5)) + 1, hdr.HIGHEST),
                          rng.choice([1, 1, 1, 7, 300]))  # fmt: skip
    return hist


def _dense(hist: HdrHistogram) -> np.ndarray:
    return hdr.counts_view(hist)[: hdr.COUNTS_LEN].astype(np.int64)


def _stored_dense(blob: bytes) -> np.ndarray:
    index, count = hdr.sparse_counts([blob], b64=False)[0]
    out = np.zeros(hdr.COUNTS_LEN, np.int64)
    out[index] = count
    return out


def _sample(resp: str, lateness: str | None) -> dict[str, Any]:
    sample: dict[str, Any] = {"ops": 3, "errors": {}, "late": 0,
                              "service_hist": resp, "response_hist": resp}  # fmt: skip
    if lateness is not None:
        sample["lateness_hist"] = lateness
    return sample


def _check(table: dict[str, list[Any]], keys: list[tuple[Any, ...]],
           want: dict[tuple[Any, ...], HdrHistogram]) -> None:
    for j, key in enumerate(keys):
        got = [table[c][j] for c in ("lateness_p50_ms", "lateness_p99_ms", "lateness_hist")]
        hist = want.get(key)
        if hist is None:
            assert got == [None, None, None], key
            continue
        assert got[0] == hist.get_value_at_percentile(50.0) / 1000.0, key
        assert got[1] == hist.get_value_at_percentile(99.0) / 1000.0, key
        assert np.array_equal(_stored_dense(got[2]), _dense(hist)), key


def test_lateness_figures_equal_hdrh_on_random_histograms() -> None:
    rng = random.Random(28)
    resp = new_hist()
    resp.record_value(900)
    resp_text = encode(resp)
    rollups = Rollups()
    want: dict[str, dict[tuple[Any, ...], HdrHistogram]] = {
        "op_second": {}, "op_minute": {}, "op_phase": {}}
    batch: list[tuple[str, dict[str, Any]]] = []
    for ts in range(100, 190, 3):  # two minutes
        for agent in ("a1/0", "a2/0", "a3/0"):
            ops: dict[str, Any] = {}
            for op in ("read", "write", "scan", "closed", "idle"):
                roll = rng.random()
                if op == "closed" or (op == "scan" and ts < 150) or roll < 0.15:
                    ops[op] = _sample(resp_text, None)  # no lateness in this line
                    continue
                empty = op == "idle" or roll < 0.2  # an open-model op with no lateness sent
                hist = _hist(rng, 0 if empty else rng.randint(1, 400))
                text = encode(hist)
                if roll > 0.9:  # hdrh's compressed form: converted, not taken as is
                    text = hist.encode().decode()
                ops[op] = _sample(resp_text, text)
                for level, key in (("op_second", ("r", ts, "run", op)),
                                   ("op_minute", ("r", ts - ts % 60, "run", op)),
                                   ("op_phase", ("r", None, "run", op))):  # fmt: skip
                    merged = want[level].setdefault(key, new_hist())
                    merged.add(hist)
            batch.append(("r", {"agent": agent, "host": "h", "ts": ts, "phase": "run", "ops": ops}))
        if len(batch) > 20:  # several flushes' worth: keys merge across ingests
            rollups.ingest(batch)
            batch = []
    rollups.ingest(batch)
    assert rollups.rejected == []
    for level in (rollups.seconds, rollups.minutes, rollups.phases):
        keys = sorted(level.accs, key=lambda k: (k[0], k[1] or 0, k[2], k[3]))
        table = level_rows(level, keys).to_pydict()
        _check(table, keys, want[level.name])
        assert any(want[level.name].get(k) is None for k in keys)  # NULLs were checked
    # only empty lateness histograms came: stored, its percentiles 0 (hdrh's)
    assert all(want["op_second"][k].get_total_count() == 0
               for k in want["op_second"] if k[3] == "idle")


def test_a_bad_lateness_histogram_is_left_out_its_neighbours_kept() -> None:
    rng = random.Random(5)
    good, other = _hist(rng, 50), _hist(rng, 80)
    resp = encode(good)
    text = encode(other)
    wrapped = text[:40] + "\n" + text[40:]  # binascii reads past the newline: taken
    truncated = encode(good)[:60]
    ops = {"read": _sample(resp, encode(good)), "write": _sample(resp, truncated),
           "scan": _sample(resp, "bm90IGEgaGlzdG9ncmFt"), "other": _sample(resp, wrapped)}
    rollups = Rollups()
    rollups.ingest([("r", {"agent": "a", "ts": 7, "phase": "run", "ops": ops})])
    said = [why for _run, why in rollups.rejected]
    assert len(said) == 2 and all("its lateness histogram was left out: " in w for w in said)
    keys = [("r", 7, "run", op) for op in ("read", "write", "scan", "other")]
    table = level_rows(rollups.seconds, keys).to_pydict()
    _check(table, keys, {keys[0]: good, keys[3]: other})
    assert table["ops"] == [3, 3, 3, 3]


def test_a_late_line_merges_with_the_stored_lateness(tmp_path: Path) -> None:
    """A line for a second already evicted from memory adds to the stored row: lateness
    too, and a stored NULL lateness stays NULL when the late line has none."""
    rng = random.Random(9)
    resp = new_hist()
    resp.record_value(900)
    stored, late = _hist(rng, 200), _hist(rng, 100)

    def line(ts: int, ops: dict[str, Any]) -> dict[str, Any]:
        return {"type": "interval", "agent": "a1/0", "host": "h", "ts": ts, "phase": "run",
                "cpu_pct": 1.0, "ops": ops}

    path = tmp_path / "late.duckdb"
    with StoreWriter(path, flush_every_s=3600) as writer:
        run_id = writer.start_run("late", "scn", "", "", {}, {}, {})
        writer.add_interval(run_id, line(100, {"read": _sample(encode(resp), encode(stored)),
                                               "write": _sample(encode(resp), None),
                                               "scan": _sample(encode(resp), None)}))
        writer.flush()
        writer.add_interval(run_id, line(120, {"read": _sample(encode(resp), None)}))
        writer.flush()  # second 100 is evicted now
        writer.add_interval(run_id, line(100, {"read": _sample(encode(resp), encode(late)),
                                               "write": _sample(encode(resp), encode(late)),
                                               "scan": _sample(encode(resp), None)}))
        writer.end_run(run_id, "completed", None)
    con = duckdb.connect(str(path), read_only=True)
    try:
        found = con.execute("SELECT op, ops, lateness_p50_ms, lateness_p99_ms, lateness_hist "
                            "FROM op_second WHERE ts = 100 ORDER BY op").fetchall()
    finally:
        con.close()
    merged = new_hist()
    merged.add(stored)
    merged.add(late)
    table = {"lateness_p50_ms": [r[2] for r in found], "lateness_p99_ms": [r[3] for r in found],
             "lateness_hist": [r[4] for r in found]}
    assert [(r[0], r[1]) for r in found] == [("read", 6), ("scan", 6), ("write", 6)]
    keys = [("read",), ("scan",), ("write",)]
    _check(table, keys, {("read",): merged, ("write",): late})
