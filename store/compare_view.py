"""What the compare screen shows of two runs, read in one go: the figures per phase
and op (compare.compare_runs, as `loadtower compare` has them), each run's whole-run
snapshot (live_feed.snapshot, for the charts) and each run's ramp steps
(StoreReader.ramp_steps)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loadtower.store.compare import compare_runs
from loadtower.store.live_feed import Snapshot, snapshot
from loadtower.store.read_errors import read_errors
from loadtower.store.reader import StoreReader


@dataclass(frozen=True)
class CompareView:
    rows: list[dict[str, Any]]  # compare_runs: one per phase and op present in both
    snapshots: tuple[Snapshot, Snapshot]  # A's, B's (window 0: the whole run)
    steps: tuple[list[dict[str, Any]], list[dict[str, Any]]]  # A's, B's ramp steps


def ramp_steps(store: Path, run_id: str) -> list[dict[str, Any]]:
    """The run's ramp steps as the store reports them ([] for a run without a ramp)."""
    with read_errors(store):
        return StoreReader(store).ramp_steps(run_id)


def compare_view(store: Path, run_a: str, run_b: str) -> CompareView:
    """Both runs as the compare screen shows them. KeyError (the run id) when a run is
    not in the store; LoadtowerError when the store cannot be read."""
    with read_errors(store):
        rows = compare_runs(store, run_a, run_b)
        snaps = (snapshot(store, run_a, None, 0), snapshot(store, run_b, None, 0))
        steps = (ramp_steps(store, run_a), ramp_steps(store, run_b))
    return CompareView(rows, snaps, steps)
