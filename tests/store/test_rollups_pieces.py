"""The rollups read a flush's histogram texts a piece of the items at a time
(store/rollups.py JOIN_ITEMS: the whole flush's text, joined and then encoded, was held
twice over at once). Cut into pieces of a few items, a batch with bad, wrapped and
missing histograms across the cuts must give exactly what one piece gives."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
from hdrh.histogram import HdrHistogram

from loadtower.protocol.hdr_encoding import encode, new_hist
from loadtower.store import hdr
from loadtower.store import rollups as rollups_module
from loadtower.store.rollups import Rollups, level_rows


def _hist(rng: random.Random, n: int) -> HdrHistogram:
    hist = new_hist()
    for _ in range(n):
        hist.record_value(min(int(rng.lognormvariate(6, 2)) + 1, hdr.HIGHEST), rng.randint(1, 9))
    return hist


def _text(rng: random.Random) -> str:
    """A histogram's text: mostly the agents' form, sometimes hdrh's compressed form,
    wrapped by a newline (taken), cut short or not base64 at all (both left out)."""
    text = encode(_hist(rng, rng.randint(0, 300)))
    roll = rng.random()
    if roll < 0.05:
        return _hist(rng, 40).encode().decode()
    if roll < 0.08:
        return text[:30] + "\n" + text[30:]
    if roll < 0.10:
        return text[:50]
    if roll < 0.11:
        return "bm90IGEgaGlzdG9ncmFt"
    return text


def _batch(seed: int) -> list[tuple[str, dict[str, Any]]]:
    rng = random.Random(seed)
    batch = []
    for ts in range(1000, 1012):
        for agent in range(9):
            ops: dict[str, Any] = {}
            for op in ("read", "update", "scan", "insert"):
                sample: dict[str, Any] = {"ops": rng.randint(0, 500), "late": rng.randint(0, 3),
                                          "service_hist": _text(rng), "response_hist": _text(rng)}
                if rng.random() < 0.2:
                    sample["errors"] = {"Timeout": rng.randint(1, 4)}
                if op != "insert" and rng.random() < 0.8:  # the open model's ops
                    sample["lateness_hist"] = _text(rng)
                ops[op] = sample
            batch.append(("run", {"agent": f"a{agent}/0", "host": f"h{agent}", "ts": ts,
                                  "phase": "steady", "ops": ops}))
    return batch


def _ingest(monkeypatch: pytest.MonkeyPatch, piece: int,
            batches: list[list[tuple[str, dict[str, Any]]]]) -> tuple[Rollups, list[Any]]:
    monkeypatch.setattr(rollups_module, "JOIN_ITEMS", piece)
    rollups = Rollups()
    tables = [rollups.ingest(batch) for batch in batches]
    return rollups, [t.to_pydict() if t is not None else None for t in tables]


def test_pieces_of_a_few_items_give_what_one_piece_gives(monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    batches = [_batch(1), _batch(2)]
    whole, whole_tables = _ingest(monkeypatch, 10**6, batches)
    items = sum(len(line["ops"]) for batch in batches for _run, line in batch)
    assert items > 100 * 7  # many pieces of 7 below, cut inside lines and between them
    cut, cut_tables = _ingest(monkeypatch, 7, batches)
    said = [why for _run, why in whole.rejected]
    for kind in ("its service histogram is not HDR", "its response histogram is not HDR",
                 "its lateness histogram was left out"):  # bad ones left out and said
        assert any(kind in why for why in said), kind
    assert cut.rejected == whole.rejected
    assert cut_tables == whole_tables  # the per-agent rows, percentiles included
    for a, b in zip((whole.seconds, whole.minutes, whole.phases),
                    (cut.seconds, cut.minutes, cut.phases), strict=True):
        keys = sorted(a.accs, key=lambda k: (k[1] or 0, k[3]))
        assert sorted(b.accs, key=lambda k: (k[1] or 0, k[3])) == keys
        assert level_rows(a, keys).to_pydict() == level_rows(b, keys).to_pydict()
        rows_a = np.array([a.accs[k].row for k in keys])
        rows_b = np.array([b.accs[k].row for k in keys])
        assert np.array_equal(a.counts[rows_a], b.counts[rows_b])
        assert any(a.accs[k].lateness for k in keys)
